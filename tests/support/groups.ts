// The groups of a full run (scripts/test.sh), balanced from measured times instead of lists kept by hand: each test
// file's wall time in the last measured run (tests/timings.json, written by a full run with
// TALOS_GATE_TEST_UPDATE_TIMINGS=1) goes, longest first, to the group with the least time so far (LPT scheduling:
// within 4/3 of the best split). A file with no measured time (a new one) counts as NEW_FILE_SECONDS. Deterministic:
// ties go to the file and the group first in name order; within a group the files run in sorted order.
// Usage: node dist/tests/support/groups.js <groups> <test file (dist/…/x.test.js)>...   prints "<group> <file>" lines.
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

export function planGroups(files: string[], timings: Timings, count: number): Map<string, string[]> {
  const names = groupNames(count);
  const load = new Map(names.map((n) => [n, 0]));
  const groups = new Map(names.map((n) => [n, [] as string[]]));
  const cost = (f: string) => timings[sourceOf(f)]?.wall ?? NEW_FILE_SECONDS;
  const ordered = [...files].sort((x, y) => cost(y) - cost(x) || x.localeCompare(y));
  for (const f of ordered) {
    const least = names.reduce((best, n) => (load.get(n)! < load.get(best)! ? n : best), names[0]!);
    load.set(least, load.get(least)! + cost(f));
    groups.get(least)!.push(f);
  }
  for (const list of groups.values()) list.sort();
  return groups;
}

function main(args: string[]): void {
  const [countArg, ...files] = args;
  const count = Number(countArg);
  if (!Number.isInteger(count) || count < 1 || count > 8) throw new Error(`groups: the number of groups must be 1-8, got ${countArg}`);
  const timings = fs.existsSync(TIMINGS_FILE) ? (JSON.parse(fs.readFileSync(TIMINGS_FILE, "utf8")) as Timings) : {};
  for (const [group, list] of planGroups(files, timings, count)) for (const f of list) process.stdout.write(`${group} ${f}\n`);
}

if (require.main === module) main(process.argv.slice(2));
