// Supporting manifests (Omni's `kubernetes.manifests`: RBAC and the like for healthchecks), applied server-side with
// field manager `talos-gate` (conflicts forced), Namespaces and CRDs first.
//
// Modes:
//   full      applied every time; objects applied before that are no longer listed are pruned (deleted).
//   one-time  applied only if the object does not exist yet; never updated, never pruned.
//
// Tracking (for pruning): every applied object gets labels `talos-gate.dev/manifest=<manifest name>` and
// `talos-gate.dev/cluster=<cluster>`, and the full-mode objects are recorded in an inventory ConfigMap
// kube-system/talos-gate-manifests-<cluster> (key inventory.json: [{manifest, apiVersion, kind, namespace, name}]).
// Pruning deletes inventory entries not listed any more — across all of the cluster's full manifests, so a call must
// list all of them — and only objects this resource applied: the inventory sits in a ConfigMap others may write, and
// pruning deletes with the pipeline's credentials. So each entry records the owner (the applying resource) and the
// object's uid from the apply's answer; an entry is pruned only when it is this owner's, the live object is that very
// object (same uid) and still carries this cluster's and the manifest's labels (an object whose label was removed has
// been taken over and is left alone). Entries of earlier releases (no uid) are pruned only when talos-gate's field
// manager applied the live object. The inventory avoids listing every kind in the cluster.
import * as k8s from "./k8s";
import * as YAML from "yaml";
import type { ApplyManifestsOptions, ApplyManifestsResult, Manifest, ManifestMode } from "../rollout/ports";
import { KubeClients } from "./client";
import { apiMessage, backoffMs, isNotFound, isTransient, KubeError, sleep, statusOf } from "./errors";
import { CLUSTER_LABEL, FIELD_MANAGER, INVENTORY_KEY, inventoryConfigMapName, MANIFEST_LABEL, SYSTEM_NAMESPACE } from "./labels";
import { msg } from "./messages";

interface InventoryEntry {
  manifest: string;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** The object's uid as the apply returned it. */
  uid?: string;
  /** The resource that applied it (ApplyManifestsOptions.owner). */
  owner?: string;
}

/** One object of a manifest: apiVersion, kind and metadata.name checked; the rest is the user's, passed on as it is. */
export type ManifestObject = k8s.KubernetesObject & { apiVersion: string; kind: string; metadata: k8s.V1ObjectMeta & { name: string } } &
  Record<string, unknown>;

interface Desired {
  manifest: string;
  mode: ManifestMode;
  object: ManifestObject;
}

const describe = (o: { kind?: string; namespace?: string; name?: string }) =>
  `${o.kind} ${o.namespace ? `${o.namespace}/` : ""}${o.name}`;
const entryKey = (e: InventoryEntry) => `${e.apiVersion}|${e.kind}|${e.namespace ?? ""}|${e.name}`;

/** A label value from any text: invalid characters become '-', at most 63 characters, alphanumeric at both ends. */
export function labelValue(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 63).replace(/^[^A-Za-z0-9]+/, "").replace(/[^A-Za-z0-9]+$/, "");
}

export function parseManifest(m: Manifest): ManifestObject[] {
  let docs: unknown[];
  if (typeof m.content === "string") {
    docs = [];
    for (const doc of YAML.parseAllDocuments(m.content)) {
      if (doc.errors.length > 0) throw new KubeError(msg.manifestNotYaml(m.name, doc.errors[0].message.split("\n")[0]));
      docs.push(doc.toJS());
    }
  } else {
    docs = m.content;
  }
  const out: ManifestObject[] = [];
  const visit = (d: unknown) => {
    if (d === null || d === undefined) return; // empty or comment-only document
    const o = d as { apiVersion?: unknown; kind?: unknown; items?: unknown; metadata?: { name?: unknown } | null };
    if (typeof o === "object" && typeof o.kind === "string" && o.kind.endsWith("List") && Array.isArray(o.items)) {
      o.items.forEach(visit);
      return;
    }
    if (typeof o !== "object" || Array.isArray(o) || typeof o.apiVersion !== "string" || typeof o.kind !== "string" ||
      typeof o.metadata?.name !== "string" || o.metadata.name === "") {
      throw new KubeError(msg.manifestNotObject(m.name, out.length));
    }
    out.push(o as ManifestObject);
  };
  docs.forEach(visit);
  return out;
}

const order = (kind: string | undefined) => (kind === "Namespace" ? 0 : kind === "CustomResourceDefinition" ? 1 : 2);

async function withRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 4 || !isTransient(err) || statusOf(err) === undefined && attempt >= 2) throw err;
      await sleep(backoffMs(attempt, 200, 2000));
    }
  }
}

/** Every object of the manifests as it is applied: talos-gate's labels on, server-set fields off, Namespaces and CRDs first. */
function desiredObjects(manifests: Manifest[], opts: ApplyManifestsOptions): Desired[] {
  const desired: Desired[] = [];
  for (const m of manifests) {
    const mode = m.mode ?? opts.mode ?? "full";
    for (const raw of parseManifest(m)) {
      const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, managedFields: _mf, generation: _g, ...meta } = raw.metadata;
      const object = {
        ...raw,
        metadata: { ...meta, labels: { ...(meta.labels ?? {}), [MANIFEST_LABEL]: labelValue(m.name), [CLUSTER_LABEL]: labelValue(opts.cluster) } },
      };
      delete (object as Record<string, unknown>).status;
      desired.push({ manifest: m.name, mode, object });
    }
  }
  return desired.sort((a, b) => order(a.object.kind) - order(b.object.kind)); // stable: manifest order otherwise
}

/** What the apply step leaves for the prune step. */
interface Applied {
  /** Full-mode objects now applied, by entry key. */
  keep: Map<string, InventoryEntry>;
  /** Every object listed, any mode. */
  listed: Set<string>;
}

/** Whether the cluster serves the object's kind namespaced; a CRD applied just now is waited for a moment. */
async function servedNamespaced(c: KubeClients, d: Desired, waitForCrd: boolean): Promise<boolean> {
  const o = d.object;
  let namespaced = await withRetry(() => c.objects.namespaced(o.apiVersion!, o.kind!));
  for (let i = 0; namespaced === undefined && waitForCrd && i < 20; i++) {
    await sleep(250); // a CRD applied just now takes a moment to be served
    namespaced = await withRetry(() => c.objects.namespaced(o.apiVersion!, o.kind!));
  }
  if (namespaced === undefined) {
    throw new KubeError(msg.manifestApplyFailed(d.manifest, describe({ kind: o.kind, namespace: o.metadata?.namespace, name: o.metadata?.name }),
      `the cluster does not serve ${o.apiVersion} ${o.kind}`, 404), 404);
  }
  return namespaced;
}

/** Server-side apply of each object in order (a one-time object that exists is skipped), into `result`. */
async function applyObjects(c: KubeClients, desired: Desired[], opts: ApplyManifestsOptions, result: ApplyManifestsResult): Promise<Applied> {
  const dryRun = opts.dryRun ? "All" : undefined;
  const keep = new Map<string, InventoryEntry>();
  const listed = new Set<string>();
  const hasCrds = desired.some((d) => d.object.kind === "CustomResourceDefinition");
  for (const d of desired) {
    const o = d.object;
    const namespaced = await servedNamespaced(c, d, hasCrds && !dryRun);
    if (namespaced) o.metadata!.namespace ||= "default";
    else delete o.metadata!.namespace;
    const entry: InventoryEntry = { manifest: d.manifest, apiVersion: o.apiVersion!, kind: o.kind!, name: o.metadata!.name!, ...(namespaced ? { namespace: o.metadata!.namespace } : {}) };
    const what = describe(entry);
    listed.add(entryKey(entry));
    try {
      if (d.mode === "one-time") {
        const exists = await withRetry(() => c.objects.read({ apiVersion: entry.apiVersion, kind: entry.kind, metadata: { name: entry.name, namespace: entry.namespace } }))
          .then(() => true, (err) => (isNotFound(err) ? false : Promise.reject(err)));
        if (exists) {
          result.skipped.push(what);
          continue;
        }
      }
      const live = await withRetry(() => c.objects.applyRaw(o, { fieldManager: FIELD_MANAGER, force: true, dryRun }));
      result.applied.push(what);
      const uid = live?.metadata?.uid;
      if (d.mode === "full") keep.set(entryKey(entry), { ...entry, ...(uid ? { uid } : {}), ...(opts.owner ? { owner: opts.owner } : {}) });
    } catch (err) {
      throw new KubeError(msg.manifestApplyFailed(d.manifest, what, apiMessage(err), statusOf(err)), statusOf(err));
    }
  }
  return { keep, listed };
}

/**
 * Deletes this owner's inventory entries no longer listed (only objects it applied, see the header), into `result`,
 * and records the inventory: what is kept, what failed to prune (retried next time) and other owners' entries.
 */
async function pruneUnlisted(
  c: KubeClients, applied: Applied, opts: ApplyManifestsOptions, log: (line: string) => void, result: ApplyManifestsResult,
): Promise<void> {
  const { cluster } = opts;
  const { keep, listed } = applied;
  const previous = await readInventory(c, cluster);
  // Another resource's entries are neither pruned nor dropped by this one's applies.
  const others = previous.filter((e) => !ownedBy(e, opts.owner));
  const stale = previous.filter((e) => ownedBy(e, opts.owner) && !listed.has(entryKey(e)) && !keep.has(entryKey(e)));
  if (opts.dryRun) {
    result.pruned = stale.map(describe);
    return;
  }
  // Record the union first: a crash before pruning must not forget the objects still to prune.
  if (stale.length > 0) await writeInventory(c, cluster, [...keep.values(), ...stale, ...others]);
  const failed: InventoryEntry[] = [];
  stale.sort((a, b) => order(b.kind) - order(a.kind)); // namespaces last
  for (const e of stale) {
    const header = { apiVersion: e.apiVersion, kind: e.kind, metadata: { name: e.name, namespace: e.namespace } };
    try {
      const live = await c.objects.read(header);
      if (!appliedByUs(e, live, cluster)) {
        log(msg.manifestPruneSkipped(describe(e)));
        continue;
      }
      await c.objects.delete(header, undefined, undefined, undefined, undefined, "Background");
      result.pruned.push(describe(e));
    } catch (err) {
      if (isNotFound(err)) continue;
      log(msg.manifestPruneFailed(describe(e), apiMessage(err)));
      failed.push(e); // retried by the next apply
    }
  }
  await writeInventory(c, cluster, [...keep.values(), ...failed, ...others]);
}

/** Applies the manifests, then prunes what this owner applied before and no longer lists (see the header). */
export async function applyManifests(
  c: KubeClients,
  manifests: Manifest[],
  opts: ApplyManifestsOptions,
  log: (line: string) => void,
): Promise<ApplyManifestsResult> {
  const result: ApplyManifestsResult = { applied: [], skipped: [], pruned: [] };
  const applied = await applyObjects(c, desiredObjects(manifests, opts), opts, result);
  await pruneUnlisted(c, applied, opts, log, result);
  return result;
}

/** An entry of this owner (entries without an owner are from earlier releases, which had one resource per cluster). */
const ownedBy = (e: InventoryEntry, owner: string | undefined) => !owner || !e.owner || e.owner === owner;

/** Whether the live object is the one this resource applied for the entry (see the header). */
function appliedByUs(e: InventoryEntry, live: k8s.KubernetesObject, cluster: string): boolean {
  const labels = live.metadata?.labels ?? {};
  if (labels[CLUSTER_LABEL] !== labelValue(cluster) || labels[MANIFEST_LABEL] !== labelValue(e.manifest)) return false;
  if (e.uid) return live.metadata?.uid === e.uid;
  return (live.metadata?.managedFields ?? []).some((f) => f.manager === FIELD_MANAGER && f.operation === "Apply");
}

async function readInventory(c: KubeClients, cluster: string): Promise<InventoryEntry[]> {
  try {
    const cm = await c.core.readNamespacedConfigMap({ name: inventoryConfigMapName(cluster), namespace: SYSTEM_NAMESPACE });
    const parsed = JSON.parse(cm.data?.[INVENTORY_KEY] ?? "[]");
    return Array.isArray(parsed) ? (parsed as InventoryEntry[]) : [];
  } catch (err) {
    if (isNotFound(err) || err instanceof SyntaxError) return [];
    throw new KubeError(msg.inventoryFailed(cluster, apiMessage(err), statusOf(err)), statusOf(err));
  }
}

async function writeInventory(c: KubeClients, cluster: string, entries: InventoryEntry[]): Promise<void> {
  const name = inventoryConfigMapName(cluster);
  const sorted = [...entries].sort((a, b) => entryKey(a).localeCompare(entryKey(b)));
  const body: k8s.V1ConfigMap = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: SYSTEM_NAMESPACE, labels: { "app.kubernetes.io/managed-by": FIELD_MANAGER, [CLUSTER_LABEL]: labelValue(cluster) } },
    data: { [INVENTORY_KEY]: JSON.stringify(sorted, null, 1) },
  };
  try {
    await withRetry(() => c.objects.patch(body, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply));
  } catch (err) {
    throw new KubeError(msg.inventoryFailed(cluster, apiMessage(err), statusOf(err)), statusOf(err));
  }
}

/**
 * Server-side dry-run create of a composed runner Job: the cluster validates and defaults it without storing it. A Job
 * of that name existing already is fine (validation runs before the name clash). Throws naming the Job otherwise.
 */
export async function dryRunJob(c: KubeClients, namespace: string, name: string, job: Record<string, unknown>): Promise<void> {
  try {
    await c.batch.createNamespacedJob({ namespace, body: job as k8s.V1Job, dryRun: "All", fieldManager: FIELD_MANAGER });
  } catch (err) {
    const status = statusOf(err);
    if (status === 409) return;
    if (status === 404) throw new KubeError(msg.jobNamespaceMissing(namespace, name), status, "NotFound");
    throw new KubeError(msg.jobDryRunRejected(namespace, name, apiMessage(err)), status);
  }
}
