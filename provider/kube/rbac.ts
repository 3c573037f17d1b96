// The least-privilege RBAC of the pipeline's identity (`talos-gate rbac` prints it; the README shows it): exactly the
// requests the Kubernetes port makes, and nothing more. A ClusterRole for what spans namespaces (Nodes, drains, runner
// Jobs wherever a check runs, VolumeAttachments, Events) and a Role in kube-system for the Lease, the status mirror and
// the manifest inventory. Not included, because they depend on the program: the objects a Cluster's `manifests`
// apply, and the kinds a Condition watches (get, list, watch on each) — grant those beside it.
import { SYSTEM_NAMESPACE } from "./labels";

export const RBAC_NAME = "talos-gate";

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

/** Cluster-wide: what the rollout reads and writes across namespaces (provider/kube/*.ts). */
export const CLUSTER_RULES: readonly Rule[] = [
  // nodes.ts (list, read, cordon/uncordon patch), machinewatch.ts (watch)
  { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch", "patch"] },
  // drain.ts (pods on the node), runner.ts (watch of a check's pods, a failed check's pods, their deletion), sweep.ts
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "delete", "deletecollection"] },
  { apiGroups: [""], resources: ["pods/eviction"], verbs: ["create"] },
  // drain.ts: which budget refused an eviction
  { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: ["list"] },
  // runner.ts (create, watch, delete; a check's namespace is the user's choice), sweep.ts, manifests.ts (dry run)
  { apiGroups: ["batch"], resources: ["jobs"], verbs: ["get", "list", "watch", "create", "delete"] },
  // events.ts: HealthcheckPassed/Failed on runner Jobs, node upgrade Events on Nodes
  { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  // volumes.ts: the wait for a node's volumes to detach before its reboot
  { apiGroups: ["storage.k8s.io"], resources: ["volumeattachments"], verbs: ["list", "watch"] },
];

/** In kube-system: the rollout Lease (lease.ts), the status mirror (status.ts) and the manifest inventory (manifests.ts). */
export const SYSTEM_RULES: readonly Rule[] = [
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch", "create", "update", "patch"] },
  { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "create", "update", "patch"] },
];

export type RbacSubject = { kind: "ServiceAccount"; name: string; namespace: string } | { kind: "User" | "Group"; name: string };

/** The ClusterRole and Role, and with a subject their bindings, as Kubernetes objects (apply with kubectl). */
export function pipelineRbac(subject?: RbacSubject): Record<string, unknown>[] {
  const labels = { "app.kubernetes.io/name": RBAC_NAME };
  const objects: Record<string, unknown>[] = [
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: RBAC_NAME, labels }, rules: CLUSTER_RULES },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: RBAC_NAME, namespace: SYSTEM_NAMESPACE, labels }, rules: SYSTEM_RULES },
  ];
  if (subject) {
    const subjects = [subject.kind === "ServiceAccount" ? subject : { ...subject, apiGroup: "rbac.authorization.k8s.io" }];
    objects.push(
      {
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: RBAC_NAME, labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: RBAC_NAME }, subjects,
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name: RBAC_NAME, namespace: SYSTEM_NAMESPACE, labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: RBAC_NAME }, subjects,
      },
    );
  }
  return objects;
}
