// The Job controller, as far as NonIndexed batch/v1 Jobs go: creates pods (generateName "<job>-", template labels +
// job-name/controller-uid labels, controller ownerReference, spec.nodeName chosen round-robin among Ready schedulable
// nodes, or bound later when none is available), counts them, applies backoffLimit (exponential pod-failure
// back-off, 10 s base by default like the real controller) and activeDeadlineSeconds, and writes Job status the way
// the 1.31+ controller does: interim SuccessCriteriaMet / FailureTarget while pods are still terminating, then
// Complete (+completionTime) or Failed (no completionTime), whole-second timestamps, read-modify-write from the
// server copy with 409 retries. With no garbage collector in the API server, it also deletes the pods of a deleted
// Job (what Background propagation would do).
import { Reflector } from "./reflector";
import { KeyedQueue } from "./workqueue";
import { Rest, isNotFound, nowTime, retrying } from "./rest";
import { NodeScheduler } from "./scheduler";
import { Condition, Job, Pod, controllerOf, isPodReady, isTerminal, jobPath, key, podPath } from "./types";

export interface JobControllerOptions {
  rest: Rest;
  jobs: Reflector<Job>;
  pods: Reflector<Pod>;
  scheduler: NodeScheduler;
  log: (msg: string) => void;
  /** Base of the exponential back-off between failed pods (real controller: 10 s, doubling, capped at 10 min). */
  podFailureBackoffMs?: number;
}

const MAX_BACKOFF_MS = 10 * 60 * 1000;

interface JobState {
  uid: string;
  failed: Set<string>;
  succeeded: Set<string>;
  lastFailureAt: number;
  timer?: NodeJS.Timeout;
  timerAt?: number;
  creating: number;
  lastPods: Map<string, Pod>;
  /** The interim condition once decided: the Job cache may still lag behind our own status write, and a stale
   * copy without it must not make the next sync create a replacement pod (upstream guards this with expectations). */
  decided?: Condition;
}

export const JOB_REASONS = {
  completions: { reason: "CompletionsReached", message: "Reached expected number of succeeded pods" },
  backoff: { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" },
  deadline: { reason: "DeadlineExceeded", message: "Job was active longer than specified deadline" },
} as const;

function condTrue(conds: Condition[] | undefined, type: string): Condition | undefined {
  return (conds ?? []).find((c) => c.type === type && c.status === "True");
}

export function jobFinished(job: Job): boolean {
  return !!(condTrue(job.status?.conditions, "Complete") || condTrue(job.status?.conditions, "Failed"));
}

export class JobController {
  private readonly state = new Map<string, JobState>();
  private readonly queue = new KeyedQueue("job controller", (k) => this.sync(k), (m) => this.o.log(m));
  podsCreated = 0;
  statusWrites = 0;

  constructor(private readonly o: JobControllerOptions) {}

  start(): void {
    this.o.jobs.on("add", (j) => this.enqueue(key(j)));
    this.o.jobs.on("update", (j) => this.enqueue(key(j)));
    this.o.jobs.on("delete", (j) => this.onJobDeleted(j));
    const onPod = (p: Pod, gone = false) => {
      const ref = controllerOf(p);
      if (ref?.kind !== "Job" || ref.apiVersion !== "batch/v1") return;
      const k = `${p.metadata.namespace}/${ref.name}`;
      const st = this.state.get(k);
      if (st && st.uid === ref.uid) this.observe(st, p, gone);
      this.enqueue(k);
    };
    this.o.pods.on("add", (p) => onPod(p));
    this.o.pods.on("update", (p) => onPod(p));
    this.o.pods.on("delete", (p) => onPod(p, true));
    for (const j of this.o.jobs.list()) this.enqueue(key(j));
  }

  async stop(): Promise<void> {
    const done = this.queue.stop();
    for (const st of this.state.values()) if (st.timer) clearTimeout(st.timer);
    await done;
  }

  stats() {
    return { jobs: this.state.size, podsCreated: this.podsCreated, statusWrites: this.statusWrites };
  }

  /** Remembers terminal pods (the real controller tracks them with a finalizer; the sim keeps them in memory). */
  private observe(st: JobState, p: Pod, gone: boolean): void {
    const uid = p.metadata.uid;
    if (p.status?.phase === "Succeeded") st.succeeded.add(uid);
    else if (p.status?.phase === "Failed" || gone) {
      if (!st.failed.has(uid) && !st.succeeded.has(uid)) {
        st.failed.add(uid);
        const fin = p.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt;
        st.lastFailureAt = Math.max(st.lastFailureAt, fin ? Date.parse(fin) : Date.now(), gone ? Date.now() : 0);
      }
    }
    if (gone) st.lastPods.delete(uid);
    else st.lastPods.set(uid, p);
  }

  private enqueue(k: string): void {
    this.queue.enqueue(k);
  }

  private podsOf(job: Job): Pod[] {
    const uid = job.metadata.uid;
    return this.o.pods.list().filter((p) => p.metadata.namespace === job.metadata.namespace && controllerOf(p)?.uid === uid);
  }

  private stateOf(job: Job): JobState {
    const k = key(job);
    let st = this.state.get(k);
    if (!st || st.uid !== job.metadata.uid) {
      if (st?.timer) clearTimeout(st.timer);
      st = { uid: job.metadata.uid, failed: new Set(), succeeded: new Set(), lastFailureAt: 0, creating: 0, lastPods: new Map() };
      this.state.set(k, st);
      for (const p of this.podsOf(job)) this.observe(st, p, false);
    }
    return st;
  }

  /** Re-syncs the Job at `atMs` (keeps the earliest pending wake-up: deadline or end of back-off). */
  private schedule(st: JobState, k: string, atMs: number): void {
    if (st.timer && st.timerAt !== undefined && st.timerAt <= atMs) return;
    if (st.timer) clearTimeout(st.timer);
    st.timerAt = atMs;
    st.timer = setTimeout(() => {
      st.timer = undefined;
      st.timerAt = undefined;
      this.enqueue(k);
    }, Math.max(0, atMs - Date.now()) + 20);
    st.timer.unref();
  }

  private onJobDeleted(job: Job): void {
    const k = key(job);
    const st = this.state.get(k);
    if (st?.timer) clearTimeout(st.timer);
    if (st?.uid === job.metadata.uid) this.state.delete(k);
    // No garbage collector runs: delete the Job's pods like Background propagation would (the kubelet stops them).
    for (const p of this.podsOf(job)) void this.deletePod(p, "its Job was deleted");
  }

  private async deletePod(p: Pod, why: string): Promise<void> {
    if (p.metadata.deletionTimestamp) return;
    try {
      await retrying(`job controller: delete pod ${key(p)} (${why})`, () =>
        this.o.rest.delete(podPath(p.metadata.namespace!, p.metadata.name), { apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: p.metadata.uid } }),
      { isStopped: () => this.queue.isStopped });
    } catch (err) {
      if (!isNotFound(err) && !this.queue.isStopped && (err as { code?: number }).code !== 409) this.o.log((err as Error).message);
    }
  }

  private async createPod(job: Job, st: JobState): Promise<void> {
    const tpl = job.spec.template ?? {};
    const ns = job.metadata.namespace!;
    const labels: Record<string, string> = {
      ...(tpl.metadata?.labels ?? {}),
      "batch.kubernetes.io/job-name": job.metadata.name,
      "job-name": job.metadata.name,
      "batch.kubernetes.io/controller-uid": job.metadata.uid,
      "controller-uid": job.metadata.uid,
    };
    const spec = { ...(tpl.spec ?? {}) };
    if (!spec.nodeName) {
      const node = this.o.scheduler.pick(spec);
      if (node) spec.nodeName = node;
    }
    const body = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        generateName: `${job.metadata.name}-`,
        namespace: ns,
        labels,
        ...(tpl.metadata?.annotations ? { annotations: tpl.metadata.annotations } : {}),
        ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name: job.metadata.name, uid: job.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      spec,
    };
    st.creating++;
    try {
      const pod = await retrying(`job controller: create pod for Job ${key(job)}`, () => this.o.rest.post<Pod>(podPath(ns), body), { isStopped: () => this.queue.isStopped });
      st.lastPods.set(pod.metadata.uid, pod);
      this.podsCreated++;
    } finally {
      st.creating--;
    }
  }

  private async sync(k: string): Promise<void> {
    const [ns, name] = k.split("/");
    const job = this.o.jobs.get(ns, name);
    if (!job || this.queue.isStopped) return;
    const st = this.stateOf(job);
    if (jobFinished(job)) {
      if (st.timer) clearTimeout(st.timer);
      return;
    }
    if (job.spec?.suspend) return; // suspended Jobs: not emulated (no pods are created)
    // Pods from the cache, plus ones this controller just created that the watch has not delivered yet.
    const byUid = new Map<string, Pod>();
    for (const p of st.lastPods.values()) byUid.set(p.metadata.uid, p);
    for (const p of this.podsOf(job)) byUid.set(p.metadata.uid, p);
    const pods = [...byUid.values()];
    const live = pods.filter((p) => !isTerminal(p));
    const active = live.filter((p) => !p.metadata.deletionTimestamp);
    const completions: number | null = job.spec.completions ?? null;
    const parallelism: number = job.spec.parallelism ?? 1;
    const backoffLimit: number = job.spec.backoffLimit ?? 6;
    const succeeded = Math.max(job.status?.succeeded ?? 0, st.succeeded.size);
    const failed = Math.max(job.status?.failed ?? 0, st.failed.size);
    // restartPolicy OnFailure: container restarts of active pods count against backoffLimit, as upstream.
    const restarts = job.spec.template?.spec?.restartPolicy === "OnFailure"
      ? active.reduce((n, p) => n + (p.status?.containerStatuses ?? []).reduce((m: number, c: { restartCount?: number }) => m + (c.restartCount ?? 0), 0), 0)
      : 0;
    const now = Date.now();
    const startTime: string = job.status?.startTime ?? nowTime(now);
    const conds: Condition[] = job.status?.conditions ?? [];
    let success = condTrue(conds, "SuccessCriteriaMet") ?? (st.decided?.type === "SuccessCriteriaMet" ? st.decided : undefined);
    let failure = condTrue(conds, "FailureTarget") ?? (st.decided?.type === "FailureTarget" ? st.decided : undefined);
    const t = nowTime(now);
    const mk = (type: string, r: { reason: string; message: string }): Condition => ({ type, status: "True", lastProbeTime: t, lastTransitionTime: t, reason: r.reason, message: r.message });
    if (!success && !failure) {
      const done = completions !== null ? succeeded >= completions : succeeded >= 1 && active.length === 0;
      const deadline = job.spec.activeDeadlineSeconds;
      if (done) success = mk("SuccessCriteriaMet", JOB_REASONS.completions);
      else if (failed + restarts > backoffLimit) failure = mk("FailureTarget", JOB_REASONS.backoff);
      else if (deadline !== undefined && deadline !== null && now >= Date.parse(startTime) + deadline * 1000) failure = mk("FailureTarget", JOB_REASONS.deadline);
      else if (deadline !== undefined && deadline !== null) this.schedule(st, k, Date.parse(startTime) + deadline * 1000);
    }
    if (success || failure) {
      st.decided ??= success ?? failure;
      for (const p of active) await this.deletePod(p, success ? "Job succeeded" : `Job failed: ${failure!.reason}`);
    } else {
      const wanted = completions !== null ? Math.min(parallelism, completions - succeeded) : succeeded > 0 ? 0 : parallelism;
      const missing = wanted - active.length - st.creating;
      if (missing > 0) {
        const backoffMs = failed > 0 ? Math.min((this.o.podFailureBackoffMs ?? 10000) * 2 ** (failed - 1), MAX_BACKOFF_MS) : 0;
        const notBefore = st.lastFailureAt + backoffMs;
        if (failed > 0 && now < notBefore) this.schedule(st, k, notBefore);
        else for (let i = 0; i < missing; i++) await this.createPod(job, st);
      }
    }
    await this.writeStatus(job, st, { startTime, success, failure });
  }

  private async writeStatus(job: Job, st: JobState, c: { startTime: string; success?: Condition; failure?: Condition }): Promise<void> {
    const ns = job.metadata.namespace!;
    await retrying(`job controller: status of Job ${key(job)}`, async () => {
      // Read-modify-write from the server copy: never re-send a cached timestamp (whole-second precision rules).
      let cur: Job;
      try {
        cur = await this.o.rest.get<Job>(jobPath(ns, job.metadata.name));
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      if (cur.metadata.uid !== job.metadata.uid || jobFinished(cur)) return;
      const pods = [...st.lastPods.values()];
      const live = pods.filter((p) => !isTerminal(p));
      const active = live.filter((p) => !p.metadata.deletionTimestamp).length + st.creating;
      const terminating = live.filter((p) => p.metadata.deletionTimestamp).length;
      const ready = live.filter((p) => !p.metadata.deletionTimestamp && isPodReady(p)).length;
      const old = cur.status ?? {};
      const status: any = {
        ...old,
        startTime: old.startTime ?? c.startTime,
        active,
        ready: Math.min(ready, active),
        terminating,
        succeeded: Math.max(old.succeeded ?? 0, st.succeeded.size),
        failed: Math.max(old.failed ?? 0, st.failed.size),
        uncountedTerminatedPods: {},
      };
      const conditions: Condition[] = [...(old.conditions ?? [])];
      const add = (cond: Condition | undefined) => {
        if (cond && !conditions.some((x) => x.type === cond.type && x.status === "True")) conditions.push(cond);
      };
      add(c.success);
      add(c.failure);
      const t = nowTime();
      if (active === 0 && terminating === 0) {
        // Terminal condition once no pod is left running (1.31+ behaviour), with the interim condition's reason.
        const s = condTrue(conditions, "SuccessCriteriaMet");
        const f = condTrue(conditions, "FailureTarget");
        if (s) {
          add({ type: "Complete", status: "True", lastProbeTime: t, lastTransitionTime: t, reason: s.reason, message: s.message });
          const ct = Date.parse(t) < Date.parse(status.startTime) ? status.startTime : t;
          status.completionTime = ct;
        } else if (f) {
          add({ type: "Failed", status: "True", lastProbeTime: t, lastTransitionTime: t, reason: f.reason, message: f.message });
        }
      }
      if (conditions.length) status.conditions = conditions;
      if (statusEqual(old, status)) return;
      cur.status = status;
      await this.o.rest.put(`${jobPath(ns, job.metadata.name)}/status`, cur);
      this.statusWrites++;
    }, { isStopped: () => this.queue.isStopped });
  }
}

function statusEqual(a: any, b: any): boolean {
  const n = (v: unknown) => (v === undefined || v === null ? 0 : v);
  for (const f of ["active", "ready", "terminating", "succeeded", "failed"]) if (n(a[f]) !== n(b[f])) return false;
  if ((a.startTime ?? "") !== (b.startTime ?? "")) return false;
  if ((a.completionTime ?? "") !== (b.completionTime ?? "")) return false;
  const ca = (a.conditions ?? []).map((c: Condition) => `${c.type}=${c.status}`).join(",");
  const cb = (b.conditions ?? []).map((c: Condition) => `${c.type}=${c.status}`).join(",");
  return ca === cb && a.uncountedTerminatedPods !== undefined;
}
