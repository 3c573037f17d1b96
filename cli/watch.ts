// `talos-gate status --watch`: the status printed again on each change of its mirror ConfigMap, observed with a
// Kubernetes WATCH (provider/kube/watch.ts: list, then watch from its resourceVersion with bookmarks; every watch
// bounded by a server-side timeout and a silence watchdog, re-opened with backoff when it drops, re-listed on 410
// Gone). Runs until SIGINT or SIGTERM (exit 0). A terminal is redrawn in place; a pipe gets one document per change.
import type * as k8s from "../provider/kube/k8s";
import { KubeClients } from "../provider/kube/client";
import { apiMessage } from "../provider/kube/errors";
import { STATUS_KEY, LEGACY_STATUS_KEY, statusConfigMapName, SYSTEM_NAMESPACE } from "../provider/kube/labels";
import { ObjectObserver } from "../provider/kube/watch";
import { mirroredFrom } from "./common";
import { CliError, cliMsg } from "./messages";
import { renderStatus, type StatusOutput } from "./status";

/** Clears a terminal and moves to its top (ours: no text from the cluster reaches the terminal unfiltered). */
const CLEAR = "\u001b[H\u001b[2J";

export interface WatchOptions {
  kubeconfigText: string;
  kubeconfigDir: string;
  cluster: string;
  output: StatusOutput;
  /** Where the frames go (stdout); `tty` redraws in place. */
  out?: { write(s: string): unknown; isTTY?: boolean };
  /** Ends the watch (besides SIGINT/SIGTERM). */
  signal?: AbortSignal;
}

/** One frame: what a terminal or a pipe gets for one state of the mirror. */
export function frame(text: string, output: StatusOutput, tty: boolean, first: boolean): string {
  if (tty) return CLEAR + text;
  if (output === "json") return JSON.stringify(JSON.parse(text)) + "\n";
  return (first ? "" : "---\n") + text;
}

export async function watchStatus(o: WatchOptions): Promise<number> {
  const out = o.out ?? process.stdout;
  const tty = Boolean(out.isTTY);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  o.signal?.addEventListener("abort", onSignal, { once: true });
  const c = new KubeClients(o.kubeconfigText, undefined, o.kubeconfigDir);
  const name = statusConfigMapName(o.cluster);
  const observer = new ObjectObserver<k8s.V1ConfigMap>({
    clients: c,
    path: `/api/v1/namespaces/${SYSTEM_NAMESPACE}/configmaps`,
    name,
    list: () => c.core.listNamespacedConfigMap({ namespace: SYSTEM_NAMESPACE, fieldSelector: `metadata.name=${name}` }),
    // Only a new status is a change worth a frame (not a label or annotation edit).
    same: (held, next) => held.data?.[STATUS_KEY] === next.data?.[STATUS_KEY] && held.data?.[LEGACY_STATUS_KEY] === next.data?.[LEGACY_STATUS_KEY],
  });
  stop.signal.addEventListener("abort", () => observer.stop(), { once: true });
  let first = true;
  let hadStatus = false;
  try {
    for (;;) {
      let seen;
      try {
        seen = await observer.next();
      } catch (err) {
        throw new CliError(cliMsg.watchFailed(o.cluster, apiMessage(err)));
      }
      if (!seen || stop.signal.aborted) return 0;
      const mirrored = seen.object && mirroredFrom(seen.object, o.cluster);
      if (!mirrored) {
        // Said on stderr: stdout carries only documents.
        process.stderr.write((hadStatus ? cliMsg.watchDeleted(o.cluster) : cliMsg.watchWaiting(o.cluster)) + "\n");
        continue;
      }
      hadStatus = true;
      out.write(frame(renderStatus(mirrored, o.output), o.output, tty, first));
      first = false;
    }
  } finally {
    observer.stop();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
