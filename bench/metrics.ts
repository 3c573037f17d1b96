// A benchmark figure as bench/results.json stores it, and where it was measured.
import * as os from "node:os";

/** A figure as bench/results.json stores it. */
export interface Metric {
  name: string;
  value: number;
  unit: string;
  /** The peer or limit the figure is compared with, in words. */
  compared_with: string;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function round(v: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/**
 * Where a figure was measured: the load average at its start and end, and the machine (core count and CPU model), so
 * figures from two machines are not read as a change in the code (the same commit, 22e7d61, measured a median of 377 ms
 * per wave at 1,000 nodes on one 2-core machine, six runs of 258–544, and 524 on another, seven runs of 492–680).
 */
export function machineNote(load0: number, load1: number): string {
  const cpus = os.cpus();
  return `load average ${round(load0, 2)} → ${round(load1, 2)} (${cpus.length} shared cores, ${cpus[0]?.model.trim() ?? "unknown CPU"})`;
}
