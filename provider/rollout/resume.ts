// Resuming after an interrupted run. A run is level-based (every wave re-reads the live cluster), so a resumed run
// starts with the first node not on the target and never upgrades a node twice; what the live cluster cannot show is
// which nodes the previous run left cordoned, which is read from the mirrored status.
import type { RunContext } from "./context";
import type { Machine } from "./ports";
import type { UpgradeStatus } from "./status";
import * as msg from "./messages";
import { sameVersion } from "../version";

/**
 * A previous run that was killed (or failed) while a node was in flight may have left that node cordoned by its drain
 * although the node has since booted the version it was upgraded to; the next run would skip it as done and leave it
 * unschedulable for good. Finish that upgrade like Omni's finalise step: uncordon it. Only nodes the mirrored status
 * shows in flight are touched, so a node an administrator cordoned stays cordoned.
 */
export async function finishInterrupted(ctx: RunContext, live: Machine[], previous: UpgradeStatus | undefined): Promise<void> {
  const inFlight = (previous?.machines ?? []).filter((m) => m.state === "upgrading" || m.state === "failed");
  for (const was of inFlight) {
    const m = live.find((x) => x.name === was.name);
    if (!m || !m.cordoned || !m.ready || !sameVersion(m.talosVersion, was.to)) continue;
    await ctx.kube.uncordon(m.name);
    ctx.opts.onProgress?.(msg.progressPrefix(ctx.opts.cluster) + msg.progressFinishedInterrupted(m.name, was.to));
  }
}
