// The order of a full run's queue (scripts/test.sh, tests/support/worker.ts) and the fixed groups of `--group X`, from
// measured times instead of lists kept by hand: each test file's wall time in the last measured run
// (tests/timings.json, written by a full run with TALOS_GATE_TEST_UPDATE_TIMINGS=1). The queue is longest first (the
// workers take from it as they come free: list scheduling, within 4/3 of the best split); a fixed group gets files
// longest first while it has the least time so far. A file with no measured time (a new one) counts as
// NEW_FILE_SECONDS. Deterministic: ties go to the file and the group first in name order; within a group the files run
// in sorted order.
// Usage: node dist/tests/support/groups.js <groups> <test file (dist/…/x.test.js)>...   prints "<group> <file>" lines;
//        node dist/tests/support/groups.js --queue <test file>...   prints the files in queue order.
import * as fs from "node:fs";
import * as path from "node:path";

export const TIMINGS_FILE = path.join("tests", "timings.json");
/** What an unmeasured file is taken to cost: more than most integration files, so a new slow one lands on a short group. */
export const NEW_FILE_SECONDS = 20;

/** tests/…/x.test.ts → { wall, cpu } in seconds, from a run's summary. */
export type Timings = Record<string, { wall: number; cpu?: number }>;

export function groupNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => String.fromCharCode("a".charCodeAt(0) + i));
}

/** dist/tests/x.test.js → tests/x.test.ts (the key timings use). */
export function sourceOf(distFile: string): string {
  return distFile.replace(/^dist\//, "").replace(/\.js$/, ".ts");
}

const costOf = (timings: Timings) => (f: string) => timings[sourceOf(f)]?.wall ?? NEW_FILE_SECONDS;

/** The files longest first (ties in name order). */
export function queueOrder(files: string[], timings: Timings): string[] {
  const cost = costOf(timings);
  return [...files].sort((x, y) => cost(y) - cost(x) || x.localeCompare(y));
}

export function planGroups(files: string[], timings: Timings, count: number): Map<string, string[]> {
  const names = groupNames(count);
  const load = new Map(names.map((n) => [n, 0]));
  const groups = new Map(names.map((n) => [n, [] as string[]]));
  const cost = costOf(timings);
  for (const f of queueOrder(files, timings)) {
    const least = names.reduce((best, n) => (load.get(n)! < load.get(best)! ? n : best), names[0]!);
    load.set(least, load.get(least)! + cost(f));
    groups.get(least)!.push(f);
  }
  for (const list of groups.values()) list.sort();
  return groups;
}

function main(args: string[]): void {
  const [countArg, ...files] = args;
  const timings = fs.existsSync(TIMINGS_FILE) ? (JSON.parse(fs.readFileSync(TIMINGS_FILE, "utf8")) as Timings) : {};
  if (countArg === "--queue") {
    for (const f of queueOrder(files, timings)) process.stdout.write(`${f}\n`);
    return;
  }
  const count = Number(countArg);
  if (!Number.isInteger(count) || count < 1 || count > 8) throw new Error(`groups: the number of groups must be 1-8, got ${countArg}`);
  for (const [group, list] of planGroups(files, timings, count)) for (const f of list) process.stdout.write(`${group} ${f}\n`);
}

if (require.main === module) main(process.argv.slice(2));
