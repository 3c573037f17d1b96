// The CLI's output reaches a slow reader whole: on Linux a write to a pipe is asynchronous, and exiting right after a
// large one (`talos-gate status --json` of a 1,000-node rollout, ~200 KB) used to truncate it.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as path from "node:path";

const EXIT = path.join(__dirname, "..", "..", "..", "cli", "exit.js");

/** Runs a process that writes `bytes` to stdout and exits through exitAfterFlush; reads it only after `delayMs`. */
function readSlowly(bytes: number, delayMs: number): Promise<{ code: number | null; out: number }> {
  const script = `const { exitAfterFlush } = require(${JSON.stringify(EXIT)});` +
    `process.stdout.write("x".repeat(${bytes}) + "\\n"); void exitAfterFlush(7);`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  child.stdout.pause();
  let out = 0;
  setTimeout(() => {
    child.stdout.on("data", (d: Buffer) => (out += d.length));
    child.stdout.resume();
  }, delayMs);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, out })));
}

describe("integration: cli — output is flushed before the process exits", function () {
  this.timeout(60000);

  it("a reader that starts late still gets all of a 1 MiB output, and the exit code", async () => {
    const r = await readSlowly(1 << 20, 500);
    assert.deepEqual(r, { code: 7, out: (1 << 20) + 1 });
  });

  it("a reader that goes away does not keep the process alive", async () => {
    const script = `const { exitAfterFlush } = require(${JSON.stringify(EXIT)});` +
      `process.stdout.on("error", () => {}); process.stdout.write("x".repeat(1 << 20)); void exitAfterFlush(3);`;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.destroy();
    const code = await new Promise((resolve) => child.on("close", resolve));
    assert.equal(code, 3);
  });
});
