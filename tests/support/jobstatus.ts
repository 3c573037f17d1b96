// Plays the Job controller and the kubelet for one Job, following kube-test-apiserver.md §5.2–§5.5 exactly: a pod like
// the Job controller's (template labels, controller ownerReference, no tracking finalizer), a terminal pod status with
// the container's termination message, then the Job's terminal status in one /status update (sequence A or B) with
// whole-second timestamps.
import * as k8s from "@kubernetes/client-node";

/** An RFC 3339 timestamp with whole seconds (metav1.Time keeps seconds only; see §5.6). */
export function wholeSecond(ms = Date.now()): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export interface PodOutcome {
  /** Exit code of the (first) container; 0 = success. */
  exitCode: number;
  /** Termination message (what the kubelet reads from /dev/termination-log or the log tail). */
  message?: string;
  /** finishedAt of the container, whole seconds (default now). */
  finishedAtMs?: number;
}

/** Creates a pod of `job` the way the Job controller does and gives it a terminal status. */
export async function runnerPod(kc: k8s.KubeConfig, job: k8s.V1Job, outcome: PodOutcome): Promise<k8s.V1Pod> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const ns = job.metadata!.namespace!;
  const pod = await core.createNamespacedPod({
    namespace: ns,
    body: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        generateName: `${job.metadata!.name}-`,
        namespace: ns,
        labels: { ...(job.spec!.template.metadata?.labels ?? {}) },
        annotations: { ...(job.spec!.template.metadata?.annotations ?? {}) },
        ownerReferences: [{
          apiVersion: "batch/v1", kind: "Job", name: job.metadata!.name!, uid: job.metadata!.uid!, controller: true, blockOwnerDeletion: true,
        }],
      },
      spec: job.spec!.template.spec!,
    },
  });
  const finished = outcome.finishedAtMs ?? Date.now();
  const started = wholeSecond(finished - 1000);
  const containers = job.spec!.template.spec!.containers;
  await core.patchNamespacedPodStatus({
    name: pod.metadata!.name!,
    namespace: ns,
    body: [{
      op: "add",
      path: "/status",
      value: {
        phase: outcome.exitCode === 0 ? "Succeeded" : "Failed",
        startTime: started,
        containerStatuses: containers.map((c, i) => ({
          name: c.name, image: c.image ?? "busybox", imageID: "", ready: false, started: false, restartCount: 0,
          state: {
            terminated: {
              exitCode: i === 0 ? outcome.exitCode : 0,
              reason: i === 0 && outcome.exitCode !== 0 ? "Error" : "Completed",
              ...(i === 0 && outcome.message !== undefined ? { message: outcome.message } : {}),
              startedAt: started,
              finishedAt: wholeSecond(finished),
            },
          },
        })),
      },
    }],
  });
  return pod;
}

async function readJob(kc: k8s.KubeConfig, ns: string, name: string): Promise<k8s.V1Job> {
  return kc.makeApiClient(k8s.BatchV1Api).readNamespacedJob({ name, namespace: ns });
}

/** Sequence A: SuccessCriteriaMet + Complete, startTime ≤ completionTime, counters consistent. */
export async function markJobComplete(kc: k8s.KubeConfig, ns: string, name: string, opts: { pod?: boolean } = {}): Promise<void> {
  const job = await readJob(kc, ns, name);
  if (opts.pod !== false) await runnerPod(kc, job, { exitCode: 0, message: "all good" });
  const now = wholeSecond();
  const msg = "Reached expected number of succeeded pods";
  await kc.makeApiClient(k8s.BatchV1Api).patchNamespacedJobStatus({
    name, namespace: ns,
    body: [{
      op: "add", path: "/status",
      value: {
        startTime: now, completionTime: now, active: 0, ready: 0, terminating: 0, succeeded: 1, uncountedTerminatedPods: {},
        conditions: [
          { type: "SuccessCriteriaMet", status: "True", reason: "CompletionsReached", message: msg, lastTransitionTime: now },
          { type: "Complete", status: "True", reason: "CompletionsReached", message: msg, lastTransitionTime: now },
        ],
      },
    }],
  });
}

export interface FailOptions {
  /** Termination messages of the failed pods, oldest first (one pod each); none = no pods. */
  podMessages?: Array<string | undefined>;
  conditionReason?: string;
  conditionMessage?: string;
}

/** Sequence B: FailureTarget + Failed, no completionTime; optional failed pods with termination messages. */
export async function markJobFailed(kc: k8s.KubeConfig, ns: string, name: string, opts: FailOptions = {}): Promise<void> {
  const job = await readJob(kc, ns, name);
  const messages = opts.podMessages ?? [];
  const base = Date.now() - messages.length * 1000;
  for (let i = 0; i < messages.length; i++) {
    await runnerPod(kc, job, { exitCode: 1, message: messages[i], finishedAtMs: base + i * 1000 });
  }
  const now = wholeSecond();
  const reason = opts.conditionReason ?? "BackoffLimitExceeded";
  const message = opts.conditionMessage ?? "Job has reached the specified backoff limit";
  await kc.makeApiClient(k8s.BatchV1Api).patchNamespacedJobStatus({
    name, namespace: ns,
    body: [{
      op: "add", path: "/status",
      value: {
        startTime: now, active: 0, ready: 0, terminating: 0, failed: Math.max(1, messages.length), uncountedTerminatedPods: {},
        conditions: [
          { type: "FailureTarget", status: "True", reason, message, lastTransitionTime: now },
          { type: "Failed", status: "True", reason, message, lastTransitionTime: now },
        ],
      },
    }],
  });
}

/** Waits until Job `name` exists (and, with `notUid`, is a different Job than that uid); returns it. */
export async function waitForJob(
  kc: k8s.KubeConfig, ns: string, name: string, opts: { notUid?: string; timeoutMs?: number } = {},
): Promise<k8s.V1Job> {
  const batch = kc.makeApiClient(k8s.BatchV1Api);
  const deadline = Date.now() + (opts.timeoutMs ?? 15000);
  for (;;) {
    try {
      const job = await batch.readNamespacedJob({ name, namespace: ns });
      if (!opts.notUid || job.metadata?.uid !== opts.notUid) return job;
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err;
    }
    if (Date.now() > deadline) throw new Error(`Job ${ns}/${name} did not appear within ${opts.timeoutMs ?? 15000} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
