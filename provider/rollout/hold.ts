// The gate before each wave (Omni §4.5–4.6): wait until every machine is Ready, then run every healthcheck until all
// pass in one attempt, retrying failing ones at the shortest interval. One bound covers the whole hold: at
// `holdTimeout` a running check is cut short (it holds as "waiting to complete"), a not-ready wait ends, and the run
// stops with the reason; nothing waits past the deadline, whatever it waits on.
import { deadline, type Deadline } from "./clock";
import { Stop, errorText, type RunContext } from "./context";
import { evaluateGate, type CheckResult } from "./gate";
import type { CheckOutcome, HealthcheckJob } from "./ports";
import * as msg from "./messages";

/** Holds until the cluster is ready and every check passes; throws Stop at holdTimeout or when the run must stop. */
export async function holdGate(ctx: RunContext, waveNo: number, nextNode: string): Promise<void> {
  const start = ctx.now();
  const bound = deadline(ctx.clock, start + ctx.opts.holdTimeoutMs, [ctx.stop]);
  try {
    await waitClusterReady(ctx, bound, nextNode);
    await passChecks(ctx, waveNo, bound, nextNode);
  } finally {
    bound.dispose();
  }
}

async function waitClusterReady(ctx: RunContext, bound: Deadline, nextNode: string): Promise<void> {
  const pollMs = ctx.opts.readyPollMs ?? 2000;
  let waiting = false;
  for (;;) {
    const notReady = (await ctx.machines()).filter((m) => !m.ready).map((m) => m.name).sort();
    if (notReady.length === 0) {
      if (waiting) await ctx.emit({ type: "ClusterReady", at: ctx.now() });
      return;
    }
    if (!waiting) await ctx.emit({ type: "WaitingForReady", at: ctx.now(), notReady });
    waiting = true;
    ctx.checkStop(nextNode);
    if (bound.expired()) throw new Stop(msg.reasonNotReadyTimeout(ctx.opts.holdTimeoutMs, notReady));
    await ctx.clock.sleep(pollMs, bound.signal);
  }
}

async function passChecks(ctx: RunContext, waveNo: number, bound: Deadline, nextNode: string): Promise<void> {
  const checks = ctx.opts.healthchecks;
  if (checks.length === 0) return;
  const ids = checks.map((c) => c.id);
  for (let attempt = 1; ; attempt++) {
    await ctx.emit({ type: "GateStarted", at: ctx.now(), wave: waveNo, attempt, checks: ids });
    const results = await Promise.all(checks.map((check) => runOne(ctx, check, bound.signal)));
    ctx.checkStop(nextNode);
    const verdict = evaluateGate(results);
    if (verdict.open) {
      await ctx.emit({ type: "GatePassed", at: ctx.now(), wave: waveNo, attempt }, true);
      return;
    }
    const heldBy = () => verdict.entries.map((e) => msg.healthcheckContribution(e.id, e.detail)).join("; ");
    if (bound.expired()) throw new Stop(msg.reasonHoldTimeout(ctx.opts.holdTimeoutMs, waveNo, ctx.status.waves, heldBy()));
    // Retry after the shortest interval of the failing checks, at the latest at the deadline; a hold that reaches the
    // deadline while waiting ends with every check's latest word (an attempt started then would be cut short at once).
    const retry = Math.min(verdict.retryInMs!, bound.at - ctx.now());
    await ctx.emit({ type: "GateHeld", at: ctx.now(), wave: waveNo, attempt, retryInMs: retry }, true);
    await ctx.clock.sleep(retry, bound.signal);
    ctx.checkStop(nextNode);
    if (bound.expired()) throw new Stop(msg.reasonHoldTimeout(ctx.opts.holdTimeoutMs, waveNo, ctx.status.waves, heldBy()));
  }
}

/**
 * One evaluation of one check, cut short when `signal` aborts (then it holds as "waiting to complete"). An error
 * running the check (API server unreachable, Job rejected, Forbidden) holds the gate like a failing check and shows in
 * the step; it is retried at the interval and bounded by holdTimeout (Omni retries such errors too, and never opens
 * the gate on one).
 */
async function runOne(ctx: RunContext, check: HealthcheckJob, signal: AbortSignal): Promise<CheckResult> {
  const outcome: CheckOutcome = await ctx.kube.runCheck(check, { signal })
    .catch((e): CheckOutcome => ({ state: "failed", reason: errorText(e) }));
  await ctx.emit({ type: "CheckFinished", at: ctx.now(), id: check.id, outcome });
  return { id: check.id, intervalMs: check.intervalMs, outcome };
}
