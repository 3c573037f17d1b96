// What Talos does to a node before a legacy (MachineService.Upgrade) reboot — pkg/kubernetes CordonAndDrain:
// cordon (spec.unschedulable + talos.dev/cordoned=true), then evict every pod on the node through the Eviction
// API, concurrently, skipping mirror pods, unmanaged pods (no controller) and DaemonSet pods; a 429 (PDB) is retried
// every 5 s, a 404 means gone; after an admitted eviction it polls every 3 s (up to 1 min) until the pod is gone.
// The whole drain is bounded by 5 minutes; like Talos, failures are reported, never thrown.
import { NodeSim } from "./nodes";
import { KubeError, Rest, isNotFound, sleep } from "./rest";
import { Pod, controllerOf, key, podPath } from "./types";

export interface DrainOptions {
  /** Talos: 5 minutes. */
  timeoutMs?: number;
  /** Wait after a 429 before evicting again (Talos: 5 s). */
  retryDelayMs?: number;
  /** Poll interval while waiting for an evicted pod to disappear (Talos: 3 s). */
  pollMs?: number;
  /** Give up waiting for one evicted pod after this long (Talos: 1 minute). */
  podDeleteTimeoutMs?: number;
  /** Grace period passed in the eviction's DeleteOptions (Talos: 60). */
  gracePeriodSeconds?: number;
  /** Cordon first (default true; Talos always does). */
  cordon?: boolean;
}

export interface DrainReport {
  node: string;
  evicted: string[];
  skipped: { pod: string; why: "mirror" | "unmanaged" | "DaemonSet" }[];
  failed: { pod: string; error: string }[];
  /** Number of 429 answers (evictions refused by a PodDisruptionBudget) along the way. */
  refusals: number;
}

export async function drainForTalos(rest: Rest, nodes: NodeSim, node: string, opts: DrainOptions = {}): Promise<DrainReport> {
  const deadline = Date.now() + (opts.timeoutMs ?? 5 * 60 * 1000);
  const report: DrainReport = { node, evicted: [], skipped: [], failed: [], refusals: 0 };
  if (opts.cordon !== false) await nodes.cordon(node, { byTalos: true });
  const list = await rest.get<{ items: Pod[] }>("/api/v1/pods", { fieldSelector: `spec.nodeName=${node}` });
  await Promise.all(
    list.items.map(async (p) => {
      const name = key(p);
      if (p.metadata.annotations?.["kubernetes.io/config.mirror"] !== undefined) return void report.skipped.push({ pod: name, why: "mirror" });
      const ref = controllerOf(p);
      if (!ref) return void report.skipped.push({ pod: name, why: "unmanaged" });
      if (ref.kind === "DaemonSet") return void report.skipped.push({ pod: name, why: "DaemonSet" });
      try {
        await evict(rest, p, opts, deadline, report);
        report.evicted.push(name);
      } catch (err) {
        report.failed.push({ pod: name, error: (err as Error).message });
      }
    }),
  );
  return report;
}

async function evict(rest: Rest, p: Pod, opts: DrainOptions, deadline: number, report: DrainReport): Promise<void> {
  const ns = p.metadata.namespace!;
  const body = {
    apiVersion: "policy/v1",
    kind: "Eviction",
    metadata: { name: p.metadata.name, namespace: ns },
    deleteOptions: { gracePeriodSeconds: opts.gracePeriodSeconds ?? 60 },
  };
  for (;;) {
    if (Date.now() > deadline) throw new Error(`failed to evict pod ${key(p)}: drain timed out (context deadline exceeded)`);
    try {
      await rest.post(`${podPath(ns, p.metadata.name)}/eviction`, body);
    } catch (err) {
      if (isNotFound(err)) return;
      if (err instanceof KubeError && err.code === 429) {
        report.refusals++;
        await sleep(opts.retryDelayMs ?? 5000);
        continue;
      }
      throw new Error(`failed to evict pod ${key(p)}: ${(err as Error).message}`);
    }
    break;
  }
  const until = Math.min(deadline, Date.now() + (opts.podDeleteTimeoutMs ?? 60000));
  for (;;) {
    try {
      const cur = await rest.get<Pod>(podPath(ns, p.metadata.name));
      if (cur.metadata.uid !== p.metadata.uid) return;
    } catch (err) {
      if (isNotFound(err)) return;
    }
    if (Date.now() > until) throw new Error(`failed waiting on pod ${key(p)} to be deleted: pod is still running on the node`);
    await sleep(opts.pollMs ?? 3000);
  }
}
