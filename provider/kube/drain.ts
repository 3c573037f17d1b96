// Drain like `kubectl drain`: cordon, evict every evictable pod of the node through the Eviction API (policy/v1), so
// PodDisruptionBudgets are honoured (429 → retried with backoff), then wait until those pods are gone — all within a
// deadline, failing with the pods still there and the budgets that refused them. DaemonSet pods, mirror pods of static
// pods and finished pods are left alone (kubectl's --ignore-daemonsets semantics). Unless the mode says otherwise
// (placement.ts): "never", or "auto" where no other node could take the pods, only cordons and names what stays.
import type * as k8s from "./k8s";
import { KubeClients } from "./client";
import { apiMessage, backoffMs, isNotFound, isTransient, KubeError, sleep, statusBody, statusOf } from "./errors";
import { MIRROR_POD_ANNOTATION } from "./labels";
import { msg } from "./messages";
import { cordon, retryTransient } from "./nodes";
import { casualtiesOf, listBudgets, podsWithNowhereToGo } from "./placement";
import type { DrainMode, DrainOptions, DrainOutcome } from "../rollout/ports";
import { selectorMatches } from "./selector";

const POLL_MS = 250;

export function isEvictable(pod: k8s.V1Pod): boolean {
  if (pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") return false;
  if (pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return false;
  const controller = pod.metadata?.ownerReferences?.find((o) => o.controller) ?? pod.metadata?.ownerReferences?.[0];
  if (controller?.kind === "DaemonSet") return false;
  return true;
}

/** Does a PDB's label selector select these labels? */
export function selects(selector: k8s.V1LabelSelector | undefined, labels: Record<string, string>): boolean {
  return selectorMatches(selector, labels);
}

interface Blocked {
  /** "ns/pdb" names that refused the eviction. */
  pdbs: string[];
  detail: string;
  attempt: number;
  retryAt: number;
}

const key = (pod: k8s.V1Pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`;

export async function drain(
  c: KubeClients,
  node: string,
  opts: DrainOptions,
  log: (line: string) => void,
  /** The Nodes as the run's Node watch holds them (machinewatch.ts LiveNodes); undefined: read them. */
  liveNodes?: () => readonly k8s.V1Node[] | undefined,
): Promise<DrainOutcome> {
  const { timeoutMs, signal } = opts;
  const deadline = Date.now() + timeoutMs;
  const check = () => {
    if (signal?.aborted) throw new KubeError(msg.drainCancelled(node));
  };
  check();
  const mode = opts.mode ?? "always";
  if (!opts.cordoned) await cordon(c, node, opts.owner);
  // Listed after the cordon, to decide; that listing is also the drain's first round (nothing is scheduled onto the
  // node after the cordon, so an empty one ends the drain): one listing per node on the critical path, not two.
  let listed = mode === "always" ? undefined : await podsToEvict(c, node);
  const kept = listed && await keptInPlace(c, node, mode, listed, log, liveNodes);
  if (kept) return kept;
  const blocked = new Map<string, Blocked>(); // by pod uid
  const evicted = new Set<string>(); // pod uids whose eviction was accepted
  let listAttempt = 0;
  for (;;) {
    check();
    let pods: k8s.V1Pod[];
    try {
      pods = listed ?? (await c.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items.filter(isEvictable);
      listed = undefined;
      listAttempt = 0;
    } catch (err) {
      if (!isTransient(err) || Date.now() > deadline) {
        throw new KubeError(msg.nodeRequestFailed("listing the pods to drain", node, apiMessage(err), statusOf(err)), statusOf(err));
      }
      await sleep(backoffMs(listAttempt++, 200, 2000), signal);
      continue;
    }
    if (pods.length === 0) return { drained: true };
    const now = Date.now();
    const due = pods.filter((p) => {
      const uid = p.metadata?.uid ?? key(p);
      if (p.metadata?.deletionTimestamp || evicted.has(uid)) return false;
      const b = blocked.get(uid);
      return !b || b.retryAt <= now;
    });
    await forEachLimit(due, 8, (pod) => evict(c, node, pod, blocked, evicted));
    if (Date.now() >= deadline) {
      const stillThere = pods; // as last listed
      const pdbs = new Set<string>();
      const blockers = stillThere.map((p) => {
        const b = blocked.get(p.metadata?.uid ?? key(p));
        if (p.metadata?.deletionTimestamp) return msg.blockedPod(key(p), msg.blockedTerminating());
        if (b) {
          b.pdbs.forEach((n) => pdbs.add(n));
          const why = b.pdbs.length ? b.pdbs.map(msg.blockedByPdb).join(", ") + `: ${b.detail}` : b.detail;
          return msg.blockedPod(key(p), why);
        }
        return msg.blockedPod(key(p), evicted.has(p.metadata?.uid ?? "") ? msg.blockedTerminating() : msg.blockedEvicting());
      });
      // Name the budgets even when the refusal did not (label-match the pods against the namespaces' PDBs).
      if (pdbs.size === 0) {
        for (const n of await matchingPdbs(c, stillThere, log)) pdbs.add(n);
      }
      throw new KubeError(msg.drainTimeout(node, timeoutMs, blockers, [...pdbs]));
    }
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())), signal);
  }
}

/** The pods a drain would evict from `node` now (not terminating). */
async function podsToEvict(c: KubeClients, node: string): Promise<k8s.V1Pod[]> {
  try {
    const pods = (await retryTransient(() => c.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` }))).items;
    return pods.filter((p) => isEvictable(p) && !p.metadata?.deletionTimestamp);
  } catch (err) {
    throw new KubeError(msg.nodeRequestFailed("listing the pods to drain", node, apiMessage(err), statusOf(err)), statusOf(err));
  }
}

/**
 * Nodes read per page while looking for one that could take the pods: whole Node objects (taints, conditions) are
 * 10-20 KiB each on a real cluster, and the first few schedulable ones nearly always end the search.
 */
const PLACEMENT_PAGE = 10;

/**
 * Of `pods`, those no other Node could take, reading the uncordoned Nodes a few at a time and stopping as soon as every
 * pod has a place.
 */
async function strandedPods(
  c: KubeClients, node: string, pods: k8s.V1Pod[], liveNodes?: () => readonly k8s.V1Node[] | undefined,
): Promise<k8s.V1Pod[]> {
  // The run's Node watch holds every Node's cordon, Ready and blocking taints (trimNode): no read on the node's
  // critical path (at 1,000 nodes a page per node was ~0.1 s per wave, issue 23).
  const watched = liveNodes?.();
  if (watched) return podsWithNowhereToGo(node, watched, pods);
  let left = pods;
  let cont: string | undefined;
  try {
    do {
      const page = (await retryTransient(() => c.objects.getRaw("/api/v1/nodes", {
        fieldSelector: "spec.unschedulable=false", limit: PLACEMENT_PAGE, continue: cont,
      }))) as k8s.V1NodeList;
      left = podsWithNowhereToGo(node, page.items, left);
      cont = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
    } while (cont && left.length > 0);
  } catch (err) {
    throw new KubeError(msg.listNodesFailed(apiMessage(err), statusOf(err)), statusOf(err));
  }
  return left;
}

/**
 * Whether the node is only cordoned, not drained ("never"; "auto" when no other node could take any pod it holds),
 * and then what goes down with it; undefined: drain it.
 */
async function keptInPlace(
  c: KubeClients, node: string, mode: DrainMode, pods: k8s.V1Pod[], log: (line: string) => void,
  liveNodes?: () => readonly k8s.V1Node[] | undefined,
): Promise<DrainOutcome | undefined> {
  if (mode === "always") return undefined;
  if (mode === "auto" && (pods.length === 0 || (await strandedPods(c, node, pods, liveNodes)).length < pods.length)) return undefined;
  return { drained: false, why: mode === "never" ? "never" : "nowhere", ...casualtiesOf(pods, await listBudgets(c, pods, log)) };
}

async function evict(
  c: KubeClients,
  node: string,
  pod: k8s.V1Pod,
  blocked: Map<string, Blocked>,
  evicted: Set<string>,
): Promise<void> {
  const name = pod.metadata?.name ?? "";
  const namespace = pod.metadata?.namespace ?? "default";
  const uid = pod.metadata?.uid ?? key(pod);
  try {
    await c.core.createNamespacedPodEviction({
      name, namespace,
      body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name, namespace }, deleteOptions: { preconditions: { uid: pod.metadata?.uid } } },
    });
    evicted.add(uid);
    blocked.delete(uid);
  } catch (err) {
    const status = statusOf(err);
    if (isNotFound(err) || status === 409) {
      // gone already, or replaced by a new pod of the same name (next listing shows it)
      blocked.delete(uid);
      return;
    }
    if (isTransient(err)) {
      const prev = blocked.get(uid);
      const attempt = (prev?.attempt ?? 0) + 1;
      const body = statusBody(err);
      const causes = (body?.details?.causes ?? []).map((x) => x.message ?? "").filter(Boolean);
      const pdbs = causes.map((m) => /disruption budget (\S+)/.exec(m)?.[1]).filter((x): x is string => Boolean(x)).map((n) => `${namespace}/${n}`);
      blocked.set(uid, {
        pdbs,
        detail: causes.join("; ") || apiMessage(err),
        attempt,
        retryAt: Date.now() + backoffMs(attempt, 250, 5000),
      });
      return;
    }
    throw new KubeError(msg.evictFailed(node, `${namespace}/${name}`, apiMessage(err), status), status);
  }
}

async function matchingPdbs(c: KubeClients, pods: k8s.V1Pod[], log: (line: string) => void): Promise<string[]> {
  const names = new Set<string>();
  for (const ns of new Set(pods.map((p) => p.metadata?.namespace ?? "default"))) {
    try {
      const pdbs = (await c.policy.listNamespacedPodDisruptionBudget({ namespace: ns })).items;
      for (const pdb of pdbs) {
        if (pods.some((p) => p.metadata?.namespace === ns && selects(pdb.spec?.selector, p.metadata?.labels ?? {}))) {
          names.add(`${ns}/${pdb.metadata?.name}`);
        }
      }
    } catch (err) {
      log(msg.pdbListFailed(ns, apiMessage(err)));
    }
  }
  return [...names];
}

async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  });
  await Promise.all(workers);
}
