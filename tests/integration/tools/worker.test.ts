// The full run's workers (tests/support/worker.ts): several processes take files from one queue; each file runs
// exactly once, in one of them, and every kind of failure reaches the summary and the exit code.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { RunSummary } from "../../support/timings";
import { tempDir } from "./helpers";

const WORKER = path.join(__dirname, "..", "..", "support", "worker.js");

/** A test file that records, when loaded, which worker loaded it. */
function testFile(dir: string, name: string, body: string): string {
  const file = path.join(dir, `${name}.test.js`);
  fs.writeFileSync(file, `require("fs").appendFileSync(${JSON.stringify(path.join(dir, "loaded"))}, ${JSON.stringify(name)} + " " + process.pid + "\\n");\n${body}\n`);
  return file;
}

function runWorker(queue: string, summary: string): Promise<{ code: number | null; pid: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, queue], { env: { ...process.env, TALOS_GATE_TEST_SUMMARY: summary, TALOS_GATE_TEST_CPUACCT: "" } });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, pid: child.pid!, out }));
  });
}

async function runQueue(dir: string, files: string[], workers: number) {
  const queue = path.join(dir, "queue");
  fs.writeFileSync(queue, files.map((f) => `${f}\n`).join(""));
  const runs = await Promise.all(Array.from({ length: workers }, (_, i) => runWorker(queue, path.join(dir, `summary-${i}.json`))));
  const summaries = runs.map((_, i) => JSON.parse(fs.readFileSync(path.join(dir, `summary-${i}.json`), "utf8")) as RunSummary);
  const loaded = fs.readFileSync(path.join(dir, "loaded"), "utf8").trim().split("\n").map((l) => l.split(" "));
  return { runs, summaries, loaded };
}

describe("integration: the full run's workers on one queue", function () {
  this.timeout(60000);

  it("run every file exactly once between them, and sum to the run's counts", async () => {
    const dir = tempDir("worker");
    // Each file's first test waits until a second worker has loaded a file: the workers share the queue, whatever
    // the machine's load does to their start.
    const loaded = JSON.stringify(path.join(dir, "loaded"));
    const waitForTwo = `(done) => { const t = setInterval(() => { const pids = new Set(require("fs").readFileSync(${loaded}, "utf8").trim().split("\\n").map((l) => l.split(" ")[1])); if (pids.size > 1) { clearInterval(t); done(); } }, 20); }`;
    const files = ["one", "two", "three", "four", "five", "six"].map((n) =>
      testFile(dir, n, `describe(${JSON.stringify(n)}, () => { it("waits for a second worker", ${waitForTwo}); it("passes", () => {}); });`));
    const { runs, summaries, loaded: ran } = await runQueue(dir, files, 3);
    assert.deepEqual(runs.map((r) => r.code), [0, 0, 0], runs.map((r) => r.out).join("\n"));
    assert.deepEqual(ran.map(([n]) => n).sort(), ["five", "four", "one", "six", "three", "two"], "each file loaded once");
    assert.ok(new Set(ran.map(([, pid]) => pid)).size > 1, "the files were shared between the workers");
    assert.ok(new Set(ran.map(([, pid]) => pid)).size <= 3);
    assert.equal(summaries.reduce((s, x) => s + x.passed, 0), 12);
    assert.deepEqual(summaries.flatMap((s) => s.files.map((f) => path.basename(f.file))).sort(),
      ["five", "four", "one", "six", "three", "two"].map((n) => `${n}.test.ts`));
    for (const r of runs) assert.match(r.out, /\d+ passed, 0 failed, 0 skipped\n$/);
  });

  it("count a failing test, a failing hook, a file without tests and a forbidden .only as failures, and exit 1", async () => {
    const dir = tempDir("worker");
    const files = [
      testFile(dir, "fails", `describe("fails", () => { it("fails", () => { throw new Error("boom"); }); });`),
      testFile(dir, "hook", `describe("hook", () => { before(() => { throw new Error("hook boom"); }); it("never runs", () => {}); });`),
      testFile(dir, "empty", ``),
      testFile(dir, "only", `describe("only", () => { it.only("alone", () => {}); });`),
      testFile(dir, "passes", `describe("passes", () => { it("passes", () => {}); });`),
    ];
    const { runs, summaries } = await runQueue(dir, files, 2);
    assert.ok(runs.some((r) => r.code === 1), "a worker exits 1");
    assert.ok(runs.every((r) => r.code === 0 || r.code === 1));
    // fails, the hook, the file without tests, the .only: four; the passing file still passed.
    assert.equal(summaries.reduce((s, x) => s + x.failed, 0), 4, runs.map((r) => r.out).join("\n"));
    assert.ok(summaries.reduce((s, x) => s + x.passed, 0) >= 1);
    // Each failure is named again at the very end, with its error: a CI excerpt keeps only an output's tail.
    const named = summaries.flatMap((s) => s.failures ?? []);
    assert.deepEqual(named.map((f) => path.basename(f.file)).sort(), ["empty.test.ts", "fails.test.ts", "hook.test.ts", "only.test.ts"]);
    assert.match(named.find((f) => f.file.endsWith("fails.test.ts"))!.error, /Error: boom/);
    assert.match(named.find((f) => f.file.endsWith("hook.test.ts"))!.error, /hook boom/);
    const summary = await new Promise<string>((resolve, reject) => {
      const args = summaries.map((_, i) => `w${i}=${path.join(dir, `summary-${i}.json`)}`);
      const child = spawn(process.execPath, [path.join(__dirname, "..", "..", "support", "summary.js"), ...args], { env: { ...process.env, TALOS_GATE_TEST_UPDATE_TIMINGS: "" } });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("error", reject);
      child.on("exit", () => resolve(out));
    });
    const tail = summary.slice(summary.lastIndexOf("Failed (4):"));
    assert.ok(summary.lastIndexOf("Failed (4):") > summary.lastIndexOf("Slowest"), summary);
    for (const name of ["empty", "fails", "hook", "only"]) assert.match(tail, new RegExp(`${name}\\.test\\.ts › `));
    assert.match(tail, /Error: boom\n[^]*\d+ passed, 4 failed, 0 skipped\n$/);
  });
});
