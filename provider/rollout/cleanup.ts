// The end of every run, however it ends (done, failed, timed out, cancelled): remove the runner Jobs (a check cut
// short at holdTimeout leaves its Job running), lift the cordons this run's owner set, write the last status, release
// the lease. Each step is best effort
// and bounded by the port's request timeouts, so cleanup can neither hang the run nor hide its outcome.
import { errorText, type RunContext } from "./context";
import { releaseOwnCordons } from "./resume";
import * as msg from "./messages";

export async function cleanUp(ctx: RunContext, { releaseLease }: { releaseLease: boolean }): Promise<void> {
  try {
    await ctx.kube.sweepRunners();
  } catch (e) {
    ctx.warn(msg.sweepFailed(errorText(e)));
  }
  try {
    await releaseOwnCordons(ctx, await ctx.kube.listMachines(), "end");
  } catch (e) {
    ctx.warn(msg.uncordonFailed("(listing the nodes)", errorText(e)));
  }
  ctx.stopWatching();
  await ctx.flushStatus();
  if (!releaseLease) return; // the caller's (a path holds one Lease across its steps)
  try {
    await ctx.lease.release();
  } catch (e) {
    ctx.warn(msg.leaseReleaseFailed(errorText(e)));
  }
}
