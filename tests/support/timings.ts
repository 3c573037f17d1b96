// The run's timings: each test file's wall time and the slowest tests, and their table. Shared by the reporter and by
// scripts/summary.ts, which combines the halves of a split run.
import * as path from "node:path";

export const SLOWEST = 10;

export interface RunSummary {
  passed: number;
  failed: number;
  skipped: number;
  files: { file: string; ms: number; tests: number }[];
  slowest: { title: string; file: string; ms: number }[];
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
  const lines = [`\nWall time per file (${files.length} files, ${(total / 1000).toFixed(0)} s in all):`];
  for (const f of files) lines.push(`${seconds(f.ms)}  ${String(f.tests).padStart(3)} tests  ${f.file}`);
  lines.push(`\nSlowest ${Math.min(SLOWEST, summary.slowest.length)} tests:`);
  for (const t of [...summary.slowest].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST)) {
    lines.push(`${seconds(t.ms)}  ${t.file} › ${t.title}`);
  }
  return lines.join("\n") + "\n";
}

