// Time for the rollout loop: an injectable clock, and deadlines as AbortSignals so every wait of the run (a running
// check, the readiness wait, a drain, a node coming back) ends at its bound, whatever it is waiting on.
import { sleep } from "../sleep";
import * as msg from "./messages";

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock (the default). */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(Math.max(0, ms), signal),
};

/** A signal that aborts at `at` (clock time) or when any of `parents` aborts; `expired` tells which. */
export interface Deadline {
  /** Clock time of the deadline. */
  readonly at: number;
  readonly signal: AbortSignal;
  /** True once the deadline itself (not a parent) has passed. */
  expired(): boolean;
  /** Stops the timer (call when the bounded work is over). */
  dispose(): void;
}

export function deadline(clock: Clock, at: number, parents: ReadonlyArray<AbortSignal | undefined> = []): Deadline {
  const own = new AbortController();
  const timer = new AbortController();
  let expired = false;
  void clock.sleep(at - clock.now(), timer.signal).then(() => {
    if (timer.signal.aborted) return;
    expired = true;
    own.abort(new Error(msg.DEADLINE_PASSED));
  });
  const signal = AbortSignal.any([own.signal, ...parents.filter((s): s is AbortSignal => s !== undefined)]);
  return {
    at,
    signal,
    expired: () => expired || clock.now() >= at,
    dispose: () => timer.abort(),
  };
}
