// When a runner Job's verdict is already settled by its one pod (pure; runner.ts acts on it).
//
// The Job controller writes `Complete` only in a sync after it saw the pod succeed, and it batches a pod's updates
// for 1 s (`syncJobBatchPeriod`), so a pass read from the Job is seen ~1 s after the check's process exited. For a Job
// whose success IS its one pod's success, the pod's `Succeeded` (posted by the kubelet) is the same verdict, seen at
// once. The rule below is worked out from the Job controller's `syncJob` at the pinned version
// (k8s.io/kubernetes v1.36.3, pkg/controller/job/job_controller.go):
// - Failure is evaluated BEFORE success in every sync: a `FailureTarget` already set; a podFailurePolicy `FailJob`
//   rule (`getFailJobMessage`: matched only against pods `isPodFailed` says failed); `failed > backoffLimit` (counted
//   failures + failed pods still carrying the tracking finalizer + uncounted failures); `pastBackoffLimitOnFailure`
//   (restarts of Running/Pending pods only); `pastActiveDeadline` (controller clock vs status.startTime).
// - Success for a NonIndexed Job: `succeeded >= completions && active == 0` (completions set) or
//   `succeeded > 0 && active == 0` (unset); a pod counts as succeeded only with the tracking finalizer
//   (`getValidPodsWithFilter`) or once in status.uncountedTerminatedPods / status.succeeded.
// So a pass is settled when: the Job is NonIndexed, completions ≤ 1 and parallelism ≤ 1 (1 or unset), no
// successPolicy (Indexed only anyway), no manual selector, managed by the Job controller, not suspended; no failure
// recorded (status.failed 0, no uncounted failure, no FailureTarget/Failed); and the Job has exactly one pod, which the
// Job controller counts (controller ownerReference to this Job's uid, its controller-uid label, the tracking
// finalizer), not being deleted, Succeeded with every container terminated exit 0. No podFailurePolicy rule can fire
// then (rules match failed pods only), restarts of a Succeeded pod are not counted, no other pod can fail, and the
// controller starts no new pod (nothing is left to complete). The one race left is activeDeadlineSeconds: the
// controller fails a Job whose sync runs after the deadline even when its pod succeeded before, so a pod that ended
// within DEADLINE_MARGIN_MS of the deadline leaves the verdict to the Job.
// Everything else keeps waiting for the Job's Complete/Failed (Omni's semantics); failure is always read from the Job.
import type * as k8s from "./k8s";

export const CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid";
/** The Job controller's pod finalizer (batch.JobTrackingFinalizer): a pod without it is not counted. */
export const JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking";
const JOB_CONTROLLER = "kubernetes.io/job-controller";
/** How far before activeDeadlineSeconds a pod must have ended for its success to be the Job's (the 1 s batch, lag). */
export const DEADLINE_MARGIN_MS = 10_000;

const atMostOne = (n: number | undefined): boolean => n === undefined || n === null || n === 1;

/** Whether the Job's spec makes its one pod's success the Job's success (the controller-side half of the rule). */
export function decidedByOnePod(job: k8s.V1Job): boolean {
  const spec = job.spec;
  if (!spec) return false;
  return (spec.completionMode ?? "NonIndexed") === "NonIndexed"
    && atMostOne(spec.completions) && atMostOne(spec.parallelism)
    && !spec.successPolicy && !spec.manualSelector && spec.suspend !== true
    && (spec.managedBy === undefined || spec.managedBy === null || spec.managedBy === JOB_CONTROLLER);
}

/** No failure is recorded on the Job (counted, uncounted, or as a condition that ends it). */
function noFailureRecorded(job: k8s.V1Job): boolean {
  const s = job.status ?? {};
  if ((s.failed ?? 0) > 0 || (s.uncountedTerminatedPods?.failed?.length ?? 0) > 0) return false;
  return !(s.conditions ?? []).some((c) => (c.type === "FailureTarget" || c.type === "Failed") && c.status === "True");
}

/** Pods the Job controller would take as this Job's: its controller ownerReference or its selector label. */
function podsOfJob(job: k8s.V1Job, pods: readonly k8s.V1Pod[]): k8s.V1Pod[] {
  const uid = job.metadata?.uid;
  return pods.filter((p) => p.metadata?.labels?.[CONTROLLER_UID_LABEL] === uid || controllerUid(p) === uid);
}

function controllerUid(pod: k8s.V1Pod): string | undefined {
  return pod.metadata?.ownerReferences?.find((r) => r.controller === true)?.uid;
}

/** The controller counts this pod as the Job's success (ownership, label, finalizer or already uncounted). */
function countedByController(job: k8s.V1Job, pod: k8s.V1Pod): boolean {
  const uid = job.metadata?.uid;
  const ref = pod.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (!uid || ref?.uid !== uid || ref.kind !== "Job" || pod.metadata?.labels?.[CONTROLLER_UID_LABEL] !== uid) return false;
  const podUid = pod.metadata?.uid ?? "";
  return Boolean(pod.metadata?.finalizers?.includes(JOB_TRACKING_FINALIZER)
    || job.status?.uncountedTerminatedPods?.succeeded?.includes(podUid));
}

/** Succeeded, with every container of its spec terminated with exit code 0 (sidecars are init containers). */
function succeededCleanly(pod: k8s.V1Pod): boolean {
  if (pod.status?.phase !== "Succeeded" || pod.metadata?.deletionTimestamp) return false;
  const statuses = pod.status.containerStatuses ?? [];
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  return names.length > 0 && names.every((n) => statuses.find((s) => s.name === n)?.state?.terminated?.exitCode === 0);
}

/** When the pod's last container ended (kubelet clock, second precision), for the deadline margin. */
function finishedAtMs(pod: k8s.V1Pod): number {
  const ends = (pod.status?.containerStatuses ?? []).map((s) => new Date(s.state?.terminated?.finishedAt ?? NaN).getTime());
  return ends.length > 0 && ends.every(Number.isFinite) ? Math.max(...ends) : NaN;
}

function clearOfDeadline(job: k8s.V1Job, pod: k8s.V1Pod): boolean {
  const deadline = job.spec?.activeDeadlineSeconds;
  if (deadline === undefined || deadline === null) return true;
  const start = new Date(job.status?.startTime ?? NaN).getTime();
  const end = finishedAtMs(pod);
  return Number.isFinite(start) && Number.isFinite(end) && end + DEADLINE_MARGIN_MS <= start + deadline * 1000;
}

/**
 * The pod whose success settles the Job's success (see the rule above), or undefined: then only the Job's own
 * Complete/Failed decides. `pods` may hold anything the runner's pod watch saw (other Jobs' pods, forged ones).
 */
export function settlingPod(job: k8s.V1Job, pods: readonly k8s.V1Pod[]): k8s.V1Pod | undefined {
  if (!decidedByOnePod(job) || !noFailureRecorded(job)) return undefined;
  const mine = podsOfJob(job, pods);
  if (mine.length !== 1) return undefined;
  const [pod] = mine;
  return countedByController(job, pod) && succeededCleanly(pod) && clearOfDeadline(job, pod) ? pod : undefined;
}

/** What the runner keeps of a pod: only what `settlingPod` and the failure text read (bounded memory per pod). */
export function trimPod(pod: k8s.V1Pod): k8s.V1Pod {
  const m = pod.metadata ?? {};
  return {
    metadata: {
      name: m.name, namespace: m.namespace, uid: m.uid, labels: m.labels, finalizers: m.finalizers,
      ownerReferences: m.ownerReferences, deletionTimestamp: m.deletionTimestamp,
    },
    spec: { containers: (pod.spec?.containers ?? []).map((c) => ({ name: c.name })) },
    status: {
      phase: pod.status?.phase,
      containerStatuses: (pod.status?.containerStatuses ?? []).map((s) => ({
        name: s.name,
        state: s.state?.terminated ? { terminated: { exitCode: s.state.terminated.exitCode, finishedAt: s.state.terminated.finishedAt } } : {},
      })),
    },
  } as k8s.V1Pod;
}

/** Two trimmed pods that decide the same (no new evaluation needed). */
export const samePod = (a: k8s.V1Pod, b: k8s.V1Pod): boolean => JSON.stringify(a) === JSON.stringify(b);
