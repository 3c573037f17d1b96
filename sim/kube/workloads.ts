// Workload pods so drains have something to move: a ReplicaSet "sim-workload" with `perNode` replicas per worker
// (optionally with a PodDisruptionBudget) and a DaemonSet "sim-node-agent" (one pod per node; drains skip DaemonSet pods). They are plain API objects: the
// real ReplicaSet and DaemonSet controllers create the pods, the real scheduler places the ReplicaSet's (spread over
// the nodes by a soft topology-spread constraint), and the kubelet emulator runs them as pause pods.
import { Rest, isAlreadyExists, retrying } from "./rest";

export const WORKLOAD_NAMESPACE = "sim-workloads";
export const WORKLOAD_RS = "sim-workload";
export const WORKLOAD_DS = "sim-node-agent";

const pause = { name: "app", image: "registry.k8s.io/pause:3.10" };

export interface WorkloadSpec {
  namespace?: string;
  /** ReplicaSet replicas (0 = no ReplicaSet). */
  replicas: number;
  daemonSet: boolean;
  /**
   * A PodDisruptionBudget "sim-workload" (minAvailable 1) over the ReplicaSet's pods, as a service's owner would write
   * one: on a single node it makes the drain problem real (the last replica can never be evicted).
   */
  budget?: boolean;
}

/** The objects' UIDs (pods name them in their controller ownerReference). */
export interface WorkloadOwners {
  namespace: string;
  replicaSetUid?: string;
  daemonSetUid?: string;
}

async function ensure(rest: Rest, collection: string, body: any): Promise<string> {
  try {
    return (await rest.post(collection, body)).metadata.uid;
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    return retrying(`workloads: update ${collection}/${body.metadata.name}`, async () => {
      const cur = await rest.get(`${collection}/${body.metadata.name}`);
      if (body.spec.replicas !== undefined && cur.spec.replicas !== body.spec.replicas) {
        cur.spec.replicas = body.spec.replicas;
        await rest.put(`${collection}/${body.metadata.name}`, cur);
      }
      return cur.metadata.uid as string;
    });
  }
}

export async function ensureWorkloads(rest: Rest, spec: WorkloadSpec): Promise<WorkloadOwners> {
  const ns = spec.namespace ?? WORKLOAD_NAMESPACE;
  const owners: WorkloadOwners = { namespace: ns };
  if (spec.replicas <= 0 && !spec.daemonSet) return owners;
  try {
    await rest.post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  if (spec.replicas > 0) {
    const labels = { "app.kubernetes.io/name": WORKLOAD_RS };
    owners.replicaSetUid = await ensure(rest, `/apis/apps/v1/namespaces/${ns}/replicasets`, {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: WORKLOAD_RS, labels },
      spec: {
        replicas: spec.replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [pause],
            terminationGracePeriodSeconds: 30,
            // Spread like a typical stateless service; soft, so a drain can always move the pods elsewhere.
            topologySpreadConstraints: [{
              maxSkew: 1, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "ScheduleAnyway",
              nodeTaintsPolicy: "Honor", labelSelector: { matchLabels: labels },
            }],
          },
        },
      },
    });
  }
  if (spec.replicas > 0 && spec.budget) {
    await ensure(rest, `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: WORKLOAD_RS },
      spec: { minAvailable: 1, selector: { matchLabels: { "app.kubernetes.io/name": WORKLOAD_RS } } },
    });
  }
  if (spec.daemonSet) {
    const labels = { "app.kubernetes.io/name": WORKLOAD_DS };
    owners.daemonSetUid = await ensure(rest, `/apis/apps/v1/namespaces/${ns}/daemonsets`, {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { name: WORKLOAD_DS, labels },
      spec: {
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ ...pause, name: "agent" }], terminationGracePeriodSeconds: 30, tolerations: [{ operator: "Exists" }] },
        },
      },
    });
  }
  return owners;
}
