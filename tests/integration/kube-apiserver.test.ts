// The harness gives a real API server: Jobs are validated, stored and read back through @kubernetes/client-node,
// and Job status follows the 1.32+ rules (a fake would accept anything).
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { freshNamespace, kubeConfigOf, testControlPlane } from "../support/kube";

describe("integration: real kube-apiserver harness", function () {
  this.timeout(120000);

  it("creates and reads a Job through @kubernetes/client-node", async () => {
    const cp = await testControlPlane();
    const kc = kubeConfigOf(cp);
    const version = await kc.makeApiClient(k8s.VersionApi).getCode();
    process.stdout.write(`      kube-apiserver ${version.gitVersion}\n`);
    assert.match(version.gitVersion, /^v1\.\d+\.\d+/);

    const ns = await freshNamespace(cp, "smoke");
    const batch = kc.makeApiClient(k8s.BatchV1Api);
    await batch.createNamespacedJob({
      namespace: ns,
      body: {
        metadata: { name: "hello" },
        spec: {
          backoffLimit: 0,
          template: { spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox", command: ["true"] }] } },
        },
      },
    });
    const job = await batch.readNamespacedJob({ name: "hello", namespace: ns });
    assert.equal(job.metadata?.name, "hello");
    assert.equal(job.spec?.template.spec?.containers[0].image, "busybox");

    // The API server enforces Job status rules: Complete without SuccessCriteriaMet is refused. (A merge patch without
    // resourceVersion: the real Job controller updates this Job's status concurrently.)
    await assert.rejects(
      batch.patchNamespacedJobStatus({
        name: "hello", namespace: ns,
        body: { status: { conditions: [{ type: "Complete", status: "True" }] } },
      }, k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch)),
      (err: unknown) => /SuccessCriteriaMet|completionTime|startTime/.test(String((err as { body?: string }).body ?? err)),
    );
  });

  it("rejects an invalid Job with the API server's validation message", async () => {
    const cp = await testControlPlane();
    const ns = await freshNamespace(cp, "smoke");
    const batch = kubeConfigOf(cp).makeApiClient(k8s.BatchV1Api);
    await assert.rejects(
      batch.createNamespacedJob({ namespace: ns, body: { metadata: { name: "Bad_Name" }, spec: { template: { spec: { containers: [] } } } } }),
      (err: unknown) => /Invalid value|must consist of lower case/.test(String((err as { body?: string }).body ?? err)),
    );
  });
});
