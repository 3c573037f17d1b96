// Mocha's spec reporter, then each file's wall time and the slowest tests (so the next slow-down shows in CI output),
// and one plain closing line "N passed, N failed, N skipped" that CI tooling reads. With TALOS_GATE_TEST_SUMMARY set,
// the counts and timings are also written there as JSON, for scripts/test.sh to combine the halves of a split run.
// With TALOS_GATE_TEST_CPUACCT (a cgroup's cpuacct.usage, set by scripts/test.sh) each file's CPU time is counted too:
// the suite is CPU-bound on 2 cores, and CPU seconds, unlike wall time, do not change with the machine's other load.
import * as fs from "node:fs";
import Mocha from "mocha";
import { errorHead, formatFailures, formatTimings, RunSummary, SLOWEST, sourceName } from "./timings";

/** CPU time used so far by every process in this run's cgroup, or undefined when there is none to read. */
function cpuMs(): number | undefined {
  const file = process.env.TALOS_GATE_TEST_CPUACCT;
  if (!file) return undefined;
  try {
    return Number(fs.readFileSync(file, "utf8").trim()) / 1e6;
  } catch {
    return undefined;
  }
}

/** Every run's counts and timings in this process: one mocha run, or each file a worker ran (tests/support/worker.ts). */
const collected: RunSummary = { passed: 0, failed: 0, skipped: 0, files: [], slowest: [], failures: [] };

/**
 * Prints the table and the closing line of every run this process made, and writes them to TALOS_GATE_TEST_SUMMARY.
 * Returns the number of failures.
 */
function finishSummary(): number {
  const summary: RunSummary = { ...collected, slowest: [...collected.slowest].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST) };
  const out = process.env.TALOS_GATE_TEST_SUMMARY;
  if (out) fs.writeFileSync(out, JSON.stringify(summary));
  process.stdout.write(formatTimings(summary));
  process.stdout.write(formatFailures(summary.failures));
  process.stdout.write(`\n${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped\n`);
  return summary.failed;
}

/** reporterOption `deferSummary`: a worker prints the summary once, after its last file (finishSummary). */
class SpecWithSummary extends Mocha.reporters.Spec {
  static finishSummary = finishSummary;
  static failedSoFar = () => collected.failed;
  /** Failures mocha counted that no test or hook reported (a file that could not load, one without tests). */
  static unreported(file: string, count: number, why: string): void {
    collected.failed += count;
    collected.failures!.push({ title: "(no test reported this failure)", file: sourceName(file), error: why });
  }

  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions & { reporterOption?: { deferSummary?: boolean } }) {
    super(runner, options);
    const deferSummary = options?.reporterOption?.deferSummary === true;
    const c = Mocha.Runner.constants;
    // A file's time runs from its first top-level suite's start to its last one's end, hooks included.
    const files = new Map<string, { ms: number; tests: number; since?: number; cpuMs?: number; cpuSince?: number }>();
    const fileOf = (s: Mocha.Suite | Mocha.Runnable) => sourceName(s.file);
    runner.on(c.EVENT_SUITE_BEGIN, (s: Mocha.Suite) => {
      if (!s.parent?.root) return;
      const f = files.get(fileOf(s)) ?? { ms: 0, tests: 0 };
      f.since = Date.now();
      f.cpuSince = cpuMs();
      files.set(fileOf(s), f);
    });
    runner.on(c.EVENT_SUITE_END, (s: Mocha.Suite) => {
      const f = s.parent?.root ? files.get(fileOf(s)) : undefined;
      if (f?.since !== undefined) f.ms += Date.now() - f.since;
      const cpu = cpuMs();
      if (f?.cpuSince !== undefined && cpu !== undefined) f.cpuMs = (f.cpuMs ?? 0) + cpu - f.cpuSince;
    });
    const counted = (t: Mocha.Test) => {
      const f = files.get(fileOf(t));
      if (f) f.tests++;
      collected.slowest.push({ title: t.fullTitle(), file: fileOf(t), ms: t.duration ?? 0 });
    };
    runner.on(c.EVENT_TEST_PASS, (t: Mocha.Test) => { collected.passed++; counted(t); });
    runner.on(c.EVENT_TEST_FAIL, (t: Mocha.Test, err: unknown) => {
      collected.failed++;
      collected.failures!.push({ title: t.fullTitle(), file: fileOf(t), error: errorHead(err) });
      if (t.type === "test") counted(t);
    });
    runner.on(c.EVENT_TEST_PENDING, () => collected.skipped++);
    runner.once(c.EVENT_RUN_END, () => {
      collected.files.push(...[...files].map(([file, f]) => ({ file, ms: f.ms, tests: f.tests, cpuMs: f.cpuMs })));
      if (!deferSummary) finishSummary();
    });
  }
}

export = SpecWithSummary;
