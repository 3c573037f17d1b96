// Whether a drain of a node can move its pods anywhere (issue 25). On a single node — or a worker beside control
// planes whose taint its pods do not tolerate — a drain has nowhere to put the pods: a PodDisruptionBudget refuses
// every eviction until the drain's bound, and without one the pods are evicted into Pending for nothing. Talos' own
// legacy drain gives up after 5 minutes and reboots anyway (siderolabs/talos v1.14.0-beta.1-84-gad88231
// pkg/kubernetes/kubernetes.go: Drain under DrainTimeout = 5 * time.Minute, a 429 retried every 5 s, a failed eviction
// only logged; run by the Upgrade sequence's "drain" phase, internal/app/machined/pkg/runtime/v1alpha1/
// v1alpha1_sequencer.go; the Reboot sequence does not drain).
//
// "Another node could take a pod": another Node, Ready=True, not cordoned (spec.unschedulable), and each of its
// NoSchedule and NoExecute taints tolerated by the pod (so a worker beside tainted control planes counts as alone).
// Deliberately NOT considered: the pod's nodeSelector and affinity, free resources, topology spread. A pod its owner
// pinned to this node (local storage, a nodeSelector) keeps its budget's protection: the drain runs and blocks as it
// always did (bounded, PDBs honoured, the node left up), never worse than before; only a cluster with no other usable
// node at all is rebooted without one. The decision is per node: the drain is skipped only when NO pod it would evict
// could go anywhere else; when some could, it drains as always.
import type * as k8s from "./k8s";
import type { KubeClients } from "./client";
import { apiMessage } from "./errors";
import { msg } from "./messages";
import { isBlockingTaint } from "./nodes";
import { selectorMatches } from "./selector";

/** Does `toleration` tolerate `taint` (Kubernetes' ToleratesTaint: key, operator Exists/Equal, value, effect)? */
export function tolerates(toleration: k8s.V1Toleration, taint: k8s.V1Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  // An empty key with operator Exists matches every taint.
  if (!toleration.key && toleration.operator !== "Exists") return false;
  if (toleration.operator === "Exists") return true;
  return (toleration.value ?? "") === (taint.value ?? "");
}

/** Whether `node` could take `pod` (see the file's comment for what is, and is not, considered). */
export function couldTake(node: k8s.V1Node, pod: k8s.V1Pod): boolean {
  if (node.spec?.unschedulable) return false;
  if (node.status?.conditions?.find((c) => c.type === "Ready")?.status !== "True") return false;
  const tolerations = pod.spec?.tolerations ?? [];
  const blocking = (node.spec?.taints ?? []).filter(isBlockingTaint);
  return blocking.every((t) => tolerations.some((tol) => tolerates(tol, t)));
}

/** The pods (of those a drain would evict from `node`) that no other node could take. */
export function podsWithNowhereToGo(node: string, nodes: readonly k8s.V1Node[], pods: readonly k8s.V1Pod[]): k8s.V1Pod[] {
  const others = nodes.filter((n) => n.metadata?.name !== node);
  return pods.filter((p) => !others.some((n) => couldTake(n, p)));
}

/**
 * The budgets `pods` going down together would break: those selecting more of them than they allow to be disrupted
 * now (`status.disruptionsAllowed`, kept by the disruption controller), as "namespace/name".
 */
export function violatedBudgets(pods: readonly k8s.V1Pod[], pdbs: readonly k8s.V1PodDisruptionBudget[]): string[] {
  const names: string[] = [];
  for (const pdb of pdbs) {
    const ns = pdb.metadata?.namespace ?? "default";
    const hit = pods.filter((p) => (p.metadata?.namespace ?? "default") === ns && selectorMatches(pdb.spec?.selector, p.metadata?.labels ?? {}));
    if (hit.length > 0 && hit.length > (pdb.status?.disruptionsAllowed ?? 0)) names.push(`${ns}/${pdb.metadata?.name}`);
  }
  return names.sort();
}

/** What goes down with a node that is not drained: its pods and the budgets that breaks ("namespace/name", sorted). */
export interface Casualties {
  pods: string[];
  pdbs: string[];
}

/** The budgets of the pods' namespaces (a namespace that cannot be read is logged, and counts none). */
export async function listBudgets(c: KubeClients, pods: readonly k8s.V1Pod[], log: (line: string) => void): Promise<k8s.V1PodDisruptionBudget[]> {
  const out: k8s.V1PodDisruptionBudget[] = [];
  for (const ns of new Set(pods.map((p) => p.metadata?.namespace ?? "default"))) {
    try {
      out.push(...(await c.policy.listNamespacedPodDisruptionBudget({ namespace: ns })).items);
    } catch (err) {
      log(msg.pdbListFailed(ns, apiMessage(err)));
    }
  }
  return out;
}

export function casualtiesOf(pods: readonly k8s.V1Pod[], pdbs: readonly k8s.V1PodDisruptionBudget[]): Casualties {
  return {
    pods: pods.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort(),
    pdbs: violatedBudgets(pods, pdbs),
  };
}
