// The healthcheck runner: Omni's Job state machine (omni-behaviour.md §4.3), failure text (§4.4) and deletion (§4.8),
// driven by a watch on the Job and one on its pods instead of a fixed requeue, so a pass is seen as soon as it is settled.
//
// Every observed state of the Job (with its pods) is evaluated with the table below; evaluations that end nothing wait
// for the next change of the Job or of its pods (a watch event), not for an interval:
//   absent               → create (AlreadyExists ignored)                     → running
//   deletionTimestamp    → (the previous Job is still going away)            → running
//   not created by this run (uid from our create response, this run's nonce)
//                        → delete, create our own                            → running (a forged pass never counts)
//   config hash differs  → delete, create the new one                        → running (a stale pass never counts)
//   Complete=True        → delete Job and pods (in the background*)          → passed, decided by "Job Complete"
//   Failed=True          → read the failure text, then delete Job and pods   → failed
//   its one pod settles it (runnerPod.ts: a Job that succeeds when its one pod succeeds, that pod counted by the Job
//   controller and Succeeded with every container exit 0, no failure recorded; re-checked on a fresh read of the Job)
//                        → delete Job and pods (in the background*)          → passed, decided by "pod <name> Succeeded"
//   otherwise            →                                                   → running
// * A pass returns before its Job is deleted (tens of ms under load); the next run of the same check, a sweep and the
//   port's close wait for that deletion, so a deleted Job's Complete never counts twice and nothing is left behind.
// The pod row saves the Job controller's 1 s pod-update batch (its Complete comes that much later); every other Job,
// and every failure, is still read from the Job. A pod only counts when the Job controller itself would count it
// (controller ownerReference to this run's Job uid, controller-uid label, tracking finalizer) and is the Job's only
// pod: a pod forged with the Job's labels never opens the gate.
// Anyone who may create Jobs in the check's namespace could otherwise pre-create `talos-gate-<id>` with the (public)
// config hash running `true` and open the gate: only the uid this run's create returned is trusted.
// Deletes carry a uid precondition, so an evaluation of a stale event can never delete a newer Job of the same name.
// Outcomes are also recorded as Events on the Job (HealthcheckPassed saying which signal decided, HealthcheckFailed
// with the failure text), which `kubectl get events -n <namespace>` shows for an hour after the Job itself is gone.
import { randomBytes } from "node:crypto";
import type * as k8s from "./k8s";
import type { CheckOutcome, HealthcheckJob, RolloutEvent } from "../rollout/ports";
import { whenAborted } from "../abort";
import { KubeClients } from "./client";
import { apiMessage, backoffMs, redactSecrets, isAlreadyExists, isConflict, isNotFound, isTransient, KubeError, sleep, statusOf } from "./errors";
import { CONFIG_HASH_ANNOTATION, JOB_NAME_LABEL, RUN_NONCE_ANNOTATION, RUNNER_APP_LABEL, RUNNER_APP_VALUE } from "./labels";
import { msg } from "./messages";
import { scopeLabels, type RunnerScope } from "./sweep";
import { CONTROLLER_UID_LABEL, samePod, settlingPod, trimPod } from "./runnerPod";
import { ObjectObserver, SetObserver, type Observed } from "./watch";

type Log = (line: string) => void;
/** Where the runner reports outcomes as Events on the runner Job (HealthcheckPassed / HealthcheckFailed). */
type RecordEvent = (event: RolloutEvent) => void;

/**
 * The runner Jobs this run (one Kubernetes port) created, by namespace/name → uid from the create response, and the
 * run's nonce stamped on each. A verdict counts only from a Job found here: "this run" spans the port's lifetime, so a
 * Job an aborted evaluation left is picked up by the next one, while one left by another process is replaced.
 */
export class RunnerJobs {
  readonly nonce = randomBytes(12).toString("hex");
  private readonly uids = new Map<string, string>();

  /** The cluster and owner labels this run's Jobs carry, so a sweep takes only them (sweep.ts). */
  constructor(readonly scope?: RunnerScope) {}

  /** Deletions of passed runner Jobs still in flight, by namespace/name (a pass does not wait for its cleanup). */
  private readonly cleanups = new Map<string, Promise<void>>();

  /** Runs `deletion` of a passed Job in the background; the next check of the name, a sweep and close wait for it. */
  cleanUp(namespace: string, name: string, deletion: Promise<void>, log: Log): void {
    const key = `${namespace}/${name}`;
    const done: Promise<void> = deletion
      .catch((err: unknown) => log((err as Error).message))
      .finally(() => {
        if (this.cleanups.get(key) === done) this.cleanups.delete(key);
      });
    this.cleanups.set(key, done);
  }

  /** Waits for the cleanup of one Job name, or of all (bounded by the requests' own timeouts). */
  async cleanedUp(namespace?: string, name?: string): Promise<void> {
    if (namespace !== undefined && name !== undefined) await this.cleanups.get(`${namespace}/${name}`);
    else await Promise.all(this.cleanups.values());
  }

  created(namespace: string, name: string, uid: string | undefined): void {
    if (uid) this.uids.set(`${namespace}/${name}`, uid);
  }

  /** Whether `job` is the one this run created under its name (uid and nonce both match). */
  owns(job: k8s.V1Job): boolean {
    const key = `${job.metadata?.namespace}/${job.metadata?.name}`;
    const uid = job.metadata?.uid;
    return uid !== undefined && this.uids.get(key) === uid && job.metadata?.annotations?.[RUN_NONCE_ANNOTATION] === this.nonce;
  }
}

/** The Job to submit: the composed object with name, namespace, runner label and config-hash annotation enforced. */
export function jobBody(check: HealthcheckJob, nonce?: string, scope?: RunnerScope): k8s.V1Job {
  const own = { ...scopeLabels(scope), [RUNNER_APP_LABEL]: RUNNER_APP_VALUE };
  // The composed Job was checked to be a Job at composition (template/jobmanifest.ts); fields it lacks default below.
  const job = check.job as k8s.V1Job;
  const meta = job.metadata ?? {};
  const spec = job.spec ?? ({} as Partial<k8s.V1JobSpec>);
  const template = spec.template ?? {};
  const tmeta = template.metadata ?? {};
  return {
    ...job,
    apiVersion: job.apiVersion ?? "batch/v1",
    kind: job.kind ?? "Job",
    metadata: {
      ...meta,
      name: check.jobName,
      namespace: check.namespace,
      labels: { ...(meta.labels ?? {}), ...own },
      // Without the hash the Job would look outdated forever (delete/create loop), so it is always set.
      annotations: {
        ...(meta.annotations ?? {}), [CONFIG_HASH_ANNOTATION]: check.configHash, ...(nonce ? { [RUN_NONCE_ANNOTATION]: nonce } : {}),
      },
    },
    spec: {
      ...spec,
      template: { ...template, metadata: { ...tmeta, labels: { ...(tmeta.labels ?? {}), ...own } } },
    },
  };
}

function firstCondition(job: k8s.V1Job, type: string): k8s.V1JobCondition | undefined {
  return job.status?.conditions?.find((c) => c.type === type);
}

const time = (t: unknown): number => (t === undefined || t === null ? Number.NEGATIVE_INFINITY : new Date(t as string).getTime());

/**
 * Omni's failure text: the termination message of the most recently finished failed container of the Job's pods,
 * else `<condition reason>: <condition message>`. Pods of an older Job of the same name (other controller uid) are
 * ignored.
 */
export function failureText(job: k8s.V1Job, pods: k8s.V1Pod[]): string {
  return cutFailureText(rawFailureText(job, pods));
}

/**
 * The failure text goes to the status, the status ConfigMap, Events and progress lines; with FallbackToLogsOnError it
 * is the tail of a pod's log, which may print a token. Token-like strings are redacted and the text cut to what a
 * reader needs (the step cuts each reason further, to Omni's 256 bytes).
 */
export const MAX_FAILURE_TEXT = 1024;
function cutFailureText(text: string): string {
  const clean = redactSecrets(text);
  return clean.length > MAX_FAILURE_TEXT ? `${clean.slice(0, MAX_FAILURE_TEXT)}...` : clean;
}

function rawFailureText(job: k8s.V1Job, pods: k8s.V1Pod[]): string {
  const uid = job.metadata?.uid;
  let best: { at: number; text: string } | undefined;
  for (const pod of pods) {
    const podUid = pod.metadata?.labels?.[CONTROLLER_UID_LABEL];
    if (uid && podUid && podUid !== uid) continue;
    for (const cs of pod.status?.containerStatuses ?? []) {
      const t = cs.state?.terminated;
      if (!t || t.exitCode === 0) continue;
      const text = (t.message ?? "").trim();
      if (!text) continue;
      const at = time(t.finishedAt);
      if (!best || at > best.at) best = { at, text };
    }
  }
  if (best) return best.text;
  const failed = firstCondition(job, "Failed");
  return msg.jobConditionText(failed?.reason, failed?.message);
}

/**
 * Omni's `deleteHealthCheckJob`: delete the Job (Background, grace 0; NotFound ignored), then the runner's pods by
 * job-name label (errors only logged). With `uid`, only that Job and its own pods (controller-uid label) are deleted,
 * both at once: if another Job holds the name now, neither it nor its pods are touched.
 */
export async function deleteRunner(c: KubeClients, namespace: string, name: string, uid: string | undefined, log: Log): Promise<void> {
  const job = async (): Promise<boolean> => {
    try {
      await c.batch.deleteNamespacedJob({
        name, namespace, propagationPolicy: "Background", gracePeriodSeconds: 0,
        body: { propagationPolicy: "Background", gracePeriodSeconds: 0, ...(uid ? { preconditions: { uid } } : {}) },
      });
    } catch (err) {
      if (isConflict(err)) return false; // a newer Job holds the name
      if (!isNotFound(err)) throw jobError("delete", namespace, name, err);
    }
    return true;
  };
  const pods = async (labelSelector: string): Promise<void> => {
    try {
      await c.core.deleteCollectionNamespacedPod({ namespace, labelSelector });
    } catch (err) {
      log(msg.jobRequestFailed("deleting the runner's pods", namespace, name, apiMessage(err), statusOf(err)));
    }
  };
  if (uid) {
    await Promise.all([job(), pods(`${CONTROLLER_UID_LABEL}=${uid}`)]);
    return;
  }
  if (await job()) await pods(`${JOB_NAME_LABEL}=${name}`);
}

function jobError(op: string, ns: string, name: string, err: unknown): Error {
  if (err instanceof KubeError) return err;
  const status = statusOf(err);
  const detail = apiMessage(err);
  if (op === "create" && status === 404) return new KubeError(msg.jobNamespaceMissing(ns, name), status, "NotFound");
  if (op === "create" && (status === 422 || status === 400)) return new KubeError(msg.jobInvalid(ns, name, detail), status, "Invalid");
  const e = new KubeError(msg.jobRequestFailed(op, ns, name, detail, status), status);
  (e as { transient?: boolean }).transient = isTransient(err);
  return e;
}

const retryable = (err: unknown): boolean =>
  err instanceof KubeError ? Boolean((err as { transient?: boolean }).transient) : isTransient(err);

/**
 * One evaluation of the table above; undefined while the Job is still running. `created` is called once the Job this
 * evaluation submitted is in (or the name was taken meanwhile).
 */
async function evaluate(
  c: KubeClients, check: HealthcheckJob, job: k8s.V1Job | undefined, pods: readonly k8s.V1Pod[] | undefined, ours: RunnerJobs, log: Log,
  record: RecordEvent, created: () => void = () => undefined,
): Promise<CheckOutcome | undefined> {
  const { namespace, jobName } = check;
  const create = async () => {
    try {
      const made = await c.batch.createNamespacedJob({ namespace, body: jobBody(check, ours.nonce, ours.scope) });
      ours.created(namespace, jobName, made.metadata?.uid);
    } catch (err) {
      // Someone else's Job took the name meanwhile: its next event is not ours, so it is replaced then.
      if (!isAlreadyExists(err)) throw jobError("create", namespace, jobName, err);
    }
    created();
  };
  if (!job) {
    await create();
    return undefined;
  }
  if (job.metadata?.deletionTimestamp) return undefined;
  const uid = job.metadata?.uid;
  const object = { kind: "Job" as const, name: jobName, namespace, uid };
  if (!ours.owns(job)) {
    log(msg.foreignJobReplaced(namespace, jobName, uid ?? ""));
    await deleteRunner(c, namespace, jobName, uid, log);
    await create();
    return undefined;
  }
  if (job.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] !== check.configHash) {
    await deleteRunner(c, namespace, jobName, uid, log);
    await create();
    return undefined;
  }
  if (firstCondition(job, "Complete")?.status === "True") {
    ours.cleanUp(namespace, jobName, deleteRunner(c, namespace, jobName, uid, log), log);
    record({ object, reason: "HealthcheckPassed", message: msg.healthcheckPassedEvent(msg.passedByJob()) });
    return { state: "passed" };
  }
  if (firstCondition(job, "Failed")?.status === "True") {
    let pods: k8s.V1Pod[] = [];
    try {
      pods = (await c.core.listNamespacedPod({ namespace, labelSelector: `${JOB_NAME_LABEL}=${jobName}` })).items;
    } catch (err) {
      log(msg.jobRequestFailed("listing the runner's pods", namespace, jobName, apiMessage(err), statusOf(err)));
    }
    const reason = failureText(job, pods);
    await deleteRunner(c, namespace, jobName, uid, log);
    record({ object, type: "Warning", reason: "HealthcheckFailed", message: reason });
    return { state: "failed", reason };
  }
  if (pods && settlingPod(job, pods)) {
    // The Job and pod watches are two streams: a fresh (quorum) read of the Job makes sure no failure was recorded
    // after the Job event held here, before the pod's success is taken as the Job's.
    const fresh = await readJob(c, namespace, jobName);
    if (!fresh || fresh.metadata?.uid !== uid || fresh.metadata?.deletionTimestamp || !ours.owns(fresh)) return undefined;
    const pod = settlingPod(fresh, pods);
    if (!pod) return evaluate(c, check, fresh, undefined, ours, log, record, created);
    ours.cleanUp(namespace, jobName, deleteRunner(c, namespace, jobName, uid, log), log);
    record({ object, reason: "HealthcheckPassed", message: msg.healthcheckPassedEvent(msg.passedByPod(pod.metadata?.name ?? "")) });
    return { state: "passed" };
  }
  return undefined;
}

/**
 * POSTs the check's Job before anything is read: on a gate's path, listing first (to find a Job of that name) was a
 * round trip before the Job controller could start (issue 23). Created, the Job is ours, and the observers' list
 * shows it. Refused for any reason — a Job of that name exists (ours still being deleted, or someone else's), no right
 * to create, a transient error —, nothing is decided here: the observers' list decides as before (a foreign Job is
 * replaced, an outdated one recreated), and a refusal that persists is reported by that create.
 */
async function createBeforeReading(c: KubeClients, check: HealthcheckJob, ours: RunnerJobs): Promise<void> {
  try {
    const made = await c.batch.createNamespacedJob({ namespace: check.namespace, body: jobBody(check, ours.nonce, ours.scope) });
    ours.created(check.namespace, check.jobName, made.metadata?.uid);
  } catch {
    // decided on the list below
  }
}

async function readJob(c: KubeClients, namespace: string, name: string): Promise<k8s.V1Job | undefined> {
  try {
    return await c.batch.readNamespacedJob({ name, namespace });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw jobError("read", namespace, name, err);
  }
}

type Waited<T> = { ok: true; value: T } | { ok: false; err: unknown };
const settle = <T>(p: Promise<T>): Promise<Waited<T>> => p.then((value) => ({ ok: true as const, value }), (err) => ({ ok: false as const, err }));

/**
 * The next change of the runner Job or of its pods. Each side's pending wait is kept across calls (a Mailbox has one
 * waiter); a pod watch that fails for good (e.g. no `watch` on pods) is logged once and dropped: the Job decides alone.
 */
class JobAndPods {
  pods: k8s.V1Pod[] | undefined = [];
  private jobWait: Promise<Waited<Observed<k8s.V1Job> | undefined>> | undefined;
  private podWait: Promise<Waited<{ objects: k8s.V1Pod[] } | undefined>> | undefined;

  constructor(
    private readonly job: ObjectObserver<k8s.V1Job>, private readonly podObserver: SetObserver<k8s.V1Pod>,
    private readonly podWatchLost: (err: unknown) => void,
  ) {}

  /** The newest Job state after the next change (`current` when only the pods changed); undefined once stopped. */
  async next(current: Observed<k8s.V1Job>): Promise<Observed<k8s.V1Job> | undefined> {
    this.jobWait ??= settle(this.job.next());
    if (this.pods) this.podWait ??= settle(this.podObserver.next());
    const first = await Promise.race([this.jobWait.then((r) => ({ side: "job" as const, r })),
      ...(this.podWait ? [this.podWait.then((r) => ({ side: "pods" as const, r }))] : [])]);
    if (first.side === "job") {
      this.jobWait = undefined;
      if (!first.r.ok) throw first.r.err;
      return first.r.value;
    }
    this.podWait = undefined;
    if (!first.r.ok) {
      this.pods = undefined;
      this.podWatchLost(first.r.err);
    } else if (first.r.value) {
      this.pods = first.r.value.objects;
    }
    return this.job.take() ?? current;
  }

  /** The newest Job state not consumed yet, without waiting. */
  take(): Observed<k8s.V1Job> | undefined {
    return this.job.take();
  }
}

/**
 * Runs one healthcheck to its end (passed / failed), or until `signal` aborts (running, "waiting to complete"; the Job
 * is left in place for the next evaluation). API server outages are waited out; permanent errors (namespace missing,
 * Job rejected, forbidden) reject with a message naming the Job.
 */
export async function runCheck(
  c: KubeClients,
  check: HealthcheckJob,
  opts: { signal?: AbortSignal; log: Log; record?: RecordEvent; ours?: RunnerJobs },
): Promise<CheckOutcome> {
  const ours = opts.ours ?? new RunnerJobs();
  const record: RecordEvent = opts.record ?? (() => undefined);
  const running: CheckOutcome = { state: "running", reason: msg.waitingToComplete() };
  const signal = opts.signal;
  if (signal?.aborted) return running;
  const { namespace, jobName } = check;
  // The previous pass of this check may still be deleting its Job: that Job's Complete must not count again.
  await ours.cleanedUp(namespace, jobName);
  await createBeforeReading(c, check, ours);
  if (signal?.aborted) return running; // aborted during the requests above: the Job stays for the next evaluation
  const observer = new ObjectObserver<k8s.V1Job>({
    clients: c,
    path: `/apis/batch/v1/namespaces/${encodeURIComponent(namespace)}/jobs`,
    name: jobName,
    list: () => c.batch.listNamespacedJob({ namespace, fieldSelector: `metadata.name=${jobName}` }),
    log: opts.log,
  });
  // The runner's pods by job-name (what the API server sets on every pod of the Job); runnerPod.ts picks the Job's own.
  const podObserver = new SetObserver<k8s.V1Pod>({
    clients: c,
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
    labelSelector: `${JOB_NAME_LABEL}=${jobName}`,
    list: () => c.core.listNamespacedPod({ namespace, labelSelector: `${JOB_NAME_LABEL}=${jobName}` }),
    trim: trimPod,
    same: samePod,
    log: opts.log,
  });
  const changes = new JobAndPods(observer, podObserver, (err) => {
    podObserver.stop();
    opts.log(msg.podWatchUnavailable(namespace, jobName, apiMessage(err)));
  });
  const stopObservers = () => {
    observer.stop();
    podObserver.stop();
  };
  const stop = new AbortController();
  const aborted = new Promise<CheckOutcome>((resolve) => stop.signal.addEventListener("abort", () => resolve(running), { once: true }));
  // Also an abort that landed while the Job was POSTed above: the check ends as "running", its Job left in place.
  const forget = whenAborted(signal, () => {
    stop.abort();
    stopObservers();
  });
  const work = (async (): Promise<CheckOutcome> => {
    let attempt = 0;
    let state = await observer.next().catch((err) => {
      throw jobError("list", namespace, jobName, err);
    });
    /** The Job state a Job was created on (absent, someone else's, outdated): evaluated once, whatever the pods do. */
    let createdOn: Observed<k8s.V1Job> | undefined;
    while (state && !stop.signal.aborted) {
      try {
        // A change of the pods alone hands back the same Job state: after a create on it, the Job's own next event
        // decides (evaluated again, each pod event before it POSTed the Job again: ~3 AlreadyExists per gate).
        if (state !== createdOn) {
          const seen = state;
          const outcome = await evaluate(c, check, seen.object, changes.pods, ours, opts.log, record, () => (createdOn = seen));
          if (outcome) return outcome;
        }
        attempt = 0;
        state = await changes.next(state);
      } catch (err) {
        if (!retryable(err)) throw jobError("watch", namespace, jobName, err);
        opts.log(msg.retrying((err as Error).message));
        await sleep(backoffMs(attempt++, 200, 2000), stop.signal);
        state = changes.take() ?? state; // act on the newest state known
      }
    }
    return running;
  })();
  try {
    return await Promise.race([work, aborted]);
  } finally {
    work.catch(() => undefined);
    forget();
    stopObservers();
    stop.abort();
  }
}
