// Soak between waves: after the last wave's nodes are back and Ready, the next node waits at least `soakTime`, counted
// from when every condition holds; a condition that stops holding during the soak restarts it once it holds again
// (woken by the condition's watch event, not by polling). Bounded: the soak plus holdTimeout; the gate before the next
// wave then checks every gate once more.
import { deadline } from "./clock";
import type { ConditionWatch } from "./conditions";
import { Stop, type RunContext } from "./context";
import * as msg from "./messages";

function heldBy(cw: ConditionWatch): string {
  return cw.results().filter((r) => r.outcome.state !== "passed")
    .map((r) => msg.healthcheckContribution(r.id, (r.outcome as { reason: string }).reason)).join("; ");
}

export async function soak(ctx: RunContext, cw: ConditionWatch | undefined, nextNode: string, backAt: number): Promise<void> {
  const soakMs = ctx.opts.soakMs ?? 0;
  if (soakMs <= 0) return;
  const { holdTimeoutMs } = ctx.opts;
  const bound = deadline(ctx.clock, Math.max(backAt, ctx.now()) + soakMs + holdTimeoutMs, [ctx.stop]);
  let since = backAt;
  await ctx.emit({ type: "SoakStarted", at: ctx.now(), soakMs, untilAt: since + soakMs }, true);
  try {
    for (;;) {
      ctx.checkStop(nextNode);
      if (cw && !cw.allPass()) {
        await ctx.emit({ type: "SoakRestarted", at: ctx.now(), reason: heldBy(cw) }, true);
        while (!cw.allPass()) {
          if (bound.expired()) throw new Stop(msg.reasonSoakTimeout(soakMs, holdTimeoutMs, heldBy(cw)));
          await cw.changed(cw.seen, bound.signal);
          ctx.checkStop(nextNode);
        }
        since = ctx.now();
        await ctx.emit({ type: "SoakStarted", at: since, soakMs, untilAt: since + soakMs }, true);
        continue;
      }
      const left = since + soakMs - ctx.now();
      if (left <= 0) {
        await ctx.emit({ type: "SoakDone", at: ctx.now() }, true);
        return;
      }
      if (bound.expired()) throw new Stop(msg.reasonSoakTimeout(soakMs, holdTimeoutMs, cw ? heldBy(cw) : ""));
      // Until the soak ends, or a condition changes (a flap restarts it).
      const wake = new AbortController();
      const signal = AbortSignal.any([bound.signal, wake.signal]);
      const seen = cw?.seen ?? 0;
      await Promise.race([ctx.clock.sleep(left, signal), ...(cw ? [cw.changed(seen, signal)] : [])]);
      wake.abort();
    }
  } finally {
    bound.dispose();
  }
}
