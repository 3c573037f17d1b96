// Pure gate aggregation (Omni §4.5, §4.6): from per-check outcomes, whether the gate is open, the step text and the
// retry delay (the shortest interval among the checks that did not pass). PURE.

import type { CheckOutcome } from "./ports";
import { CHECK_WAITING_TO_COMPLETE, healthcheckStep } from "./messages";

/** Omni's default healthcheck interval when none (or a non-positive one) is set. */
export const DEFAULT_INTERVAL_MS = 30_000;

export interface CheckResult {
  id: string;
  /** The check's retry interval; ≤ 0 or missing means the 30 s default. */
  intervalMs?: number;
  outcome: CheckOutcome;
}

export interface GateVerdict {
  /** Every check passed (true for no checks at all). */
  open: boolean;
  /** `waiting for healthchecks to pass: ...` over the non-passed checks, in input order; "" when open. */
  step: string;
  /** Shortest interval among non-passed checks; undefined when open. */
  retryInMs?: number;
  /** Ids of checks that did not pass (failed or still running), in input order. */
  notPassed: string[];
  failed: string[];
  running: string[];
  passed: string[];
  /** Non-passed checks with their (untruncated) detail, in input order. */
  entries: Array<{ id: string; detail: string }>;
}

export function effectiveInterval(intervalMs: number | undefined): number {
  return intervalMs !== undefined && Number.isFinite(intervalMs) && intervalMs > 0 ? intervalMs : DEFAULT_INTERVAL_MS;
}

/** Detail a check contributes to the step: the failure reason, or "waiting to complete" while running. */
export function outcomeDetail(outcome: CheckOutcome): string {
  if (outcome.state === "passed") return "";
  if (outcome.state === "running") return outcome.reason !== "" ? outcome.reason : CHECK_WAITING_TO_COMPLETE;
  return outcome.reason;
}

export function evaluateGate(results: readonly CheckResult[]): GateVerdict {
  const failed: string[] = [], running: string[] = [], passed: string[] = [];
  const entries: Array<{ id: string; detail: string }> = [];
  let retry: number | undefined;
  for (const r of results) {
    if (r.outcome.state === "passed") {
      passed.push(r.id);
      continue;
    }
    (r.outcome.state === "failed" ? failed : running).push(r.id);
    entries.push({ id: r.id, detail: outcomeDetail(r.outcome) });
    const iv = effectiveInterval(r.intervalMs);
    retry = retry === undefined ? iv : Math.min(retry, iv);
  }
  const open = entries.length === 0;
  return {
    open,
    step: open ? "" : healthcheckStep(entries),
    ...(retry !== undefined ? { retryInMs: retry } : {}),
    notPassed: entries.map((e) => e.id),
    failed,
    running,
    passed,
    entries,
  };
}
