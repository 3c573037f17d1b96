// Storage-aware reboot: after the drain, wait until the node's VolumeAttachments (storage.k8s.io/v1) are detached or
// gone before the node reboots, so a fast reboot cannot outrun the CSI detach (Multi-Attach errors, rebuild storms).
// A VolumeAttachment of the node blocks while `status.attached` is true or it is being deleted (the attach/detach
// controller deletes it, the CSI external-attacher detaches and removes its finalizer). Observed by watch (all
// VolumeAttachments, filtered by spec.nodeName client-side: the API server has no field selector for it), bounded by
// a deadline.
import type { VolumeDetachOptions } from "../rollout/ports";
import { KubeClients } from "./client";
import { apiMessage, KubeError, statusOf } from "./errors";
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

export async function waitForVolumeDetach(c: KubeClients, node: string, opts: VolumeDetachOptions, log: (line: string) => void): Promise<void> {
  const { timeoutMs, signal, onBlocking } = opts;
  if (signal?.aborted) throw new KubeError(msg.volumeWaitCancelled(node));
  const listVolumes = () => listAll(c, VOLUME_ATTACHMENTS) as Promise<{ items: VolumeAttachment[]; metadata: { resourceVersion?: string } }>;
  // One list first: a node with nothing attached (the usual worker) needs no watch. Opening one per node put a watch
  // (its own TLS connection) on every node's critical path (issue 23); only a node that waits watches, from this list.
  let first: Awaited<ReturnType<typeof listVolumes>> | undefined;
  try {
    first = await retryTransient(listVolumes);
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
      return listed ? Promise.resolve(listed) : listVolumes();
    },
    filter: (va) => va.spec?.nodeName === node,
    log,
  });
  let last: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<"timeout" | "cancelled">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
    signal?.addEventListener("abort", () => resolve("cancelled"), { once: true });
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
    observer.stop();
  }
}
