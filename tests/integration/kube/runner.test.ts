// The healthcheck runner against the real control plane: Omni's Job lifecycle (create, observe by watch, failure text,
// delete Job and pods), the config-hash rule, aborts, Jobs deleted under the runner, and an API server restart. Every
// Job status here is written by the real Job controller from pods the kubelet emulator really ran; a check's process
// waits on a file gate, so "still running" is asserted while its pod is observed running, never after a sleep.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { createKubeApi } from "../../../provider/kube";
import { eventually, freshNamespace, testControlPlane, waitForJob } from "../../support/kube";
import { delay, fileGate, harness, Harness, healthcheck, tracked } from "./helpers";

async function jobGone(batch: k8s.BatchV1Api, ns: string, name: string): Promise<boolean> {
  return batch.readNamespacedJob({ name, namespace: ns }).then(() => false, (e) => e.code === 404);
}

async function runnerPods(core: k8s.CoreV1Api, ns: string, job: string): Promise<k8s.V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/job-name=${job}` })).items;
}

/** Waits until the Job with `uid` has a pod whose container the kubelet reports running. */
async function podRunning(h: Harness, ns: string, job: k8s.V1Job): Promise<k8s.V1Pod> {
  return eventually(`a running pod of Job ${ns}/${job.metadata?.name}`, async () =>
    (await runnerPods(h.core, ns, job.metadata!.name!)).find((p) =>
      p.metadata?.labels?.["batch.kubernetes.io/controller-uid"] === job.metadata?.uid && p.status?.containerStatuses?.[0]?.state?.running));
}

async function noRunnerPods(h: Harness, ns: string, job: string): Promise<void> {
  await eventually(`the pods of ${ns}/${job} to be gone`, async () => (await runnerPods(h.core, ns, job)).length === 0, 30000);
}

const condition = (j: k8s.V1Job, type: string) => j.status?.conditions?.find((c) => c.type === type && c.status === "True");

describe("integration: kube port — healthcheck runner", function () {
  this.timeout(120000);

  it("a passing check: creates the Job, is running while its pod runs, sees the pass by watch, deletes the Job and its pods", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const gate = fileGate();
    const check = healthcheck(ns, "pass", gate.script);
    const outcome = tracked(h.kube.runCheck(check));
    const job = await waitForJob(h.kc, ns, check.jobName);
    assert.equal(job.metadata?.labels?.["app.kubernetes.io/name"], "talos-gate-healthcheck");
    assert.equal(job.metadata?.annotations?.["talos-gate.dev/config-hash"], check.configHash);
    const pod = await podRunning(h, ns, job);
    assert.ok(pod.metadata?.finalizers?.includes("batch.kubernetes.io/job-tracking"), "the real Job controller tracks its pods with a finalizer");
    assert.equal(outcome.settled(), false, "a Job whose pod still runs is not a result");
    gate.open();
    assert.deepEqual(await outcome.promise, { state: "passed" });
    // A pass returns before its Job's deletion ends (runner.ts): deleted right after.
    await eventually("the passed Job to be deleted", () => jobGone(h.batch, ns, check.jobName), 30000);
    await noRunnerPods(h, ns, check.jobName);
  });

  it("a check POSTs its Job once: the pod events that come before the Job's own do not create it again", async () => {
    const cp = await testControlPlane();
    const ns = await freshNamespace(cp, "run");
    // A port of its own, without Events (also POSTs): its POSTs are the runner's Job creations.
    const kube = createKubeApi(cp.kubeconfig, { runnerEvents: false });
    try {
      for (let i = 0; i < 2; i++) {
        const before = kube.stats().byMethod.POST ?? 0;
        assert.deepEqual(await kube.runCheck(healthcheck(ns, "once")), { state: "passed" });
        assert.equal((kube.stats().byMethod.POST ?? 0) - before, 1, `run ${i + 1}: one Job created`);
      }
    } finally {
      await kube.close();
    }
  });

  it("issue 23: a check POSTs its Job before it reads anything (a list first was a round trip on every gate's path)", async () => {
    const cp = await testControlPlane();
    const ns = await freshNamespace(cp, "run");
    const kube = createKubeApi(cp.kubeconfig, { runnerEvents: false });
    try {
      const before = { ...kube.stats().byMethod };
      // Every turn of the event loop until the POST has gone: what had been asked by then.
      let atPost: Record<string, number> | undefined;
      const looking = (async () => {
        while (!atPost) {
          const now = kube.stats().byMethod;
          if ((now.POST ?? 0) > (before.POST ?? 0)) atPost = { ...now };
          else await new Promise((r) => setImmediate(r));
        }
      })();
      assert.deepEqual(await kube.runCheck(healthcheck(ns, "first")), { state: "passed" });
      await looking;
      assert.equal((atPost!.GET ?? 0) - (before.GET ?? 0), 0, "nothing read before the POST");
      assert.equal((kube.stats().byMethod.POST ?? 0) - (before.POST ?? 0), 1, "one Job created");
    } finally {
      await kube.close();
    }
  });

  it("a failing check: the last failed container's termination message is the reason; Job and pods are deleted", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    // Two attempts (backoffLimit 1; the Job controller's pod-failure back-off is 10 s): the newer message wins.
    const marker = `/tmp/talos-gate-attempt-${ns}`;
    const check = healthcheck(ns, "fail", [
      `if [ ! -e ${marker} ]; then touch ${marker}; echo "first attempt: timeout" >&2; exit 1; fi`,
      `rm -f ${marker}; echo "ceph is not healthy, holding upgrade: HEALTH_WARN 1 osds down" >&2; exit 1`,
    ].join("\n"));
    (check.job as any).spec.backoffLimit = 1;
    assert.deepEqual(await h.kube.runCheck(check), { state: "failed", reason: "ceph is not healthy, holding upgrade: HEALTH_WARN 1 osds down" });
    assert.ok(await jobGone(h.batch, ns, check.jobName));
    await noRunnerPods(h, ns, check.jobName);
    await h.kube.flush();
    const events = (await h.core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.reason?.startsWith("Healthcheck"));
    assert.deepEqual(events.map((e) => [e.type, e.reason, e.involvedObject.name, e.message]),
      [["Warning", "HealthcheckFailed", check.jobName, "ceph is not healthy, holding upgrade: HEALTH_WARN 1 osds down"]]);
  });

  it("a failing check without any termination message reports the Job controller's Failed condition", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const check = healthcheck(ns, "fail-condition", "exit 1");
    (check.job as any).spec.template.spec.containers[0].terminationMessagePolicy = "File";
    assert.deepEqual(await h.kube.runCheck(check), { state: "failed", reason: "BackoffLimitExceeded: Job has reached the specified backoff limit" });
  });

  it("a check killed by activeDeadlineSeconds fails with the Job controller's DeadlineExceeded", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const check = healthcheck(ns, "deadline", "exec sleep 300");
    (check.job as any).spec.activeDeadlineSeconds = 2;
    (check.job as any).spec.template.spec.containers[0].terminationMessagePolicy = "File";
    assert.deepEqual(await h.kube.runCheck(check), { state: "failed", reason: "DeadlineExceeded: Job was active longer than specified deadline" });
    await noRunnerPods(h, ns, check.jobName);
  });

  it("a changed manifest (config hash) deletes the old Job — even a Complete one never counts — and re-creates it", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const gate1 = fileGate();
    const v1 = healthcheck(ns, "hash", `${gate1.script} # v1`);
    const stop = new AbortController();
    const first = h.kube.runCheck(v1, { signal: stop.signal });
    const old = await waitForJob(h.kc, ns, v1.jobName);
    stop.abort();
    assert.equal((await first).state, "running");
    gate1.open(); // the OLD manifest passes, and nobody is watching
    await eventually("the old Job to complete", async () => condition(await h.batch.readNamespacedJob({ name: v1.jobName, namespace: ns }), "Complete"));

    const gate2 = fileGate();
    const v2 = healthcheck(ns, "hash", `${gate2.script} # v2`);
    assert.equal(v2.jobName, v1.jobName);
    const second = tracked(h.kube.runCheck(v2));
    const fresh = await waitForJob(h.kc, ns, v2.jobName, { notUid: old.metadata!.uid, timeoutMs: 30000 });
    assert.equal(fresh.metadata?.annotations?.["talos-gate.dev/config-hash"], v2.configHash);
    await podRunning(h, ns, fresh);
    assert.equal(second.settled(), false, "the old Job's Complete must not pass the new manifest");
    gate2.open();
    assert.deepEqual(await second.promise, { state: "passed" });
  });

  it("a stuck Job: the signal aborts → running 'waiting to complete', the Job stays for the next evaluation", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const gate = fileGate();
    const check = healthcheck(ns, "stuck", gate.script);
    const outcome = await h.kube.runCheck(check, { signal: AbortSignal.timeout(1000) });
    assert.deepEqual(outcome, { state: "running", reason: "waiting to complete" });
    const job = await waitForJob(h.kc, ns, check.jobName);

    // The next evaluation picks the same Job up (no second Job) and sees it complete.
    const next = h.kube.runCheck(check);
    await podRunning(h, ns, job);
    gate.open();
    assert.deepEqual(await next, { state: "passed" });
    const events = (await h.core.listNamespacedEvent({ namespace: ns })).items;
    assert.equal(events.filter((e) => e.reason === "SuccessfulCreate" && e.involvedObject.kind === "Job").length, 1, "one pod, one Job");
  });

  it("a Job deleted while running counts as running and is re-created", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const gate = fileGate();
    const check = healthcheck(ns, "deleted", gate.script);
    const outcome = tracked(h.kube.runCheck(check));
    const job = await waitForJob(h.kc, ns, check.jobName);
    await podRunning(h, ns, job);
    await h.batch.deleteNamespacedJob({ name: check.jobName, namespace: ns, propagationPolicy: "Background" });
    const recreated = await waitForJob(h.kc, ns, check.jobName, { notUid: job.metadata!.uid });
    assert.equal(recreated.metadata?.annotations?.["talos-gate.dev/config-hash"], check.configHash);
    await podRunning(h, ns, recreated);
    assert.equal(outcome.settled(), false, "still running after the deletion");
    gate.open();
    assert.deepEqual(await outcome.promise, { state: "passed" });
  });

  it("a Job still terminating (deletionTimestamp) counts as running, even when Complete", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const gate = fileGate();
    const check = healthcheck(ns, "terminating", gate.script);
    // A previous run's Job, Complete and held by a finalizer while its deletion is pending.
    gate.open();
    const body = JSON.parse(JSON.stringify(check.job));
    body.metadata.finalizers = ["talos-gate.dev/test-hold"];
    await h.batch.createNamespacedJob({ namespace: ns, body });
    const held = await eventually("the held Job to complete", async () => {
      const j = await h.batch.readNamespacedJob({ name: check.jobName, namespace: ns });
      return condition(j, "Complete") ? j : undefined;
    });
    gate.close();
    await h.batch.deleteNamespacedJob({ name: check.jobName, namespace: ns, propagationPolicy: "Background" });
    const outcome = tracked(h.kube.runCheck(check));
    await delay(500); // give a wrong runner the chance to take the terminating Job's Complete as a pass
    // Let it go: the runner creates the fresh Job once the old one is gone.
    await h.batch.patchNamespacedJob({ name: check.jobName, namespace: ns, body: [{ op: "remove", path: "/metadata/finalizers" }] });
    const fresh = await waitForJob(h.kc, ns, check.jobName, { notUid: held.metadata!.uid });
    await podRunning(h, ns, fresh);
    assert.equal(outcome.settled(), false, "the terminating Job's Complete was not taken as a pass");
    gate.open();
    assert.deepEqual(await outcome.promise, { state: "passed" });
  });

  it("a Job this run did not create never counts: a forged Complete Job of the name is deleted and this run's own created", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const gate = fileGate();
    const check = healthcheck(ns, "forged", gate.script);
    // Anyone allowed to create Jobs in the namespace: the check's name and its public config hash, running `true`.
    const forged = JSON.parse(JSON.stringify(check.job));
    forged.spec.template.spec.containers[0].command = ["sh", "-c", "exit 0"];
    const made = await h.batch.createNamespacedJob({ namespace: ns, body: forged });
    await eventually("the forged Job to complete", async () => condition(await h.batch.readNamespacedJob({ name: check.jobName, namespace: ns }), "Complete"));
    const outcome = tracked(h.kube.runCheck(check));
    const own = await waitForJob(h.kc, ns, check.jobName, { notUid: made.metadata!.uid, timeoutMs: 30000 });
    assert.match(own.metadata?.annotations?.["talos-gate.dev/run-nonce"] ?? "", /^[0-9a-f]{24}$/);
    await podRunning(h, ns, own);
    assert.equal(outcome.settled(), false, "the forged Job's Complete must not pass the check");
    assert.ok(h.logs.some((l) => l.includes(`uid ${made.metadata!.uid}) was not created by this run`)), "the replacement is reported");
    gate.open();
    assert.deepEqual(await outcome.promise, { state: "passed" });
  });

  it("a missing namespace fails at once with a message naming it and what to do", async () => {
    const h = await harness();
    const check = healthcheck("no-such-namespace-x", "nons");
    await assert.rejects(h.kube.runCheck(check), (err: Error) => {
      assert.match(err.message, /namespace "no-such-namespace-x" does not exist; create it/);
      return true;
    });
  });

  it("survives an API server restart while watching and still sees the completion", async () => {
    const h = await harness();
    const cp = await testControlPlane();
    const ns = await freshNamespace(cp, "run");
    const gate = fileGate();
    const check = healthcheck(ns, "restart", gate.script);
    const outcome = tracked(h.kube.runCheck(check));
    const job = await waitForJob(h.kc, ns, check.jobName);
    await podRunning(h, ns, job);
    await cp.restartApiServer(2000);
    assert.equal(outcome.settled(), false);
    gate.open();
    assert.deepEqual(await outcome.promise, { state: "passed" });
    await eventually("the passed Job to be deleted", () => jobGone(h.batch, ns, check.jobName), 30000);
    assert.ok(h.logs.some((l) => /watch of .* dropped/.test(l)), "the dropped watch was noticed");
  });
});
