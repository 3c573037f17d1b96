// What a rollout leaves behind must not outlive it. A run is level-based (every wave re-reads the live cluster), so a
// resumed run starts with the first node not on the target and never upgrades a node twice; the one thing the live
// cluster keeps from an interrupted run is its cordons. Each carries its owner's mark (the lease holder), so a run
// lifts exactly the cordons its owner set — when it starts (a killed run's leftovers) and when it ends, however it
// ends — and never an administrator's or Talos' own. A mark whose cordon someone lifted is stale and dropped at the
// start, so an administrator's later cordon is not taken for ours.
import { errorText, type RunContext } from "./context";
import type { Machine } from "./ports";
import * as msg from "./messages";

/**
 * Lifts every cordon this run's owner set on the given machines (best effort: a failure is a warning). At the start
 * of a run, marks left on schedulable nodes are dropped first: the cordon they marked was lifted by someone else, and
 * a cordon set later (an administrator's) must never pass for ours.
 */
export async function releaseOwnCordons(ctx: RunContext, live: readonly Machine[], why: "leftover" | "end"): Promise<void> {
  const owner = ctx.opts.holder;
  if (why === "leftover") await dropStaleMarks(ctx, live);
  for (const m of live.filter((x) => x.cordonedBy === owner)) {
    try {
      if (await ctx.kube.uncordon(m.name, owner)) {
        if (why === "leftover") ctx.opts.onProgress?.(msg.progressPrefix(ctx.opts.cluster) + msg.progressUncordonedLeftover(m.name));
      }
    } catch (e) {
      ctx.warn(msg.uncordonFailed(m.name, errorText(e)));
    }
  }
}

/** Removes talos-gate's marks from schedulable nodes (whoever's: the Lease says no other run is going on). */
async function dropStaleMarks(ctx: RunContext, live: readonly Machine[]): Promise<void> {
  for (const m of live.filter((x) => x.staleCordonMark !== undefined)) {
    try {
      await ctx.kube.dropStaleCordonMark(m.name);
    } catch (e) {
      ctx.warn(msg.staleMarkNotDropped(m.name, errorText(e)));
    }
  }
}
