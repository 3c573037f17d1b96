// What every rollout a handler runs (TalosUpgrade, KubernetesUpgrade) is wrapped in: the ports it is given, its
// identity (the Lease holder), its bound from customTimeouts, and the stop signal it obeys — the engine's Cancel (or the
// engine gone), SIGINT/SIGTERM to this process (a terminal's Ctrl-C reaches the whole process group).
import * as os from "node:os";
import type { KubeClient } from "../kube";
import { formatDuration as formatGoDuration } from "../template/duration";
import { progress, errorText } from "./common";
import { warn } from "./diagnostics";
import { engineCancellation } from "./engine";
import * as msg from "./messages";

/** The port; with `run`, a rollout's: it stamps the status mirror, and its runner Jobs carry the cluster and owner. */
export function kubeApi(kubeconfig: string, urn?: string, run?: { cluster: string; holder?: string }): KubeClient {
  return (require("../kube") as typeof import("../kube")).createKubeApi(kubeconfig, {
    log: (line) => warn(urn, line),
    ...(run ? { runnerScope: { cluster: run.cluster, ...(run.holder ? { owner: run.holder } : {}) } } : {}),
    ...(run?.holder ? { statusWriter: run.holder } : {}),
  });
}

export function talosApi(talosconfig: string) {
  return (require("../talos") as typeof import("../talos")).createTalosApi(talosconfig);
}

/**
 * The rollout's identity: the Lease holder and the owner mark on the cordons it sets. Stable per stack and resource
 * (`owner`), so a resumed `pulumi up` of the same stack takes its own Lease over at once.
 */
export function holderOf(owner: string | undefined, id: string): string {
  return owner ? `pulumi:${owner}` : `pulumi:${id}@${os.hostname()}:${process.pid}`;
}

/**
 * The run's stop signal: aborted by the engine's Cancel (or the engine gone), SIGINT/SIGTERM, or customTimeouts'
 * bound for `op` (issue 22.8: the engine never enforces it for a dynamic provider). `dispose` when the run is over.
 */
export function runAbort(cluster: string, boundMs: number, op: "create" | "update"): { signal: AbortSignal; dispose(): void } {
  const abort = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    progress(`${msg.clusterPrefix(cluster)} ${msg.cancelled(sig)}`);
    abort.abort(new Error(msg.receivedSignal(sig)));
  };
  const engine = engineCancellation();
  const onEngineCancel = () => {
    progress(`${msg.clusterPrefix(cluster)} ${msg.stoppingBecause(errorText(engine.reason))}`);
    abort.abort(engine.reason);
  };
  if (engine.aborted) onEngineCancel();
  else engine.addEventListener("abort", onEngineCancel, { once: true });
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const bound = boundMs > 0 ? setTimeout(() => abort.abort(new Error(msg.runTimedOut(op, formatGoDuration(boundMs)))), boundMs).unref() : undefined;
  return {
    signal: abort.signal,
    dispose() {
      clearTimeout(bound);
      engine.removeEventListener("abort", onEngineCancel);
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
