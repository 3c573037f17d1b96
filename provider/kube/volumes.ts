// Storage-aware reboot: after the drain, wait until the node's VolumeAttachments (storage.k8s.io/v1) are detached or
// gone before the node reboots, so a fast reboot cannot outrun the CSI detach (Multi-Attach errors, rebuild storms).
// A VolumeAttachment of the node blocks while `status.attached` is true or it is being deleted (the attach/detach
// controller deletes it, the CSI external-attacher detaches and removes its finalizer). Observed by watch (all
// VolumeAttachments, filtered by spec.nodeName client-side: the API server has no field selector for it), bounded by
// a deadline.
import { whenAborted } from "../abort";
import type { VolumeDetachOptions } from "../rollout/ports";
import { KubeClients } from "./client";
import { apiMessage, isTransient, KubeError, statusOf } from "./errors";
import { msg } from "./messages";
import { retryTransient } from "./nodes";
import { listAll } from "./objects";
import { SetObserver } from "./watch";

interface VolumeAttachment {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; deletionTimestamp?: string };
  spec?: { attacher?: string; nodeName?: string; source?: { persistentVolumeName?: string } };
  status?: { attached?: boolean };
  [key: string]: unknown;
}

/** Does this attachment still hold a volume on its node? */
export function isBlocking(va: VolumeAttachment): boolean {
  return va.status?.attached === true || Boolean(va.metadata?.deletionTimestamp);
}

/** `pvc-123 (csi.example.com, detaching)` for the step and errors. */
export function describeAttachment(va: VolumeAttachment): string {
  const volume = va.spec?.source?.persistentVolumeName || va.metadata?.name || "?";
  return msg.volumeBlocker(volume, va.spec?.attacher ?? "unknown attacher", Boolean(va.metadata?.deletionTimestamp));
}

const VOLUME_ATTACHMENTS = "/apis/storage.k8s.io/v1/volumeattachments";

const listVolumes = (c: KubeClients) =>
  listAll(c, VOLUME_ATTACHMENTS) as Promise<{ items: VolumeAttachment[]; metadata: { resourceVersion?: string } }>;

/** Only what a wait reads (isBlocking, describeAttachment): the cache holds every VolumeAttachment of the cluster. */
function trimAttachment(va: VolumeAttachment): VolumeAttachment {
  return {
    metadata: { name: va.metadata?.name, resourceVersion: va.metadata?.resourceVersion, deletionTimestamp: va.metadata?.deletionTimestamp },
    spec: { attacher: va.spec?.attacher, nodeName: va.spec?.nodeName, source: { persistentVolumeName: va.spec?.source?.persistentVolumeName } },
    status: { attached: va.status?.attached },
  };
}

/** Watch drops in a row after which the cache gives up (waits list from then on). */
const MAX_DROPS = 3;

/**
 * Every VolumeAttachment of the cluster, kept by one watch for the port's lifetime (started by the first wait), like a
 * controller's informer: a node's wait after its drain asks it instead of listing every VolumeAttachment of the cluster
 * on the node's critical path (issue 23: one list per node, each as large as the cluster's attachments). It answers
 * only while its watch is open; starting, reconnecting or refused (no right to list them), a wait lists as before. A
 * node it shows nothing blocking for goes at once; a node with volumes waits as before (its own list and watch).
 */
export class VolumeAttachmentCache {
  private observer: SetObserver<VolumeAttachment> | undefined;
  /** The newest state taken from the observer; undefined until its first list. */
  private objects: VolumeAttachment[] | undefined;
  /** Watch re-opens refused (not for want of an API server) since a wait last found the cache live. */
  private drops = 0;

  constructor(private readonly c: KubeClients) {}

  /** The node's blocking attachments as the watch has them; undefined when it cannot answer now (then: list). */
  blocking(node: string): VolumeAttachment[] | undefined {
    // Quiet: the cache only spares requests, so its drops are nobody's concern. A list refused, or its watch refused
    // with a status that will not change (401, 403, 404, 405: a role that may list but not watch) MAX_DROPS times
    // without a wait finding it live in between, ends it for good: every wait then lists, and reports what its list
    // says. Whatever an API server away for a while causes (a control plane behind the kubeconfig rebooting: no
    // connection, no answer, 5xx, a watch closed at once) does not count: the watch opens again once it is back; a
    // failure that never ends without a status costs a refused re-open every second or so, and waits list meanwhile.
    this.observer ??= new SetObserver<VolumeAttachment>({
      clients: this.c, path: VOLUME_ATTACHMENTS, list: () => listVolumes(this.c), trim: trimAttachment,
      onDrop: (err) => {
        if (statusOf(err) === undefined || isTransient(err)) return;
        if (++this.drops >= MAX_DROPS) this.observer?.stop();
      },
    });
    this.objects = this.observer.take()?.objects ?? this.objects;
    if (!this.observer.live || this.objects === undefined) return undefined;
    this.drops = 0;
    return this.objects.filter((va) => va.spec?.nodeName === node && isBlocking(va));
  }

  stop(): void {
    this.observer?.stop();
  }
}

export async function waitForVolumeDetach(
  c: KubeClients, node: string, opts: VolumeDetachOptions, log: (line: string) => void, cache?: VolumeAttachmentCache,
): Promise<void> {
  const { timeoutMs, signal, onBlocking } = opts;
  if (signal?.aborted) throw new KubeError(msg.volumeWaitCancelled(node));
  if (cache?.blocking(node)?.length === 0) return;
  // One list first: a node with nothing attached (the usual worker) needs no watch. Opening one per node put a watch
  // (its own TLS connection) on every node's critical path (issue 23); only a node that waits watches, from this list.
  let first: Awaited<ReturnType<typeof listVolumes>> | undefined;
  try {
    first = await retryTransient(() => listVolumes(c));
  } catch (err) {
    throw new KubeError(msg.volumesListFailed(node, apiMessage(err), statusOf(err)), statusOf(err));
  }
  if (!first.items.some((va) => va.spec?.nodeName === node && isBlocking(va))) return;
  const observer = new SetObserver<VolumeAttachment>({
    clients: c,
    path: VOLUME_ATTACHMENTS,
    list: () => {
      const listed = first;
      first = undefined;
      return listed ? Promise.resolve(listed) : listVolumes(c);
    },
    filter: (va) => va.spec?.nodeName === node,
    log,
  });
  let last: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let forget = () => undefined as void;
  const ended = new Promise<"timeout" | "cancelled">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
    forget = whenAborted(signal, () => resolve("cancelled")); // also an abort during the list above
  });
  try {
    for (;;) {
      const s = await Promise.race([observer.next(), ended]);
      if (s === "timeout") throw new KubeError(msg.volumesStillAttached(node, timeoutMs, last));
      if (s === "cancelled") throw new KubeError(msg.volumeWaitCancelled(node));
      if (s === undefined) throw new KubeError(msg.volumeWaitCancelled(node));
      const blocking = s.objects.filter(isBlocking).map(describeAttachment);
      if (blocking.length === 0) return;
      if (blocking.join() !== last.join()) onBlocking?.(blocking);
      last = blocking;
    }
  } catch (err) {
    if (err instanceof KubeError) throw err;
    throw new KubeError(msg.volumesListFailed(node, apiMessage(err), statusOf(err)), statusOf(err));
  } finally {
    if (timer) clearTimeout(timer);
    forget();
    observer.stop();
  }
}
