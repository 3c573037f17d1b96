// Cluster reads and node scheduling: machines from Kubernetes Nodes, cordon / uncordon.
import type * as k8s from "./k8s";
import type { Machine } from "../rollout/ports";
import { KubeClients } from "./client";
import { apiMessage, backoffMs, isTransient, KubeError, sleep, statusOf } from "./errors";
import {
  CONTROL_PLANE_LABEL, CONTROL_PLANES_SET, CORDONED_BY_ANNOTATION, LEGACY_MASTER_LABEL, MACHINE_SET_LABEL, WORKERS_SET,
} from "./labels";
import { msg } from "./messages";

/** "Talos (v1.13.2)" → "v1.13.2"; undefined for any other OS image. */
export function talosVersionOf(osImage: string | undefined): string | undefined {
  const m = /^Talos \((v\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)\)$/.exec((osImage ?? "").trim());
  return m?.[1];
}

export function machineOf(node: k8s.V1Node): Machine {
  const labels = node.metadata?.labels ?? {};
  const controlPlane = CONTROL_PLANE_LABEL in labels || LEGACY_MASTER_LABEL in labels;
  const addresses = node.status?.addresses ?? [];
  const address =
    addresses.find((a) => a.type === "InternalIP")?.address ??
    addresses.find((a) => a.type === "ExternalIP")?.address ??
    addresses[0]?.address ??
    node.metadata?.name ??
    "";
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
  const machine: Machine = {
    name: node.metadata?.name ?? "",
    role: controlPlane ? "controlplane" : "worker",
    address,
    ready,
    cordoned: node.spec?.unschedulable === true,
    machineSet: labels[MACHINE_SET_LABEL] || (controlPlane ? CONTROL_PLANES_SET : WORKERS_SET),
  };
  const version = talosVersionOf(node.status?.nodeInfo?.osImage);
  if (version) machine.talosVersion = version;
  const kubelet = node.status?.nodeInfo?.kubeletVersion;
  if (kubelet) machine.kubeletVersion = kubelet;
  const bootId = node.status?.nodeInfo?.bootID;
  if (bootId) machine.bootId = bootId;
  const owner = node.metadata?.annotations?.[CORDONED_BY_ANNOTATION];
  if (owner && machine.cordoned) machine.cordonedBy = owner;
  else if (owner) machine.staleCordonMark = owner;
  return machine;
}

/**
 * Both requests below are idempotent, so a transient failure (no answer, a connection closed under load — seen with
 * 50 concurrent node upgrades at 1,000 nodes —, 429, 5xx) is retried a few times (about 3 s in all) before it is
 * reported; one dropped connection must not fail a node upgrade.
 */
export async function retryTransient<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= 4 || !isTransient(err)) throw err;
      await sleep(backoffMs(attempt, 200, 1600));
    }
  }
}

/** Nodes per list page: chunked like kubectl (500), smaller, so a 1,000-node list never sits in memory whole. */
const LIST_CHUNK = 200;

/** A taint that keeps pods off a node (placement.ts): NoSchedule or NoExecute, not PreferNoSchedule. */
export const isBlockingTaint = (t: k8s.V1Taint): boolean => t.effect === "NoSchedule" || t.effect === "NoExecute";

/** Two taint lists as trimNode keeps them, equal. */
export function sameTaints(a: readonly k8s.V1Taint[] = [], b: readonly k8s.V1Taint[] = []): boolean {
  return a.length === b.length && a.every((t, i) => t.key === b[i].key && t.value === b[i].value && t.effect === b[i].effect);
}

/** A Node reduced to the fields machineOf and placement.ts's couldTake read (the image list, allocatable, volumes and the rest are dropped). */
export function trimNode(node: k8s.V1Node): k8s.V1Node {
  const annotation = node.metadata?.annotations?.[CORDONED_BY_ANNOTATION];
  const blocking = (node.spec?.taints ?? []).filter(isBlockingTaint).map((t) => ({ key: t.key, value: t.value, effect: t.effect }));
  return {
    metadata: {
      name: node.metadata?.name,
      resourceVersion: node.metadata?.resourceVersion,
      labels: node.metadata?.labels,
      ...(annotation !== undefined ? { annotations: { [CORDONED_BY_ANNOTATION]: annotation } } : {}),
    },
    spec: {
      unschedulable: node.spec?.unschedulable,
      // What placement.ts's couldTake reads besides Ready and the cordon: the taints that keep pods off.
      ...(blocking.length > 0 ? { taints: blocking } : {}),
    },
    status: {
      // Only what machineOf reads: not the heartbeat and transition times, which change without the Node changing.
      conditions: node.status?.conditions?.filter((c) => c.type === "Ready").map((c) => ({ type: c.type, status: c.status })),
      addresses: node.status?.addresses,
      nodeInfo: {
        osImage: node.status?.nodeInfo?.osImage, kubeletVersion: node.status?.nodeInfo?.kubeletVersion, bootID: node.status?.nodeInfo?.bootID,
      } as k8s.V1NodeSystemInfo,
    },
  };
}

/**
 * Every Node, trimmed, page by page as the API server sent them (JSON, not client-node's typed models, which build
 * every field of every Node first), with the list's resourceVersion for a watch to start from. Transient failures of
 * a page are retried.
 */
export async function listTrimmedNodes(c: KubeClients): Promise<{ items: k8s.V1Node[]; metadata: { resourceVersion?: string } }> {
  const items: k8s.V1Node[] = [];
  let cont: string | undefined;
  let resourceVersion: string | undefined;
  do {
    const page = (await retryTransient(() => c.objects.getRaw("/api/v1/nodes", { limit: LIST_CHUNK, continue: cont }))) as k8s.V1NodeList;
    for (const node of page.items) items.push(trimNode(node));
    cont = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
    resourceVersion = page.metadata?.resourceVersion;
  } while (cont);
  return { items, metadata: { resourceVersion } };
}

/** The order of machines by name (shared, so the Node watch orders as listMachines does). */
export const collator = new Intl.Collator();
/** Orders like `localeCompare`, without building a collator per comparison. */
export const byMachineName = (a: Machine, b: Machine): number => collator.compare(a.name, b.name);

export async function listMachines(c: KubeClients): Promise<Machine[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return (await listTrimmedNodes(c)).items.map(machineOf).sort(byMachineName);
    } catch (err) {
      // 410 Gone: the continue token expired (etcd compacted meanwhile); the list starts over once.
      if (statusOf(err) === 410 && attempt === 0) continue;
      throw new KubeError(msg.listNodesFailed(apiMessage(err), statusOf(err)), statusOf(err));
    }
  }
}

/** The Node as the API server sent it (not client-node's models, which build every field of it first). */
const readNode = async (c: KubeClients, name: string): Promise<k8s.V1Node> =>
  (await c.objects.getRaw(`/api/v1/nodes/${encodeURIComponent(name)}`, {})) as k8s.V1Node;

/** One machine by Node name; undefined if the Node does not exist. */
export async function readMachine(c: KubeClients, name: string): Promise<Machine | undefined> {
  try {
    return machineOf(await retryTransient(() => readNode(c, name)));
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    throw new KubeError(msg.listNodesFailed(apiMessage(err), statusOf(err)), statusOf(err));
  }
}

/** JSON-patch path of an annotation key ("/" escaped as "~1"). */
const annotationPath = (key: string) => `/metadata/annotations/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;

/**
 * The patch that cordons a schedulable Node as `owner`, without a read: it applies only while `/spec/unschedulable` is
 * absent (the API server omits false) — a JSON-patch test for null passes on a missing key (gopkg.in/evanphx/json-patch.v4
 * v4.13.0 patch.go `test`, the API server's JSON patch) and fails on `true` — and the Node has annotations.
 */
const claimCordon = (owner: string): object[] => [
  { op: "test", path: "/spec/unschedulable", value: null },
  { op: "add", path: annotationPath(CORDONED_BY_ANNOTATION), value: owner },
  { op: "add", path: "/spec/unschedulable", value: true },
];

/**
 * Cordons `node` as `owner` (spec.unschedulable + the owner's mark), unless it is already unschedulable: a cordon
 * someone else set is never claimed. First one patch that tests the Node is schedulable (issue 23: a read and a patch
 * were on every node's critical path); when that test fails (cordoned already, or no annotations yet) or the patch
 * fails otherwise, the Node is read and decided on: that patch tests the resourceVersion it decided on, so a cordon
 * set in between is not claimed either.
 */
export async function cordon(c: KubeClients, node: string, owner: string): Promise<boolean> {
  try {
    await c.objects.sendRaw("PATCH", `/api/v1/nodes/${encodeURIComponent(node)}`, claimCordon(owner));
    return true;
  } catch {
    // decided on a fresh read below, which also reports what failed
  }
  return ownedPatch(c, node, "cordon", (n) => {
    if (n.spec?.unschedulable) return undefined;
    return [
      ...(n.metadata?.annotations ? [] : [{ op: "add", path: "/metadata/annotations", value: {} }]),
      { op: "add", path: annotationPath(CORDONED_BY_ANNOTATION), value: owner },
      { op: "add", path: "/spec/unschedulable", value: true },
    ];
  });
}

/** The patch that lifts `owner`'s cordon: it tests the mark itself, so it applies only while the cordon is ours. */
const liftOwnCordon = (owner: string): object[] => [
  { op: "test", path: annotationPath(CORDONED_BY_ANNOTATION), value: owner },
  { op: "remove", path: annotationPath(CORDONED_BY_ANNOTATION) },
  { op: "add", path: "/spec/unschedulable", value: false },
];

/**
 * Lifts the cordon of `node` only if `owner`'s mark is on it; removes the mark. First without a read: the patch tests
 * the mark, not the Node's resourceVersion, so the kubelet's status writes at boot (which bump it) do not refuse it
 * (issue 23.2: a read, a refused patch, a read and a patch on each node's critical path at 1,000 nodes). When the test
 * fails (the mark is not ours, or gone) or the patch fails otherwise, the Node is read and decided on as before.
 */
export async function uncordon(c: KubeClients, node: string, owner: string): Promise<boolean> {
  try {
    await retryTransient(() => c.objects.sendRaw("PATCH", `/api/v1/nodes/${encodeURIComponent(node)}`, liftOwnCordon(owner)));
    return true;
  } catch {
    // decided on a fresh read below, which also reports what failed
  }
  return ownedPatch(c, node, "uncordon", (n) => {
    if (n.metadata?.annotations?.[CORDONED_BY_ANNOTATION] !== owner) return undefined;
    return liftOwnCordon(owner);
  });
}

/**
 * Removes talos-gate's cordon mark from `node` if the node is schedulable: the cordon it marked was lifted by someone
 * else (`kubectl uncordon` keeps annotations), so a later cordon must not pass for ours (issue 18.5).
 */
export async function dropStaleCordonMark(c: KubeClients, node: string): Promise<boolean> {
  return ownedPatch(c, node, "uncordon", (n) => {
    if (n.spec?.unschedulable || n.metadata?.annotations?.[CORDONED_BY_ANNOTATION] === undefined) return undefined;
    return [{ op: "remove", path: annotationPath(CORDONED_BY_ANNOTATION) }];
  });
}

/** Reads the Node, lets `decide` build a patch (undefined: nothing to do), applies it if the Node did not change. */
async function ownedPatch(
  c: KubeClients, node: string, op: "cordon" | "uncordon", decide: (n: k8s.V1Node) => object[] | undefined,
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      const n = await retryTransient(() => readNode(c, node));
      const ops = decide(n);
      if (!ops) return false;
      // The Node the API server answers with is not needed: dropped unread (issue 23: a cordon and an uncordon per node).
      await retryTransient(() => c.objects.sendRaw("PATCH", `/api/v1/nodes/${encodeURIComponent(node)}`,
        [{ op: "test", path: "/metadata/resourceVersion", value: n.metadata?.resourceVersion }, ...ops]));
      return true;
    } catch (err) {
      // A failed `test` (the Node changed since it was read): decide again on a fresh read.
      if ((statusOf(err) === 422 || statusOf(err) === 409) && attempt < 5) continue;
      throw new KubeError(msg.nodeRequestFailed(op, node, apiMessage(err), statusOf(err)), statusOf(err));
    }
  }
}
