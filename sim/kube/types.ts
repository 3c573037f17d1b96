// The raw JSON shapes the sim reads and writes (only the fields it uses; timestamps are strings as on the wire).
export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  generateName?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerRef[];
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  creationTimestamp?: string;
  finalizers?: string[];
}

export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: any;
  status?: any;
}

export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
  lastHeartbeatTime?: string;
  observedGeneration?: number;
}

export type Pod = KObject;
export type Node = KObject;

export const key = (o: { metadata: { namespace?: string; name: string } }) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;

export function controllerOf(o: KObject): OwnerRef | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller);
}

export function isTerminal(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === "Succeeded" || phase === "Failed";
}

export function nodeReady(node: Node): boolean {
  return (node.status?.conditions ?? []).some((c: Condition) => c.type === "Ready" && c.status === "True");
}

export const podPath = (ns: string, name?: string) => `/api/v1/namespaces/${ns}/pods${name ? `/${name}` : ""}`;
export const nodePath = (name?: string) => `/api/v1/nodes${name ? `/${name}` : ""}`;
