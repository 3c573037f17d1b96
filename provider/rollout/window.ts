// A closed maintenance window ends a run as `Waiting`, not `Failed` (issue 22.3): nothing is wrong, the next run inside
// a window continues. Only upgrades are paced by windows (a revert, like Omni's, is never held).
import type { RunContext } from "./context";
import { Stop } from "./context";

/** Thrown before a node when no node may start now; the run ends with phase Waiting and this reason as its step. */
export class WaitForWindow extends Error {
  override name = "WaitForWindow";
}

/**
 * Stops the run when no node may start now: Waiting with when the next window opens, or Failed when none opens within
 * the horizon (waiting would never end: the windows need fixing).
 */
export function checkWindow(ctx: RunContext): void {
  const schedule = ctx.opts.schedule;
  const now = new Date(ctx.now());
  const closed = schedule?.closedReason(now);
  if (!closed) return;
  const waiting = schedule!.waitingReason(now);
  throw waiting ? new WaitForWindow(waiting) : new Stop(closed);
}
