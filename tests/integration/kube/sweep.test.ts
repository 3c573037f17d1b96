// The cleanup sweep: runner Jobs and their pods across namespaces, by talos-gate's own labels (with a scope: this
// cluster's and this rollout's owner), nothing else — not a pod someone named `talos-gate-…`.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { freshNamespace, kubeConfigOf, serviceAccountKubeconfig, testControlPlane } from "../../support/kube";
import { createKubeApi, jobBody } from "../../../provider/kube";
import { onFileEnd } from "../../support/fixtures";
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
    // Runner pods (one whose Job is already gone), someone's pod named like a runner's, and an unrelated Job's pod.
    await h.core.createNamespacedPod({ namespace: a, body: pod("orphan-runner", { "batch.kubernetes.io/job-name": "talos-gate-cluster-x-gone", ...runner }) });
    await h.core.createNamespacedPod({ namespace: b, body: pod("runner-pod", { "batch.kubernetes.io/job-name": "talos-gate-cluster-x-two", ...runner }) });
    await h.core.createNamespacedPod({ namespace: a, body: pod("lookalike", { "batch.kubernetes.io/job-name": "talos-gate-backup" }) });
    await h.core.createNamespacedPod({ namespace: a, body: pod("other-pod", { "batch.kubernetes.io/job-name": "unrelated" }) });

    const counts = await h.kube.sweepRunners();
    assert.ok(counts.jobs >= 2, `jobs deleted: ${counts.jobs}`);
    assert.ok(counts.pods >= 2, `pods deleted: ${counts.pods}`);

    const jobs = (await h.batch.listJobForAllNamespaces({ labelSelector: "app.kubernetes.io/name=talos-gate-healthcheck" })).items;
    assert.deepEqual(jobs.map((j) => j.metadata?.name), [], "no runner Job left");
    const pods = (await h.core.listPodForAllNamespaces({ labelSelector: "app.kubernetes.io/name=talos-gate-healthcheck" })).items
      .filter((p) => !p.metadata?.deletionTimestamp);
    assert.deepEqual(pods.map((p) => p.metadata?.name), [], "no runner pod left");
    await h.batch.readNamespacedJob({ name: "unrelated", namespace: a });
    await h.core.readNamespacedPod({ name: "other-pod", namespace: a });
    const lookalike = await h.core.readNamespacedPod({ name: "lookalike", namespace: a });
    assert.equal(lookalike.metadata?.deletionTimestamp, undefined, "a pod merely named like a runner's is not talos-gate's");

    assert.deepEqual(await h.kube.sweepRunners(), { jobs: 0, pods: 0 }, "a second sweep finds nothing");
  });

  it("a rollout's sweep takes only its own cluster's and owner's runner Jobs and pods", async () => {
    const h = await harness();
    const cp = await testControlPlane();
    const ns = await freshNamespace(cp, "sweep");
    const holder = "pulumi:org/stack/talos";
    const scoped = createKubeApi(cp.kubeconfig, { runnerScope: { cluster: "prod", owner: holder } });
    onFileEnd(() => scoped.close());
    // This rollout's Job, as its runner labels it (jobBody), and another pipeline's runner Job of the same cluster.
    const ownLabels = { "app.kubernetes.io/name": "talos-gate-healthcheck", "talos-gate.dev/cluster": "prod" };
    const ours = jobBody(
      { id: "cluster-prod-a", jobName: "talos-gate-cluster-prod-a", namespace: ns, configHash: "h", intervalMs: 30000, job: job("x", {}) as any },
      "nonce", { cluster: "prod", owner: holder });
    await h.batch.createNamespacedJob({ namespace: ns, body: ours as k8s.V1Job });
    await h.batch.createNamespacedJob({ namespace: ns, body: job("talos-gate-cluster-prod-b", { ...ownLabels, "talos-gate.dev/owner": "someone-else" }) });
    await h.batch.createNamespacedJob({ namespace: ns, body: job("talos-gate-cluster-staging-c", { "app.kubernetes.io/name": "talos-gate-healthcheck", "talos-gate.dev/cluster": "staging" }) });

    const counts = await scoped.sweepRunners();
    assert.equal(counts.jobs, 1);
    const left = (await h.batch.listNamespacedJob({ namespace: ns })).items.filter((j) => !j.metadata?.deletionTimestamp).map((j) => j.metadata?.name).sort();
    assert.deepEqual(left, ["talos-gate-cluster-prod-b", "talos-gate-cluster-staging-c"]);
  });

  it("a runner Job the credentials may not delete is a warning naming it; the sweep still removes what it may", async () => {
    const h = await harness();
    const cp = await testControlPlane();
    const ns = await freshNamespace(cp, "sweep");
    const cluster = `sweep-${process.pid}-${Date.now().toString(36)}`;
    // The pipeline may list runner Jobs and pods and delete pods, but not delete Jobs (an RBAC mistake).
    const kubeconfig = await serviceAccountKubeconfig(cp, ns, "pipeline");
    const rbac = kubeConfigOf(cp).makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: ns }, rules: [
      { apiGroups: ["batch"], resources: ["jobs"], verbs: ["list"] },
      { apiGroups: [""], resources: ["pods"], verbs: ["list", "delete"] },
    ] } });
    await rbac.createClusterRoleBinding({ body: {
      metadata: { name: ns }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: ns },
      subjects: [{ kind: "ServiceAccount", name: "pipeline", namespace: ns }],
    } });
    onFileEnd(async () => {
      await rbac.deleteClusterRoleBinding({ name: ns }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: ns }).catch(() => undefined);
    });
    const labels = { "app.kubernetes.io/name": "talos-gate-healthcheck", "talos-gate.dev/cluster": cluster };
    // Suspended: the Job controller starts no pod of its own, so the one runner pod is the test's.
    const suspended = job(`talos-gate-cluster-${cluster}-a`, labels);
    suspended.spec!.suspend = true;
    await h.batch.createNamespacedJob({ namespace: ns, body: suspended });
    await h.core.createNamespacedPod({ namespace: ns, body: pod("runner-pod", { "batch.kubernetes.io/job-name": `talos-gate-cluster-${cluster}-a`, ...labels }) });
    const logs: string[] = [];
    const pipeline = createKubeApi(kubeconfig, { runnerScope: { cluster }, log: (l) => logs.push(l) });
    onFileEnd(() => pipeline.close());

    assert.deepEqual(await pipeline.sweepRunners(), { jobs: 0, pods: 1 });
    assert.equal(logs.length, 1, logs.join("\n"));
    assert.match(logs[0]!, new RegExp(`^cleanup of healthcheck runners: deleting Job ${ns}/talos-gate-cluster-${cluster}-a failed: .*forbidden`, "i"));
    await h.batch.readNamespacedJob({ name: `talos-gate-cluster-${cluster}-a`, namespace: ns });
  });
});
