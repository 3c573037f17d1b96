// The runner end to end on the simulated cluster (sim/kube): the sim's Job controller creates the pods, its kubelet
// runs the check as a local process and writes the termination message (FallbackToLogsOnError → log tail), and the
// runner sees the outcome by watch. Own control plane: the sim's controllers act on every Job of their cluster.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { createKubeApi, KubeClient } from "../../../provider/kube";
import type { HealthcheckJob } from "../../../provider/rollout/ports";
import { ControlPlane, startControlPlane } from "../../../sim/controlplane";
import { KubeSim, startKubeSim, WORKLOAD_NAMESPACE, WORKLOAD_RS } from "../../../sim/kube";
import { healthcheck } from "./helpers";

function withScript(check: HealthcheckJob, script: string): HealthcheckJob {
  const job = JSON.parse(JSON.stringify(check.job));
  job.spec.template.spec.containers[0].command = ["sh", "-c", script];
  return { ...check, job };
}

describe("integration: kube port — runner and drain on the simulated cluster", function () {
  this.timeout(180000);
  let cp: ControlPlane;
  let sim: KubeSim;
  let kube: KubeClient;

  before(async () => {
    cp = await startControlPlane();
    sim = await startKubeSim({
      kubeconfig: cp.kubeconfig,
      machines: [
        { name: "cp-1", role: "controlplane", address: "10.5.0.2", talosVersion: "v1.12.4" },
        { name: "worker-1", role: "worker", address: "10.5.0.3", talosVersion: "v1.12.4" },
        { name: "worker-2", role: "worker", address: "10.5.0.4", talosVersion: "v1.12.4" },
      ],
      workloadPodsPerNode: 1,
      daemonSetPods: true,
    });
    kube = createKubeApi(cp.kubeconfig);
  });

  after(async () => {
    await kube?.close();
    await sim?.stop();
    await cp?.stop();
  });

  it("reads the sim's machines", async () => {
    const machines = await kube.listMachines();
    assert.deepEqual(machines.map((m) => [m.name, m.role, m.address, m.talosVersion, m.machineSet]), [
      ["cp-1", "controlplane", "10.5.0.2", "v1.12.4", "control-planes"],
      ["worker-1", "worker", "10.5.0.3", "v1.12.4", "workers"],
      ["worker-2", "worker", "10.5.0.4", "v1.12.4", "workers"],
    ]);
  });

  it("a check whose process exits 0 passes, and nothing is left behind", async () => {
    const check = withScript(healthcheck("default", "sim-pass"), "echo checking; exit 0");
    assert.deepEqual(await kube.runCheck(check, { signal: AbortSignal.timeout(60000) }), { state: "passed" });
    assert.deepEqual(await kube.sweepRunners(), { jobs: 0, pods: 0 });
  });

  it("a check whose process fails reports its stderr (FallbackToLogsOnError) as the reason", async () => {
    const check = withScript(healthcheck("default", "sim-fail"), "echo 'ceph is not healthy, holding upgrade: HEALTH_WARN' >&2; exit 1");
    const outcome = await kube.runCheck(check, { signal: AbortSignal.timeout(60000) });
    assert.deepEqual(outcome, { state: "failed", reason: "ceph is not healthy, holding upgrade: HEALTH_WARN" });
  });

  it("a check writing its termination-log file reports that text", async () => {
    const check = withScript(healthcheck("default", "sim-msg"),
      'echo noise; printf "quorum lost: 2 of 3 monitors down" > "${TERMINATION_MESSAGE_PATH:-/dev/termination-log}"; exit 3');
    const outcome = await kube.runCheck(check, { signal: AbortSignal.timeout(60000) });
    assert.deepEqual(outcome, { state: "failed", reason: "quorum lost: 2 of 3 monitors down" });
  });

  it("drains a node: blocked while the disruption controller's budget allows nothing, then done; DaemonSet pod stays", async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(cp.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const policy = kc.makeApiClient(k8s.PolicyV1Api);
    const onNode = async (node: string) =>
      (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items
        .filter((p) => !p.metadata?.deletionTimestamp)
        .map((p) => p.metadata?.ownerReferences?.[0]?.kind ?? "none").sort();
    assert.deepEqual(await onNode("worker-1"), ["DaemonSet", "ReplicaSet"]);
    await policy.createNamespacedPodDisruptionBudget({
      namespace: WORKLOAD_NAMESPACE,
      body: { metadata: { name: "keep-all" }, spec: { maxUnavailable: 0, selector: { matchLabels: { "app.kubernetes.io/name": WORKLOAD_RS } } } },
    });
    await assert.rejects(kube.drain("worker-1", { timeoutMs: 3000, owner: "test" }), (err: Error) => {
      assert.match(err.message, new RegExp(`PodDisruptionBudget ${WORKLOAD_NAMESPACE}/keep-all`));
      return true;
    });
    await policy.deleteNamespacedPodDisruptionBudget({ name: "keep-all", namespace: WORKLOAD_NAMESPACE });
    await kube.drain("worker-1", { timeoutMs: 60000, owner: "test" });
    assert.deepEqual(await onNode("worker-1"), ["DaemonSet"]);
    assert.equal((await kube.listMachines()).find((m) => m.name === "worker-1")?.cordoned, true);
    await kube.uncordon("worker-1", "test");
  });
});
