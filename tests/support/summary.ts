// Combines the groups of a split run (scripts/test.sh): each group's reporter wrote its counts and timings as JSON.
// Prints one table for the whole run and the closing "N passed, N failed, N skipped" line; a group that wrote no
// summary (it crashed, or was killed) counts as a failure and is named.
// Usage: node dist/tests/support/summary.js <name>=<summary.json> ...
import * as fs from "node:fs";
import { formatTimings, RunSummary } from "./timings";

function main(args: string[]): number {
  const total: RunSummary = { passed: 0, failed: 0, skipped: 0, files: [], slowest: [] };
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
  }
  process.stdout.write(formatTimings(total));
  for (const name of lost) process.stdout.write(`\ngroup ${name} wrote no summary: it crashed or was killed (its log is above)\n`);
  process.stdout.write(`\n${total.passed} passed, ${total.failed + lost.length} failed, ${total.skipped} skipped\n`);
  return total.failed + lost.length > 0 ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
