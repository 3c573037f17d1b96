// Combines the groups of a split run (scripts/test.sh): each group's reporter wrote its counts and timings as JSON.
// Prints one table for the whole run and the closing "N passed, N failed, N skipped" line; a group that wrote no
// summary (it crashed, or was killed) counts as a failure and is named.
// Usage: node dist/tests/support/summary.js <name>=<summary.json> ...
import * as fs from "node:fs";
import { TIMINGS_FILE, Timings } from "./groups";
import { formatFailures, formatTimings, RunSummary } from "./timings";

/** The per-file times the next runs are grouped by (tests/support/groups.ts), from this run: only a whole run's. */
function writeTimings(summary: RunSummary): void {
  const timings: Timings = {};
  for (const f of [...summary.files].sort((a, b) => a.file.localeCompare(b.file))) {
    timings[f.file] = { wall: Math.round(f.ms / 100) / 10, ...(f.cpuMs === undefined ? {} : { cpu: Math.round(f.cpuMs / 100) / 10 }) };
  }
  // One file per line: a diff of the table reads as which files got slower.
  const lines = Object.entries(timings).map(([file, t]) => `  ${JSON.stringify(file)}: ${JSON.stringify(t)}`);
  fs.writeFileSync(TIMINGS_FILE, `{\n${lines.join(",\n")}\n}\n`);
  process.stdout.write(`\n${TIMINGS_FILE}: the ${summary.files.length} files' times written (the next runs' groups are balanced by them)\n`);
}

function main(args: string[]): number {
  const total: RunSummary = { passed: 0, failed: 0, skipped: 0, files: [], slowest: [], failures: [] };
  const lost: string[] = [];
  for (const arg of args) {
    const [name, file] = arg.split("=", 2);
    let group: RunSummary;
    try {
      group = JSON.parse(fs.readFileSync(file!, "utf8")) as RunSummary;
    } catch {
      lost.push(name!);
      continue;
    }
    total.passed += group.passed;
    total.failed += group.failed;
    total.skipped += group.skipped;
    total.files.push(...group.files);
    total.slowest.push(...group.slowest);
    total.failures!.push(...(group.failures ?? []));
  }
  process.stdout.write(formatTimings(total));
  process.stdout.write(formatFailures(total.failures));
  for (const name of lost) process.stdout.write(`\nworker ${name} wrote no summary: it crashed or was killed (its log is above)\n`);
  if (process.env.TALOS_GATE_TEST_UPDATE_TIMINGS === "1" && lost.length === 0 && total.failed === 0) writeTimings(total);
  process.stdout.write(`\n${total.passed} passed, ${total.failed + lost.length} failed, ${total.skipped} skipped\n`);
  return total.failed + lost.length > 0 ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
