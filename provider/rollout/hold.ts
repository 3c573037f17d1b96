// The gate before each wave (Omni §4.5–4.6): wait until the nodes an interrupted run left mid-upgrade are Ready again
// (other not-ready nodes only shrink the quota: plan.ts), then run every healthcheck until all pass in one attempt,
// retrying failing ones at the shortest interval. One bound covers the whole hold: at
// `holdTimeout` a running check is cut short (it holds as "waiting to complete"), a not-ready wait ends, and the run
// stops with the reason; nothing waits past the deadline, whatever it waits on.
import { deadline, type Deadline } from "./clock";
import type { ConditionWatch } from "./conditions";
import { Stop, errorText, type RunContext } from "./context";
import { effectiveInterval, evaluateGate, type CheckResult } from "./gate";
import type { CheckOutcome, HealthcheckJob, Machine } from "./ports";
import type { Wave } from "./plan";
import { askEtcd, ETCD_RETRY_MS } from "./etcd";
import * as msg from "./messages";

/** One check of the gate, run afresh at every attempt: a user's healthcheck Job, or the built-in etcd check. */
interface GateCheck {
  id: string;
  intervalMs: number;
  run(signal: AbortSignal): Promise<CheckOutcome>;
}

/** What a hold enforces besides the safety rules every mode keeps. */
export interface HoldOptions {
  /**
   * The user's gates (healthchecks, conditions). A revert skips them, so a broken cluster can always be rolled back;
   * it never skips the safety rules: nodes in flight Ready, every other control plane Ready, etcd's consent.
   */
  userGates: boolean;
}

/**
 * Holds until the nodes an interrupted run left are Ready, before a control plane every other control plane is Ready,
 * and every check passes — the user's healthchecks and conditions (not when reverting) and, before a control plane,
 * etcd's own health — then returns; throws Stop at holdTimeout, when the run must stop, or when etcd could never allow
 * the control plane down.
 */
export async function holdGate(
  ctx: RunContext, waveNo: number, wave: Wave, inFlight: ReadonlySet<string>, conditions: ConditionWatch | undefined,
  opts: HoldOptions = { userGates: true },
): Promise<void> {
  const start = ctx.now();
  const nextNode = wave.machines[0].name;
  const bound = deadline(ctx.clock, start + ctx.opts.holdTimeoutMs, [ctx.stop]);
  try {
    const controlPlane = wave.machines.find((m) => m.role === "controlplane");
    if (inFlight.size > 0 || controlPlane) await waitReady(ctx, bound, nextNode, mustBeReady(wave, inFlight));
    const checks = opts.userGates ? ctx.opts.healthchecks.map((c) => jobCheck(ctx, c)) : [];
    if (controlPlane) checks.push(etcdCheck(ctx, controlPlane));
    await passChecks(ctx, waveNo, bound, nextNode, checks, opts.userGates ? conditions : undefined);
  } finally {
    bound.dispose();
  }
}

/**
 * Which machines must be Ready before the wave goes: the nodes an interrupted run left in flight and, before a
 * control plane, every other control plane (one down already, a second would take the cluster's API and etcd quorum
 * with it — in a revert too: issue 18.1).
 */
function mustBeReady(wave: Wave, inFlight: ReadonlySet<string>): (m: Machine) => boolean {
  const inWave = new Set(wave.machines.map((m) => m.name));
  const controlPlaneWave = wave.machines.some((m) => m.role === "controlplane");
  return (m) => inFlight.has(m.name) || (controlPlaneWave && m.role === "controlplane" && !inWave.has(m.name));
}

/** A user's healthcheck: Omni's Job lifecycle through the Kubernetes port. */
function jobCheck(ctx: RunContext, check: HealthcheckJob): GateCheck {
  return { id: check.id, intervalMs: check.intervalMs, run: (signal) => ctx.kube.runCheck(check, { signal }) };
}

/** etcd could never let this control plane go down (e.g. two members): waiting cannot help. */
class EtcdRefusal extends Stop {}

/**
 * Before a control plane's wave, etcd must be healthy and keep quorum without its member (Omni and talosctl ask the
 * same); asked again right before it goes down (etcd.ts, node.ts): Talos' own check is skipped for preserved
 * upgrades from v1.12.9, v1.13.4 and v1.14.0-alpha.2, and is never made on the LifecycleService path.
 */
function etcdCheck(ctx: RunContext, machine: Pick<Machine, "name">): GateCheck {
  return {
    id: msg.ETCD_CHECK_ID,
    intervalMs: ETCD_RETRY_MS,
    run: async (signal) => {
      const answer = await askEtcd(ctx, machine, signal);
      if (answer.state === "refused") throw new EtcdRefusal(answer.reason);
      return answer;
    },
  };
}

async function waitReady(ctx: RunContext, bound: Deadline, nextNode: string, watched: (m: Machine) => boolean): Promise<void> {
  const pollMs = ctx.opts.readyPollMs ?? 2000;
  let waiting = false;
  for (;;) {
    const seen = ctx.machinesVersion();
    const notReady = (await ctx.machines()).filter((m) => !m.ready && watched(m)).map((m) => m.name).sort();
    if (notReady.length === 0) {
      if (waiting) await ctx.emit({ type: "ClusterReady", at: ctx.now() });
      return;
    }
    if (!waiting) await ctx.emit({ type: "WaitingForReady", at: ctx.now(), notReady });
    waiting = true;
    ctx.checkStop(nextNode);
    if (bound.expired()) throw new Stop(msg.reasonNotReadyTimeout(ctx.opts.holdTimeoutMs, notReady));
    await ctx.machinesChanged(seen, pollMs, bound.signal);
  }
}

/**
 * Job checks run as fresh Jobs each attempt (Omni); conditions are read from their watches as they stand. The gate
 * opens when every Job check passed in the latest attempt and every condition holds now. While only conditions hold
 * it, the gate waits for the next watch event that changes a condition (it opens on that very event) — or until the
 * Job checks' pass is older than their interval, when they run again.
 */
async function passChecks(
  ctx: RunContext, waveNo: number, bound: Deadline, nextNode: string, checks: readonly GateCheck[], conditions?: ConditionWatch,
): Promise<void> {
  if (checks.length === 0 && !conditions) return;
  const jobIds = checks.map((c) => c.id);
  const refreshMs = Math.min(...checks.map((c) => effectiveInterval(c.intervalMs)));
  // The last failure text of each check in this hold: a retry cut short at the deadline ends the hold with what the
  // check last said, not "waiting to complete" (a real Job takes a second or more to fail).
  const lastFailure = new Map<string, string>();
  let jobResults: CheckResult[] = [];
  let jobsPassedAt: number | undefined;
  let attempt = 0;
  for (let round = 1; ; round++) {
    const rerun = checks.length > 0 && (jobsPassedAt === undefined || ctx.now() - jobsPassedAt >= refreshMs);
    if (rerun || round === 1) {
      attempt++;
      await ctx.emit({ type: "GateStarted", at: ctx.now(), wave: waveNo, attempt, checks: [...(rerun ? jobIds : []), ...(conditions?.gates.map((g) => g.id) ?? [])] });
    }
    if (rerun) {
      jobResults = await Promise.all(checks.map((check) => runOne(ctx, check, bound.signal)));
      jobsPassedAt = jobResults.every((r) => r.outcome.state === "passed") ? ctx.now() : undefined;
      for (const r of jobResults) if (r.outcome.state === "failed") lastFailure.set(r.id, r.outcome.reason);
    }
    ctx.checkStop(nextNode);
    const seen = conditions?.seen ?? 0;
    const verdict = evaluateGate([...jobResults, ...(conditions ? await reportConditions(ctx, conditions) : [])]);
    if (verdict.open) {
      await ctx.emit({ type: "GatePassed", at: ctx.now(), wave: waveNo, attempt }, true);
      return;
    }
    const heldBy = () => verdict.entries
      .map((e) => msg.healthcheckContribution(e.id, verdict.running.includes(e.id) && lastFailure.has(e.id) ? lastFailure.get(e.id)! : e.detail))
      .join("; ");
    if (bound.expired()) throw new Stop(msg.reasonHoldTimeout(ctx.opts.holdTimeoutMs, waveNo, ctx.status.waves, heldBy()));
    const left = bound.at - ctx.now();
    if (checks.length > 0 && jobsPassedAt === undefined) {
      // Retry after the shortest interval of the failing checks, at the latest at the deadline; a hold that reaches the
      // deadline while waiting ends with every check's latest word (an attempt started then would be cut short at once).
      const retry = Math.min(evaluateGate(jobResults).retryInMs!, left);
      await ctx.emit({ type: "GateHeld", at: ctx.now(), wave: waveNo, attempt, retryInMs: retry }, true);
      await ctx.clock.sleep(retry, bound.signal);
    } else {
      // Only conditions hold: wake on the watch event that changes one, or when the Job checks' pass goes stale.
      const wait = checks.length > 0 ? Math.min(jobsPassedAt! + refreshMs - ctx.now(), left) : left;
      await ctx.emit({ type: "GateHeld", at: ctx.now(), wave: waveNo, attempt, retryInMs: Math.max(0, wait) }, true);
      const wake = new AbortController();
      const signal = AbortSignal.any([bound.signal, wake.signal]);
      await Promise.race([conditions!.changed(seen, signal), ctx.clock.sleep(wait, signal)]);
      wake.abort();
    }
    ctx.checkStop(nextNode);
    if (bound.expired()) throw new Stop(msg.reasonHoldTimeout(ctx.opts.holdTimeoutMs, waveNo, ctx.status.waves, heldBy()));
  }
}

/** The conditions' current verdicts; a change since the status last showed it is recorded (CheckFinished). */
async function reportConditions(ctx: RunContext, conditions: ConditionWatch): Promise<CheckResult[]> {
  const results = conditions.results();
  for (const r of results) {
    const shown = ctx.status.healthchecks.find((h) => h.id === r.id);
    const state = r.outcome.state === "passed" ? "PASSED" : "FAILED";
    const reason = r.outcome.state === "passed" ? undefined : msg.truncateReason(msg.singleLine((r.outcome as { reason: string }).reason));
    if (!shown || shown.state !== state || (reason !== undefined && shown.lastReason !== reason)) {
      await ctx.emit({ type: "CheckFinished", at: ctx.now(), id: r.id, outcome: r.outcome });
    }
  }
  return results;
}

/**
 * One evaluation of one check, cut short when `signal` aborts (then it holds as "waiting to complete"). An error
 * running the check (API server unreachable, Job rejected, Forbidden) holds the gate like a failing check and shows in
 * the step; it is retried at the interval and bounded by holdTimeout (Omni retries such errors too, and never opens
 * the gate on one). Only a refusal waiting cannot cure ends the run.
 */
async function runOne(ctx: RunContext, check: GateCheck, signal: AbortSignal): Promise<CheckResult> {
  const outcome: CheckOutcome = await check.run(signal).catch((e): CheckOutcome => {
    if (e instanceof EtcdRefusal) throw e;
    return { state: "failed", reason: errorText(e) };
  });
  await ctx.emit({ type: "CheckFinished", at: ctx.now(), id: check.id, outcome });
  return { id: check.id, intervalMs: check.intervalMs, outcome };
}
