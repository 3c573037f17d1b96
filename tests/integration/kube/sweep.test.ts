// The cleanup sweep: every runner Job (by label) and every runner pod (job-name prefix) across namespaces, nothing else.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { freshNamespace, testControlPlane } from "../../support/kube";
import { harness } from "./helpers";

function job(name: string, labels: Record<string, string>): k8s.V1Job {
  return {
    metadata: { name, labels },
    spec: { backoffLimit: 0, template: { metadata: { labels }, spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
  };
}

function pod(name: string, labels: Record<string, string>): k8s.V1Pod {
  return { metadata: { name, labels }, spec: { containers: [{ name: "c", image: "busybox" }] } };
}

describe("integration: kube port — cleanup sweep", function () {
  this.timeout(120000);

  it("deletes every runner Job and runner pod in all namespaces and leaves everything else", async () => {
    const h = await harness();
    const cp = await testControlPlane();
    const [a, b] = [await freshNamespace(cp, "sweep"), await freshNamespace(cp, "sweep")];
    const runner = { "app.kubernetes.io/name": "talos-gate-healthcheck" };
    await h.batch.createNamespacedJob({ namespace: a, body: job("talos-gate-cluster-x-one", runner) });
    await h.batch.createNamespacedJob({ namespace: b, body: job("talos-gate-cluster-x-two", runner) });
    await h.batch.createNamespacedJob({ namespace: a, body: job("unrelated", { app: "other" }) });
    // Pods of runner Jobs (one whose Job is already gone, one without the runner label) and an unrelated Job's pod.
    await h.core.createNamespacedPod({ namespace: a, body: pod("orphan-runner", { "batch.kubernetes.io/job-name": "talos-gate-cluster-x-gone" }) });
    await h.core.createNamespacedPod({ namespace: b, body: pod("runner-pod", { "batch.kubernetes.io/job-name": "talos-gate-cluster-x-two", ...runner }) });
    await h.core.createNamespacedPod({ namespace: a, body: pod("other-pod", { "batch.kubernetes.io/job-name": "unrelated" }) });

    const counts = await h.kube.sweepRunners();
    assert.ok(counts.jobs >= 2, `jobs deleted: ${counts.jobs}`);
    assert.ok(counts.pods >= 2, `pods deleted: ${counts.pods}`);

    const jobs = (await h.batch.listJobForAllNamespaces({ labelSelector: "app.kubernetes.io/name=talos-gate-healthcheck" })).items;
    assert.deepEqual(jobs.map((j) => j.metadata?.name), [], "no runner Job left");
    const pods = (await h.core.listPodForAllNamespaces({ labelSelector: "batch.kubernetes.io/job-name" })).items
      .filter((p) => p.metadata?.labels?.["batch.kubernetes.io/job-name"]?.startsWith("talos-gate-"));
    assert.deepEqual(pods.map((p) => p.metadata?.name), [], "no runner pod left");
    await h.batch.readNamespacedJob({ name: "unrelated", namespace: a });
    await h.core.readNamespacedPod({ name: "other-pod", namespace: a });

    assert.deepEqual(await h.kube.sweepRunners(), { jobs: 0, pods: 0 }, "a second sweep finds nothing");
  });
});
