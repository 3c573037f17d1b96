// The runner end to end on the simulated cluster: the real Job controller creates the pods, the real scheduler binds
// them, the kubelet emulator runs the check as a local process and writes the termination message
// (FallbackToLogsOnError → log tail), and the runner sees the outcome by watch. Own control plane and nodes, so the
// drain sees only this cluster's workload pods.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { createKubeApi, KubeClient } from "../../../provider/kube";
import type { ControlPlane } from "../../../sim/controlplane";
import { freshControlPlane } from "../../support/controlPlanes";
import { KubeSim, startKubeSim, WORKLOAD_NAMESPACE, WORKLOAD_RS } from "../../../sim/kube";
import { eventually } from "../../support/kube";
import { healthcheck, tracked } from "./helpers";

const UNPULLABLE = "registry.example.com/private/check:1";

describe("integration: kube port — runner and drain on the simulated cluster", function () {
  this.timeout(180000);
  let cp: ControlPlane;
  let sim: KubeSim;
  let kube: KubeClient;

  before(async () => {
    cp = await freshControlPlane();
    sim = await startKubeSim({
      kubeconfig: cp.kubeconfig,
      machines: [
        { name: "cp-1", role: "controlplane", address: "10.5.0.2", talosVersion: "v1.12.4" },
        { name: "worker-1", role: "worker", address: "10.5.0.3", talosVersion: "v1.12.4" },
        { name: "worker-2", role: "worker", address: "10.5.0.4", talosVersion: "v1.12.4" },
      ],
      workloadPodsPerNode: 1,
      daemonSetPods: true,
      unpullableImages: [UNPULLABLE],
      imagePullBackoffMs: 300,
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
    const check = healthcheck("default", "sim-pass", "echo checking; exit 0");
    assert.deepEqual(await kube.runCheck(check, { signal: AbortSignal.timeout(60000) }), { state: "passed" });
    assert.deepEqual(await kube.sweepRunners(), { jobs: 0, pods: 0 });
  });

  it("a check whose process fails reports its stderr (FallbackToLogsOnError) as the reason", async () => {
    const check = healthcheck("default", "sim-fail", "echo 'ceph is not healthy, holding upgrade: HEALTH_WARN' >&2; exit 1");
    const outcome = await kube.runCheck(check, { signal: AbortSignal.timeout(60000) });
    assert.deepEqual(outcome, { state: "failed", reason: "ceph is not healthy, holding upgrade: HEALTH_WARN" });
  });

  it("a check writing its termination-log file reports that text", async () => {
    const check = healthcheck("default", "sim-msg",
      'echo noise; printf "quorum lost: 2 of 3 monitors down" > "${TERMINATION_MESSAGE_PATH:-/dev/termination-log}"; exit 3');
    const outcome = await kube.runCheck(check, { signal: AbortSignal.timeout(60000) });
    assert.deepEqual(outcome, { state: "failed", reason: "quorum lost: 2 of 3 monitors down" });
  });

  async function podsOf(jobName: string): Promise<k8s.V1Pod[]> {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(cp.kubeconfig);
    return (await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: "default", labelSelector: `batch.kubernetes.io/job-name=${jobName}` })).items;
  }

  /** runCheck stays running until its signal aborts it; then the sweep removes the Job and its pod. */
  async function neverFinishes(check: ReturnType<typeof healthcheck>, podState: (p: k8s.V1Pod) => boolean, what: string): Promise<k8s.V1Pod> {
    const stop = new AbortController();
    const outcome = tracked(kube.runCheck(check, { signal: stop.signal }));
    const pod = await eventually(what, async () => (await podsOf(check.jobName)).find(podState));
    assert.equal(pod.status?.phase, "Pending");
    assert.equal(outcome.settled(), false, "a Job whose pod cannot start is not a result");
    stop.abort();
    assert.deepEqual(await outcome.promise, { state: "running", reason: "waiting to complete" });
    assert.deepEqual((await kube.sweepRunners()).jobs, 1);
    await eventually("the sweep to remove the Job's pod", async () => (await podsOf(check.jobName)).length === 0, 30000);
    return pod;
  }

  it("an image that cannot be pulled: the pod waits in ErrImagePull/ImagePullBackOff, the check stays running, the sweep cleans up", async () => {
    const check = healthcheck("default", "sim-pull", "exit 0");
    (check.job as any).spec.template.spec.containers[0].image = UNPULLABLE;
    const pod = await neverFinishes(check, (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === "ImagePullBackOff",
      "the pod to wait in ImagePullBackOff");
    const waiting = pod.status!.containerStatuses![0].state!.waiting!;
    assert.match(waiting.message ?? "", new RegExp(`^Back-off pulling image "${UNPULLABLE}": ErrImagePull: .*failed to pull and unpack image`));
    assert.equal(pod.status?.conditions?.find((c) => c.type === "PodScheduled")?.status, "True");
  });

  it("a pod that never schedules (nodeSelector matching no node): Unschedulable from the real scheduler, the check stays running", async () => {
    const check = healthcheck("default", "sim-unschedulable", "exit 0");
    (check.job as any).spec.template.spec.nodeSelector = { "talos-gate.dev/no-such-pool": "x" };
    const pod = await neverFinishes(check,
      (p) => !!p.status?.conditions?.some((c) => c.type === "PodScheduled" && c.status === "False" && c.reason === "Unschedulable"),
      "the scheduler to report the pod Unschedulable");
    assert.equal(pod.spec?.nodeName, undefined);
    assert.match(pod.status?.conditions?.find((c) => c.type === "PodScheduled")?.message ?? "",
      /^0\/3 nodes are available: .*node\(s\) didn't match Pod's node affinity\/selector/);
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
    // The real scheduler spread the two ReplicaSet pods over the two workers.
    assert.deepEqual(await onNode("worker-1"), ["DaemonSet", "ReplicaSet"]);
    assert.deepEqual(await onNode("worker-2"), ["DaemonSet", "ReplicaSet"]);
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
