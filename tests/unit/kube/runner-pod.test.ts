// When a runner Job's pod settles the check (provider/kube/runnerPod.ts): the Job controller's rule at v1.36.3 — a
// Job that succeeds when its one pod succeeds, that pod counted by the controller, no failure recorded — and every
// case where only the Job's own Complete may decide.
import * as assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { DEADLINE_MARGIN_MS, settlingPod, trimPod } from "../../../provider/kube/runnerPod";

const UID = "job-uid";

const job = (spec: Partial<k8s.V1JobSpec> = {}, status: k8s.V1JobStatus = {}): k8s.V1Job => ({
  metadata: { name: "talos-gate-x", namespace: "ns", uid: UID },
  spec: { backoffLimit: 0, template: {}, ...spec } as k8s.V1JobSpec,
  status: { active: 1, startTime: new Date("2026-01-01T00:00:00Z"), ...status },
});

/** A pod as the Job controller makes it: controller ownerReference, selector label, tracking finalizer. */
const pod = (over: { name?: string; phase?: string; exitCodes?: number[]; finishedAt?: string; meta?: Partial<k8s.V1ObjectMeta> } = {}): k8s.V1Pod => {
  const exitCodes = over.exitCodes ?? [0];
  return {
    metadata: {
      name: over.name ?? "talos-gate-x-abcde", namespace: "ns", uid: `pod-${over.name ?? "abcde"}`,
      labels: { "batch.kubernetes.io/controller-uid": UID, "batch.kubernetes.io/job-name": "talos-gate-x" },
      finalizers: ["batch.kubernetes.io/job-tracking"],
      ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name: "talos-gate-x", uid: UID, controller: true }],
      ...over.meta,
    },
    spec: { containers: exitCodes.map((_, i) => ({ name: `c${i}` })) },
    status: {
      phase: over.phase ?? "Succeeded",
      containerStatuses: exitCodes.map((exitCode, i) => ({
        name: `c${i}`, image: "", imageID: "", ready: false, restartCount: 0,
        state: { terminated: { exitCode, finishedAt: new Date(over.finishedAt ?? "2026-01-01T00:00:05Z") } },
      })),
    },
  };
};

const settles = (j: k8s.V1Job, pods: k8s.V1Pod[]) => settlingPod(j, pods)?.metadata?.name;

describe("unit: kube port — a runner Job's pod settles its pass (Job controller v1.36.3)", () => {
  it("the usual check (completions and parallelism 1 or unset): its one pod Succeeded with every container exit 0", () => {
    assert.equal(settles(job(), [pod()]), "talos-gate-x-abcde");
    assert.equal(settles(job({ completions: 1, parallelism: 1 }), [pod({ exitCodes: [0, 0] })]), "talos-gate-x-abcde");
    assert.equal(settles(job({ podFailurePolicy: { rules: [{ action: "FailJob", onExitCodes: { operator: "In", values: [42] } }] } }), [pod()]),
      "talos-gate-x-abcde", "a FailJob rule matches failed pods only");
    assert.equal(settles(job(), [pod(), pod({ name: "other-job-pod", meta: { labels: {}, ownerReferences: [] } })]), "talos-gate-x-abcde",
      "pods of other Jobs of the name are not this Job's");
  });

  it("a pod not finished cleanly never settles it", () => {
    assert.equal(settles(job(), [pod({ phase: "Running" })]), undefined);
    assert.equal(settles(job(), [pod({ phase: "Failed", exitCodes: [1] })]), undefined);
    assert.equal(settles(job(), [pod({ exitCodes: [0, 1] })]), undefined, "every container exit 0");
    assert.equal(settles(job(), [pod({ meta: { deletionTimestamp: new Date() } })]), undefined);
  });

  it("a Job that needs more than its one pod, or that the Job controller does not decide, waits for Complete", () => {
    for (const spec of [
      { completions: 2 }, { parallelism: 2 }, { completionMode: "Indexed" },
      { successPolicy: { rules: [{ succeededCount: 1 }] } }, { manualSelector: true }, { suspend: true },
      { managedBy: "example.com/other" },
    ] as Array<Partial<k8s.V1JobSpec>>) {
      assert.equal(settles(job(spec), [pod()]), undefined, JSON.stringify(spec));
    }
    assert.equal(settles(job({ managedBy: "kubernetes.io/job-controller" }), [pod()]), "talos-gate-x-abcde");
  });

  it("a failure already recorded (failed before success in every sync) leaves the verdict to the Job", () => {
    assert.equal(settles(job({ backoffLimit: 3 }, { failed: 1 }), [pod()]), undefined);
    assert.equal(settles(job({}, { uncountedTerminatedPods: { failed: ["p"] } }), [pod()]), undefined);
    assert.equal(settles(job({}, { conditions: [{ type: "FailureTarget", status: "True" }] }), [pod()]), undefined);
  });

  it("a second pod of the Job (a retry, a replacement, an adopted one) leaves the verdict to the Job", () => {
    assert.equal(settles(job(), [pod(), pod({ name: "retry", phase: "Running" })]), undefined);
    assert.equal(settles(job(), [pod(), pod({ name: "labelled-orphan", meta: { ownerReferences: [], finalizers: [] } })]), undefined);
  });

  it("a pod the Job controller would not count never settles it: forged labels, another owner, no tracking finalizer", () => {
    assert.equal(settles(job(), [pod({ meta: { ownerReferences: [] } })]), undefined, "labels only");
    assert.equal(settles(job(), [pod({ meta: { ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name: "x", uid: "other", controller: true }] } })]),
      undefined);
    assert.equal(settles(job(), [pod({ meta: { ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name: "x", uid: UID, controller: false }] } })]),
      undefined, "not the controller reference");
    assert.equal(settles(job(), [pod({ meta: { labels: { "batch.kubernetes.io/controller-uid": "other" } } })]), undefined);
    assert.equal(settles(job(), [pod({ meta: { finalizers: [] } })]), undefined, "no tracking finalizer: not counted");
    assert.equal(settles(job({}, { uncountedTerminatedPods: { succeeded: ["pod-abcde"] } }), [pod({ meta: { finalizers: [] } })]),
      "talos-gate-x-abcde", "finalizer removed after the controller recorded it as succeeded");
  });

  it("activeDeadlineSeconds: only a pod that ended clear of the deadline settles it", () => {
    const deadline = 60;
    const end = (ms: number) => new Date(Date.parse("2026-01-01T00:00:00Z") + ms).toISOString();
    assert.equal(settles(job({ activeDeadlineSeconds: deadline }), [pod({ finishedAt: end(deadline * 1000 - DEADLINE_MARGIN_MS) })]),
      "talos-gate-x-abcde");
    assert.equal(settles(job({ activeDeadlineSeconds: deadline }), [pod({ finishedAt: end(deadline * 1000 - DEADLINE_MARGIN_MS + 1000) })]),
      undefined);
    assert.equal(settles(job({ activeDeadlineSeconds: deadline }, { startTime: undefined }), [pod()]), undefined);
  });

  it("the trimmed pod (what the runner holds) decides the same", () => {
    assert.equal(settles(job(), [trimPod(pod())]), "talos-gate-x-abcde");
    assert.equal(settles(job(), [trimPod(pod({ meta: { ownerReferences: [] } }))]), undefined);
    assert.equal(settles(job(), [trimPod(pod({ exitCodes: [0, 2] }))]), undefined);
  });
});
