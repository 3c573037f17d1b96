// The bootstrap manifests' sync of `talosctl upgrade-k8s` (issue 24.3): Talos itself only ever creates the missing
// objects of the manifests a control plane renders (siderolabs/talos internal/app/machined/pkg/controllers/k8s/
// manifest_apply.go `apply`: an object that exists is skipped), so after `cluster.proxy.image` is patched the live
// kube-proxy DaemonSet keeps its old image until upgrade-k8s syncs the manifests (pkg/cluster/kubernetes/
// talos_managed.go PerformManifestsSync → syncManifestsSSA, Talos >= 1.13, at v1.14.0-beta.1-84 ad88231): server-side
// apply of every object with field manager "talos", owned (annotation) by the inventory
// "talos-bootstrap-manifests-inventory" (pkg/machinery/constants; siderolabs/go-kubernetes v0.2.41 kubernetes/ssa
// apply.go prepareObjects), conflicts forced as fluxcd's ssa ResourceManager applies. Then it waits for the
// DaemonSet's rollout; rolloutOfDaemonSet reads what that wait (and `kubectl rollout status`) reads.
import type { KubeClients } from "./client";
import { apiMessage, backoffMs, isNotFound, isTransient, KubeError, sleep, statusOf } from "./errors";
import { msg } from "./messages";

/** Talos' field manager and inventory (siderolabs/talos pkg/machinery/constants/constants.go). */
export const TALOS_FIELD_MANAGER = "talos";
export const TALOS_BOOTSTRAP_INVENTORY = "talos-bootstrap-manifests-inventory";
/** go-kubernetes kubernetes/ssa/inventory.go InventoryAnnotationKey. */
export const OWNING_INVENTORY_ANNOTATION = "config.k8s.io/owning-inventory";

export type BootstrapObject = { apiVersion?: unknown; kind?: unknown; metadata?: unknown; [key: string]: unknown };

/** A DaemonSet's rollout as `kubectl rollout status` reads it, and the image of its first container. */
export interface DaemonSetRollout {
  image?: string;
  generation: number;
  observedGeneration: number;
  desired: number;
  updated: number;
  available: number;
}

type Meta = { name?: string; namespace?: string; annotations?: Record<string, string> };

const describe = (o: BootstrapObject) => {
  const m = (o.metadata ?? {}) as Meta;
  return `${String(o.kind)} ${m.namespace ? `${m.namespace}/` : ""}${m.name ?? "?"}`;
};

async function withRetry<T>(fn: () => Promise<T>, signal: AbortSignal): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 4 || signal.aborted || !isTransient(err)) throw err;
      await sleep(backoffMs(attempt, 200, 2000), signal); // a stopped run cuts the back-off short (a failing next attempt is then final)
    }
  }
}

/** The object as Talos' sync sends it: owned by Talos' inventory (an object owned by another inventory is refused). */
function owned(o: BootstrapObject, manifest: string): BootstrapObject {
  const meta = { ...((o.metadata ?? {}) as Meta) };
  const owner = meta.annotations?.[OWNING_INVENTORY_ANNOTATION];
  if (owner !== undefined && owner !== TALOS_BOOTSTRAP_INVENTORY) throw new KubeError(msg.bootstrapForeignInventory(manifest, describe(o), owner));
  meta.annotations = { ...meta.annotations, [OWNING_INVENTORY_ANNOTATION]: TALOS_BOOTSTRAP_INVENTORY };
  return { ...o, metadata: meta };
}

/**
 * Server-side applies each object in order (Talos' manifests list Namespaces and CRDs first), as Talos' field manager.
 * Pruning objects no longer rendered (the inventory ConfigMap) is not done: see DEVELOPING.
 */
export async function syncBootstrapObjects(c: KubeClients, manifests: readonly { id: string; objects: readonly BootstrapObject[] }[], signal: AbortSignal): Promise<string[]> {
  const applied: string[] = [];
  for (const m of manifests) {
    for (const o of m.objects) {
      signal.throwIfAborted();
      const obj = owned(o, m.id);
      try {
        await withRetry(() => c.objects.applyRaw(obj as never, { fieldManager: TALOS_FIELD_MANAGER, force: true }), signal);
      } catch (err) {
        throw new KubeError(msg.bootstrapApplyFailed(m.id, describe(o), apiMessage(err), statusOf(err)), statusOf(err));
      }
      applied.push(describe(o));
    }
  }
  return applied;
}

/** The DaemonSet's rollout, or undefined when there is none. */
export async function rolloutOfDaemonSet(c: KubeClients, namespace: string, name: string, signal: AbortSignal): Promise<DaemonSetRollout | undefined> {
  let ds: { metadata?: { generation?: number }; spec?: { template?: { spec?: { containers?: { image?: string }[] } } }; status?: Record<string, number> };
  try {
    ds = (await withRetry(() => c.objects.getRaw(`/apis/apps/v1/namespaces/${namespace}/daemonsets/${name}`, {}), signal)) as typeof ds;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new KubeError(msg.daemonSetReadFailed(`${namespace}/${name}`, apiMessage(err), statusOf(err)), statusOf(err));
  }
  const s = ds.status ?? {};
  const image = ds.spec?.template?.spec?.containers?.[0]?.image;
  return {
    ...(image ? { image } : {}),
    generation: ds.metadata?.generation ?? 0, observedGeneration: s.observedGeneration ?? 0,
    desired: s.desiredNumberScheduled ?? 0, updated: s.updatedNumberScheduled ?? 0, available: s.numberAvailable ?? 0,
  };
}
