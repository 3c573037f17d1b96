// The run's timings: each test file's wall time and the slowest tests, and their table. Shared by the reporter and by
// scripts/summary.ts, which combines the halves of a split run.
import * as path from "node:path";

export const SLOWEST = 10;

export interface RunSummary {
  passed: number;
  failed: number;
  skipped: number;
  /** cpuMs: CPU time of every process the file ran (the group's own cgroup, when scripts/test.sh could make one). */
  files: { file: string; ms: number; tests: number; cpuMs?: number }[];
  slowest: { title: string; file: string; ms: number }[];
  /** Each failed test or hook with the first lines of its error, printed again at the very end of a run. */
  failures?: { title: string; file: string; error: string }[];
}

/** The failures again, last, so an output cut to its tail (a CI excerpt) still says what failed and why. */
export function formatFailures(failures: RunSummary["failures"]): string {
  if (!failures?.length) return "";
  const lines = [`\nFailed (${failures.length}):`];
  for (const f of failures) lines.push(`  ${f.file} › ${f.title}`, ...f.error.split("\n").map((l) => `      ${l}`));
  return `${lines.join("\n")}\n`;
}

/** The first lines of a test's error, short enough for a run's closing lines. */
export function errorHead(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const lines = text.split("\n").filter((l) => l.trim() !== "").slice(0, 6);
  return lines.map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l)).join("\n");
}

/** A file's path relative to the checkout, in its source form (tests/…/x.test.ts), for reading in CI output. */
export function sourceName(file: string | undefined): string {
  if (!file) return "(no file)";
  const rel = path.relative(process.cwd(), file);
  return rel.replace(/^dist[\\/]/, "").replace(/\.js$/, ".ts");
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`.padStart(8);
}

export function formatTimings(summary: Pick<RunSummary, "files" | "slowest">): string {
  const files = [...summary.files].sort((a, b) => b.ms - a.ms);
  const total = files.reduce((s, f) => s + f.ms, 0);
  const withCpu = files.some((f) => f.cpuMs !== undefined);
  const cpuTotal = files.reduce((s, f) => s + (f.cpuMs ?? 0), 0);
  const lines = withCpu
    ? [`\nWall time and CPU time (every process it ran) per file (${files.length} files, ${(total / 1000).toFixed(0)} s wall, ${(cpuTotal / 1000).toFixed(0)} s CPU in all):`]
    : [`\nWall time per file (${files.length} files, ${(total / 1000).toFixed(0)} s in all):`];
  for (const f of files) {
    const cpu = withCpu ? `${f.cpuMs === undefined ? "       ?" : seconds(f.cpuMs)} CPU` : "";
    lines.push(`${seconds(f.ms)}${cpu}  ${String(f.tests).padStart(3)} tests  ${f.file}`);
  }
  lines.push(`\nSlowest ${Math.min(SLOWEST, summary.slowest.length)} tests:`);
  for (const t of [...summary.slowest].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST)) {
    lines.push(`${seconds(t.ms)}  ${t.file} › ${t.title}`);
  }
  return lines.join("\n") + "\n";
}

