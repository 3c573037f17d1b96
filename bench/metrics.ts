// A benchmark figure as bench/results.json stores it.
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
