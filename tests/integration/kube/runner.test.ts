// The healthcheck runner against a real kube-apiserver: Omni's Job lifecycle (create, observe by watch, failure text,
// delete Job and pods), the config-hash rule, aborts, Jobs deleted under the runner, and an API server restart.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { freshNamespace, testControlPlane } from "../../support/kube";
import { markJobComplete, markJobFailed, waitForJob } from "../../support/jobstatus";
import { delay, harness, healthcheck, settledWithin } from "./helpers";

async function jobGone(batch: k8s.BatchV1Api, ns: string, name: string): Promise<boolean> {
  return batch.readNamespacedJob({ name, namespace: ns }).then(() => false, (e) => e.code === 404);
}

async function runnerPods(core: k8s.CoreV1Api, ns: string, job: string): Promise<k8s.V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/job-name=${job}` })).items;
}

describe("integration: kube port — healthcheck runner", function () {
  this.timeout(120000);

  it("a passing check: creates the Job, sees Complete by watch at once, deletes the Job and its pods", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const check = healthcheck(ns, "pass");
    const outcome = h.kube.runCheck(check);
    const job = await waitForJob(h.kc, ns, check.jobName);
    assert.equal(job.metadata?.labels?.["app.kubernetes.io/name"], "talos-gate-healthcheck");
    assert.equal(job.metadata?.annotations?.["talos-gate.dev/config-hash"], check.configHash);
    assert.equal(await settledWithin(outcome, 300), "pending", "a running Job is not a result");
    const marked = Date.now();
    await markJobComplete(h.kc, ns, check.jobName);
    assert.deepEqual(await outcome, { state: "passed" });
    const reaction = Date.now() - marked;
    assert.ok(reaction < 5000, `pass seen ${reaction} ms after Complete; the interval is ${check.intervalMs} ms`);
    assert.ok(await jobGone(h.batch, ns, check.jobName), "the passed Job is deleted");
    assert.deepEqual(await runnerPods(h.core, ns, check.jobName), [], "the runner's pods are deleted");
  });

  it("a failing check: the failed container's termination message is the reason; Job and pods are deleted", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const check = healthcheck(ns, "fail");
    const outcome = h.kube.runCheck(check);
    await waitForJob(h.kc, ns, check.jobName);
    await markJobFailed(h.kc, ns, check.jobName, {
      podMessages: ["first attempt: timeout", "ceph is not healthy, holding upgrade: HEALTH_WARN 1 osds down\n"],
    });
    assert.deepEqual(await outcome, { state: "failed", reason: "ceph is not healthy, holding upgrade: HEALTH_WARN 1 osds down" });
    assert.ok(await jobGone(h.batch, ns, check.jobName));
    assert.deepEqual(await runnerPods(h.core, ns, check.jobName), []);
    await h.kube.flush();
    const events = (await h.core.listNamespacedEvent({ namespace: ns })).items;
    assert.deepEqual(events.map((e) => [e.type, e.reason, e.involvedObject.name, e.message]),
      [["Warning", "HealthcheckFailed", check.jobName, "ceph is not healthy, holding upgrade: HEALTH_WARN 1 osds down"]]);
  });

  it("a failing check without any termination message falls back to the Job condition", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const check = healthcheck(ns, "fail-condition");
    const outcome = h.kube.runCheck(check);
    await waitForJob(h.kc, ns, check.jobName);
    await markJobFailed(h.kc, ns, check.jobName, { podMessages: ["   "] });
    assert.deepEqual(await outcome, { state: "failed", reason: "BackoffLimitExceeded: Job has reached the specified backoff limit" });

    const again = h.kube.runCheck(check); // the next evaluation runs a fresh Job
    await waitForJob(h.kc, ns, check.jobName);
    await markJobFailed(h.kc, ns, check.jobName, { conditionReason: "", conditionMessage: "" });
    assert.deepEqual(await again, { state: "failed", reason: "healthcheck job failed" });
  });

  it("a changed manifest (config hash) deletes the old Job — even a Complete one never counts — and re-creates it", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const v1 = healthcheck(ns, "hash", "exit 0 v1");
    const stop = new AbortController();
    const first = h.kube.runCheck(v1, { signal: stop.signal });
    const old = await waitForJob(h.kc, ns, v1.jobName);
    stop.abort();
    assert.equal((await first).state, "running");
    await markJobComplete(h.kc, ns, v1.jobName); // a pass of the OLD manifest

    const v2 = healthcheck(ns, "hash", "exit 0 v2");
    assert.equal(v2.jobName, v1.jobName);
    const second = h.kube.runCheck(v2);
    const fresh = await waitForJob(h.kc, ns, v2.jobName, { notUid: old.metadata!.uid });
    assert.equal(fresh.metadata?.annotations?.["talos-gate.dev/config-hash"], v2.configHash);
    assert.equal(await settledWithin(second, 300), "pending", "the old Job's Complete must not pass the new manifest");
    await markJobComplete(h.kc, ns, v2.jobName);
    assert.deepEqual(await second, { state: "passed" });
  });

  it("a stuck Job: the signal aborts → running 'waiting to complete', the Job stays for the next evaluation", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const check = healthcheck(ns, "stuck");
    const outcome = await h.kube.runCheck(check, { signal: AbortSignal.timeout(1000) });
    assert.deepEqual(outcome, { state: "running", reason: "waiting to complete" });
    const job = await waitForJob(h.kc, ns, check.jobName);

    // The next evaluation picks the same Job up (no second Job) and sees it complete.
    const next = h.kube.runCheck(check);
    await delay(200);
    const same = await waitForJob(h.kc, ns, check.jobName);
    assert.equal(same.metadata?.uid, job.metadata?.uid);
    await markJobComplete(h.kc, ns, check.jobName);
    assert.deepEqual(await next, { state: "passed" });
  });

  it("a Job deleted while running counts as running and is re-created", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const check = healthcheck(ns, "deleted");
    const outcome = h.kube.runCheck(check);
    const job = await waitForJob(h.kc, ns, check.jobName);
    await h.batch.deleteNamespacedJob({ name: check.jobName, namespace: ns, propagationPolicy: "Background" });
    const recreated = await waitForJob(h.kc, ns, check.jobName, { notUid: job.metadata!.uid });
    assert.equal(await settledWithin(outcome, 200), "pending", "still running after the deletion");
    assert.equal(recreated.metadata?.annotations?.["talos-gate.dev/config-hash"], check.configHash);
    await markJobComplete(h.kc, ns, check.jobName);
    assert.deepEqual(await outcome, { state: "passed" });
  });

  it("a Job still terminating (deletionTimestamp) counts as running", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "run");
    const check = healthcheck(ns, "terminating");
    // A Job held by a finalizer, as a previous run's Job can be while its deletion is pending.
    const body = JSON.parse(JSON.stringify(check.job));
    body.metadata.finalizers = ["talos-gate.dev/test-hold"];
    await h.batch.createNamespacedJob({ namespace: ns, body });
    await h.batch.deleteNamespacedJob({ name: check.jobName, namespace: ns, propagationPolicy: "Background" });
    await markJobComplete(h.kc, ns, check.jobName, { pod: false }).catch(() => undefined);
    const outcome = h.kube.runCheck(check);
    assert.equal(await settledWithin(outcome, 500), "pending", "a terminating Job is not evaluated");
    // Let it go: the runner creates the fresh Job once the old one is gone.
    await h.batch.patchNamespacedJob({ name: check.jobName, namespace: ns, body: [{ op: "remove", path: "/metadata/finalizers" }] });
    const fresh = await (async () => {
      for (;;) {
        const j = await waitForJob(h.kc, ns, check.jobName);
        if (!j.metadata?.deletionTimestamp) return j;
        await delay(20);
      }
    })();
    assert.ok(!fresh.status?.conditions?.length, "a fresh Job");
    await markJobComplete(h.kc, ns, check.jobName);
    assert.deepEqual(await outcome, { state: "passed" });
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
    const check = healthcheck(ns, "restart");
    const outcome = h.kube.runCheck(check);
    const job = await waitForJob(h.kc, ns, check.jobName);
    await cp.restartApiServer(2000);
    assert.equal(await settledWithin(outcome, 100), "pending");
    const marked = Date.now();
    await markJobComplete(h.kc, ns, check.jobName);
    assert.deepEqual(await outcome, { state: "passed" });
    const reaction = Date.now() - marked;
    assert.ok(reaction < 5000, `pass seen ${reaction} ms after Complete (after the restart)`);
    assert.ok(await jobGone(h.batch, ns, check.jobName));
    assert.ok(job.metadata?.uid);
    assert.ok(h.logs.some((l) => /watch of .* dropped/.test(l)), "the dropped watch was noticed");
  });
});
