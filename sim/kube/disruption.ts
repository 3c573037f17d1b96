// The disruption controller: keeps every PodDisruptionBudget's status current so the API server's Eviction API can
// decide (it answers 429 when disruptionsAllowed is 0 or observedGeneration lags behind generation, and itself
// decrements disruptionsAllowed and records the pod in disruptedPods when it admits an eviction).
//
// Differences from the real controller: expectedPods is the number of matching pods for every PDB form (the real
// one reads the owning controller's scale for maxUnavailable and percentage minAvailable); no events.
import { selectorMatches } from "../../provider/kube/selector";
import { Reflector } from "./reflector";
import { KeyedQueue } from "./workqueue";
import { Rest, isNotFound, nowTime, retrying } from "./rest";
import { Condition, Pdb, Pod, isPodReady, key, pdbPath } from "./types";

/** How long an evicted pod may stay in disruptedPods before the controller stops expecting its deletion. */
const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

export { selectorMatches };

/** minAvailable / maxUnavailable (int or "N%") against the expected count; percentages round up, as upstream. */
function scaled(v: number | string, total: number): number {
  if (typeof v === "number") return v;
  const m = /^(\d+)%$/.exec(v);
  if (m) return Math.ceil((Number(m[1]) * total) / 100);
  return Number(v) || 0;
}

export class DisruptionController {
  private readonly queue = new KeyedQueue("disruption controller", (k) => this.sync(k), (m) => this.o.log(m));
  private readonly timers = new Map<string, NodeJS.Timeout>();
  statusWrites = 0;

  constructor(private readonly o: { rest: Rest; pdbs: Reflector<Pdb>; pods: Reflector<Pod>; log: (m: string) => void }) {}

  start(): void {
    this.o.pdbs.on("add", (p) => this.enqueue(key(p)));
    // Status changes too (ours, or the Eviction API's decrement): the result is recomputed and written only if it differs.
    this.o.pdbs.on("update", (p) => this.enqueue(key(p)));
    const onPod = (pod: Pod, old?: Pod) => {
      for (const pdb of this.o.pdbs.list()) {
        if (pdb.metadata.namespace !== pod.metadata.namespace) continue;
        if (selectorMatches(pdb.spec?.selector, pod.metadata.labels) || (old && selectorMatches(pdb.spec?.selector, old.metadata.labels))) this.enqueue(key(pdb));
      }
    };
    this.o.pods.on("add", (p) => onPod(p));
    this.o.pods.on("update", (p, old) => onPod(p, old));
    this.o.pods.on("delete", (p) => onPod(p));
    for (const p of this.o.pdbs.list()) this.enqueue(key(p));
  }

  async stop(): Promise<void> {
    const done = this.queue.stop();
    for (const t of this.timers.values()) clearTimeout(t);
    await done;
  }

  private enqueue(k: string): void {
    this.queue.enqueue(k);
  }

  private async sync(k: string): Promise<void> {
    const [ns, name] = k.split("/");
    if (!this.o.pdbs.get(ns, name) || this.queue.isStopped) return;
    await retrying(`disruption controller: status of PodDisruptionBudget ${k}`, async () => {
      let pdb: Pdb;
      try {
        pdb = await this.o.rest.get<Pdb>(pdbPath(ns, name));
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      const now = Date.now();
      const pods = this.o.pods.list().filter((p) => p.metadata.namespace === ns && selectorMatches(pdb.spec?.selector, p.metadata.labels) && p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed");
      // disruptedPods: keep the evicted pods whose deletion has not been observed yet, for at most 2 minutes.
      const oldDisrupted: Record<string, string> = pdb.status?.disruptedPods ?? {};
      const disrupted: Record<string, string> = {};
      let recheckAt = Infinity;
      for (const p of pods) {
        const at = oldDisrupted[p.metadata.name];
        if (!at || p.metadata.deletionTimestamp) continue;
        const expires = Date.parse(at) + DELETION_TIMEOUT_MS;
        if (expires <= now) continue;
        disrupted[p.metadata.name] = at;
        recheckAt = Math.min(recheckAt, expires);
      }
      const healthy = pods.filter((p) => !p.metadata.deletionTimestamp && !disrupted[p.metadata.name] && isPodReady(p)).length;
      const expected = pods.length;
      let desired = 0;
      if (pdb.spec?.maxUnavailable !== undefined && pdb.spec?.maxUnavailable !== null) desired = Math.max(0, expected - scaled(pdb.spec.maxUnavailable, expected));
      else if (pdb.spec?.minAvailable !== undefined && pdb.spec?.minAvailable !== null) desired = scaled(pdb.spec.minAvailable, expected);
      const allowed = Math.max(0, healthy - desired);
      const old = pdb.status ?? {};
      const oldCond: Condition | undefined = (old.conditions ?? []).find((c: Condition) => c.type === "DisruptionAllowed");
      const condStatus = allowed > 0 ? "True" : "False";
      const cond: Condition = {
        type: "DisruptionAllowed",
        status: condStatus,
        reason: allowed > 0 ? "SufficientPods" : "InsufficientPods",
        message: "",
        observedGeneration: pdb.metadata.generation,
        lastTransitionTime: oldCond && oldCond.status === condStatus ? oldCond.lastTransitionTime : nowTime(now),
      };
      const status: any = {
        observedGeneration: pdb.metadata.generation,
        expectedPods: expected,
        currentHealthy: healthy,
        desiredHealthy: desired,
        disruptionsAllowed: allowed,
        conditions: [cond],
      };
      if (Object.keys(disrupted).length) status.disruptedPods = disrupted;
      this.recheck(k, recheckAt);
      const same =
        old.observedGeneration === status.observedGeneration &&
        (old.expectedPods ?? 0) === expected &&
        (old.currentHealthy ?? 0) === healthy &&
        (old.desiredHealthy ?? 0) === desired &&
        (old.disruptionsAllowed ?? 0) === allowed &&
        JSON.stringify(old.disruptedPods ?? {}) === JSON.stringify(disrupted) &&
        oldCond?.status === condStatus &&
        oldCond?.reason === cond.reason &&
        oldCond?.observedGeneration === cond.observedGeneration;
      if (same) return;
      pdb.status = status;
      await this.o.rest.put(`${pdbPath(ns, name)}/status`, pdb);
      this.statusWrites++;
    }, { isStopped: () => this.queue.isStopped });
  }

  private recheck(k: string, at: number): void {
    const t = this.timers.get(k);
    if (t) clearTimeout(t);
    this.timers.delete(k);
    if (!Number.isFinite(at)) return;
    const timer = setTimeout(() => {
      this.timers.delete(k);
      this.enqueue(k);
    }, Math.max(0, at - Date.now()) + 50);
    timer.unref();
    this.timers.set(k, timer);
  }
}
