// A wait told to stop by a signal that aborted while it was still sending its first requests (session 18: CI once saw
// the healthcheck runner, aborted while it POSTed its Job, run its check to the end instead of returning "running";
// the listener it added afterwards, to an already aborted signal, never ran). Fake clients hold each request until the
// test has aborted, so the window is hit every time.
import * as assert from "node:assert/strict";
import { whenAborted } from "../../../provider/abort";
import type { KubeClients } from "../../../provider/kube/client";
import { RUN_NONCE_ANNOTATION, CONFIG_HASH_ANNOTATION } from "../../../provider/kube/labels";
import { RunnerJobs, runCheck } from "../../../provider/kube/runner";
import { waitForVolumeDetach } from "../../../provider/kube/volumes";
import type { HealthcheckJob } from "../../../provider/rollout/ports";

/** Resolves with `what` after `ms`: a race partner that says the wait under test did not end. */
const after = <T>(ms: number, what: T) => new Promise<T>((r) => setTimeout(() => r(what), ms).unref());

/** A watch that is open and never sends anything (until aborted). */
const silentWatch = async () => ({ abort: () => undefined });

describe("waits whose signal aborts while their first request is out", () => {
  it("whenAborted: runs at once for a signal already aborted, once on a later abort, never after it is removed", () => {
    let calls = 0;
    whenAborted(AbortSignal.abort(), () => calls++);
    assert.equal(calls, 1);
    const later = new AbortController();
    whenAborted(later.signal, () => calls++);
    later.abort();
    later.abort();
    assert.equal(calls, 2);
    const removed = new AbortController();
    whenAborted(removed.signal, () => calls++)();
    removed.abort();
    assert.equal(calls, 2);
    assert.doesNotThrow(() => whenAborted(undefined, () => calls++)());
  });

  it("the healthcheck runner returns running when its signal aborts during the Job's POST", async () => {
    const ours = new RunnerJobs();
    const check: HealthcheckJob = {
      id: "cluster-x-quick", jobName: "talos-gate-cluster-x-quick", namespace: "ns", configHash: "h1", intervalMs: 5000,
      job: { apiVersion: "batch/v1", kind: "Job", spec: { template: { spec: { containers: [{ name: "c", image: "busybox" }] } } } },
    };
    const ctl = new AbortController();
    // This run's own Job, running, as the list after the POST would show it: nothing would end the wait but the abort.
    const running = {
      metadata: { name: check.jobName, namespace: "ns", uid: "uid-1", annotations: { [RUN_NONCE_ANNOTATION]: ours.nonce, [CONFIG_HASH_ANNOTATION]: "h1" } },
      status: { active: 1 },
    };
    const c = {
      batch: {
        createNamespacedJob: async () => {
          ctl.abort(); // the holdTimeout (or a cancel) lands while the POST is out
          return { metadata: { uid: "uid-1" } };
        },
        listNamespacedJob: async () => ({ metadata: { resourceVersion: "1" }, items: [running] }),
      },
      core: { listNamespacedPod: async () => ({ metadata: { resourceVersion: "1" }, items: [] }) },
      watch: silentWatch,
    } as unknown as KubeClients;
    const outcome = await Promise.race([runCheck(c, check, { signal: ctl.signal, log: () => undefined, ours }), after(3000, "still waiting")]);
    assert.deepEqual(outcome, { state: "running", reason: "waiting to complete" });
  });

  it("the wait for a node's volumes ends as cancelled when its signal aborts during its first list", async () => {
    const ctl = new AbortController();
    const attached = { metadata: { name: "csi-1" }, spec: { attacher: "csi.example", nodeName: "w-1", source: { persistentVolumeName: "pv-1" } }, status: { attached: true } };
    const c = {
      objects: {
        getRaw: async () => {
          ctl.abort(); // the node timeout lands while the list is out
          return { metadata: { resourceVersion: "1" }, items: [attached] };
        },
      },
      watch: silentWatch,
    } as unknown as KubeClients;
    const waited = waitForVolumeDetach(c, "w-1", { timeoutMs: 60_000, signal: ctl.signal }, () => undefined).then(() => "detached", (e: Error) => e.message);
    const outcome = await Promise.race([waited, after(3000, "still waiting")]);
    assert.equal(outcome, "waiting for the volumes of node w-1 to detach was cancelled");
  });
});
