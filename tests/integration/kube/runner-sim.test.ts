// The runner end to end on the simulated cluster: the real Job controller creates the pods, the real scheduler binds
// them, the kubelet emulator runs the check as a local process and writes the termination message
// (FallbackToLogsOnError → log tail), and the runner sees the outcome by watch. Own control plane and nodes, so the
// drain sees only this cluster's workload pods.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { createKubeApi, KubeClient } from "../../../provider/kube";
import { KubeClients } from "../../../provider/kube/client";
import { runCheck, RunnerJobs } from "../../../provider/kube/runner";
import type { CheckOutcome } from "../../../provider/rollout/ports";
import type { ControlPlane } from "../../../sim/controlplane";
import { freshControlPlane } from "../../support/controlPlanes";
import { KubeSim, startKubeSim, WORKLOAD_NAMESPACE, WORKLOAD_RS } from "../../../sim/kube";
import { eventually, waitForJob } from "../../support/kube";
import { fileGate, healthcheck, tracked } from "./helpers";

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

  describe("the Job gate reacts to its pod", () => {
    let clients: KubeClients;
    let core: k8s.CoreV1Api;
    before(() => {
      clients = new KubeClients(cp.kubeconfig);
      core = clients.core;
    });
    after(() => clients?.close());

    /**
     * Stops the Job controller (SIGSTOP of kube-controller-manager; leader election is off in the sim) while `fn`
     * runs: no Complete is written, no orphan adopted, no pod created. The kubelet emulator and the scheduler go on.
     */
    async function jobControllerPaused<T>(fn: () => Promise<T>): Promise<T> {
      const pid = cp.pidOf("kube-controller-manager");
      assert.ok(pid, "kube-controller-manager runs");
      process.kill(pid, "SIGSTOP");
      try {
        return await fn();
      } finally {
        process.kill(pid, "SIGCONT");
      }
    }

    /** The runner with its HealthcheckPassed/Failed records kept; `stop` ends it (running) when nothing decided. */
    function run(check: ReturnType<typeof healthcheck>, stop: AbortController) {
      const records: string[] = [];
      const outcome = tracked(runCheck(clients, check, {
        signal: stop.signal, log: () => undefined, ours: new RunnerJobs(), record: (e) => records.push(`${e.reason}: ${e.message}`),
      }));
      return { outcome, records };
    }

    /** Waits at most `ms` for the outcome (a bound, not a timing assertion: on expiry the runner says running). */
    async function outcomeWithin(o: { promise: Promise<CheckOutcome> }, stop: AbortController, ms: number): Promise<CheckOutcome> {
      const t = setTimeout(() => stop.abort(), ms);
      try {
        return await o.promise;
      } finally {
        clearTimeout(t);
      }
    }

    const runningPodOf = (job: string, uid?: string) => eventually(`a running pod of ${job}`, async () =>
      (await podsOf(job)).find((p) => (!uid || p.metadata?.labels?.["batch.kubernetes.io/controller-uid"] === uid)
        && p.status?.containerStatuses?.[0]?.state?.running));

    const cleanedUp = (job: string) => eventually(`the pods of ${job} to be gone`, async () => (await podsOf(job)).length === 0, 60000);

    it("a one-pod check passes on its pod's Succeeded, with the Job controller stopped before it could write Complete", async () => {
      const gate = fileGate();
      const check = healthcheck("default", "sim-by-pod", gate.script);
      const stop = new AbortController();
      const { outcome, records } = run(check, stop);
      const pod = await runningPodOf(check.jobName);
      await jobControllerPaused(async () => {
        gate.open();
        assert.deepEqual(await outcomeWithin(outcome, stop, 30000), { state: "passed" });
      });
      assert.deepEqual(records, [`HealthcheckPassed: healthcheck passed (pod ${pod.metadata?.name} Succeeded)`]);
      await cleanedUp(check.jobName); // the tracking finalizer is lifted once the Job controller runs again
    });

    it("a Job that needs two pods (completions 2, one at a time) waits for the Job controller's Complete", async () => {
      const check = healthcheck("default", "sim-by-job", "exit 0");
      // Its first pod Succeeded is, for a while, the Job's only pod: only the spec says it does not settle the Job.
      Object.assign((check.job as any).spec, { completions: 2, parallelism: 1 });
      const stop = new AbortController();
      const { outcome, records } = run(check, stop);
      assert.deepEqual(await outcomeWithin(outcome, stop, 60000), { state: "passed" });
      assert.deepEqual(records, ["HealthcheckPassed: healthcheck passed (Job Complete)"]);
      await cleanedUp(check.jobName);
    });

    it("a pod forged with the Job's labels and tracking finalizer, controlled by another Job, that exits 0 never opens the gate; the Job's own pod does", async () => {
      const gate = fileGate();
      const check = healthcheck("default", "sim-forged", gate.script);
      const stop = new AbortController();
      const kc = new k8s.KubeConfig();
      kc.loadFromString(cp.kubeconfig);
      const { outcome, records } = run(check, stop);
      const forgedName = `${check.jobName}-forged`;
      const job = await jobControllerPaused(async () => {
        // Before the Job controller makes the Job's pod, a namespace user's pod with its labels is the only one.
        const created = await waitForJob(kc, "default", check.jobName);
        const uid = created.metadata!.uid!;
        await core.createNamespacedPod({
          namespace: "default",
          body: {
            metadata: {
              name: forgedName,
              labels: { "batch.kubernetes.io/job-name": check.jobName, "batch.kubernetes.io/controller-uid": uid, "job-name": check.jobName },
              finalizers: ["batch.kubernetes.io/job-tracking"],
              // Another Job as controller (the kubelet emulator runs only Job pods' commands); not the runner's uid.
              ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name: check.jobName, uid: "00000000-0000-4000-8000-000000000000", controller: true }],
            },
            spec: { restartPolicy: "Never", containers: [{ name: "check", image: "busybox", command: ["sh", "-c", "exit 0"] }] },
          },
        });
        await eventually("the forged pod to succeed", async () =>
          (await core.readNamespacedPod({ name: forgedName, namespace: "default" })).status?.phase === "Succeeded");
        // Gone before the Job controller runs again: it would adopt a labelled orphan (and count it) itself.
        // (NotFound: a runner that took the forged pod has deleted it already — the records below say so.)
        const gone = (e: { code?: number }) => assert.equal(e.code, 404);
        await core.patchNamespacedPod({ name: forgedName, namespace: "default", body: [{ op: "remove", path: "/metadata/finalizers" }] }).catch(gone);
        await core.deleteNamespacedPod({ name: forgedName, namespace: "default", gracePeriodSeconds: 0 }).catch(gone);
        await eventually("the forged pod to be gone", async () => !(await podsOf(check.jobName)).some((p) => p.metadata?.name === forgedName));
        return created;
      });
      const pod = await eventually("the Job's own pod running (or the check decided)", async () => outcome.settled() ||
        (await podsOf(check.jobName)).find((p) => p.metadata?.labels?.["batch.kubernetes.io/controller-uid"] === job.metadata?.uid
          && p.status?.containerStatuses?.[0]?.state?.running));
      assert.deepEqual(records, [], "nothing decided before the Job's own pod ran");
      assert.ok(pod !== true);
      await jobControllerPaused(async () => {
        gate.open();
        assert.deepEqual(await outcomeWithin(outcome, stop, 30000), { state: "passed" });
      });
      // Events are ordered on the pod watch: had the forged pod counted, it would have decided long before this one ran.
      assert.deepEqual(records, [`HealthcheckPassed: healthcheck passed (pod ${pod.metadata?.name} Succeeded)`]);
      await cleanedUp(check.jobName);
    });
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
