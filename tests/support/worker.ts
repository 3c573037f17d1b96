// A worker of the full run (scripts/test.sh): several run at once, each takes the next test file from the run's queue
// (longest first, from tests/timings.json), runs it as one mocha run and takes another, until the queue is empty. The
// groups of a static split ended up to ~110 s apart (each file's time moves with the machine's load), leaving cores
// idle at the end; taken from a queue, the workers end within about one file of each other. The control planes of a
// worker's sims are pooled across its files (tests/support/controlPlanes.ts) and stopped after its last file.
// Usage: node dist/tests/support/worker.js <queue file: one dist/…/x.test.js per line>
import * as fs from "node:fs";
import * as path from "node:path";
import Mocha from "mocha";
import { stopRunFixtures } from "./fixtures";
import { fileHooks } from "./hooks";
import Reporter from "./reporter";

/** The next file no worker has taken: a claim is a directory beside the queue, made by exactly one mkdir. */
function claimer(queueFile: string): () => string | undefined {
  const files = fs.readFileSync(queueFile, "utf8").split("\n").filter(Boolean);
  const claims = `${queueFile}.claims`;
  fs.mkdirSync(claims, { recursive: true });
  let next = 0;
  return () => {
    for (; next < files.length; next++) {
      try {
        fs.mkdirSync(path.join(claims, String(next)));
        return files[next++];
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
    return undefined;
  };
}

/**
 * One file as its own mocha run, with the options scripts/test.sh gives the mocha CLI; resolves to mocha's count of
 * failures. A file that cannot be loaded (a syntax error, a forbidden `.only`) is one failure, and the worker goes on.
 */
async function runFile(file: string): Promise<{ failures: number; why?: string }> {
  const mocha = new Mocha({
    reporter: Reporter, reporterOptions: { deferSummary: true }, rootHooks: fileHooks,
    timeout: 120000, forbidOnly: true, forbidPending: true, failZero: true,
  });
  mocha.addFile(path.resolve(file));
  try {
    return { failures: await new Promise<number>((resolve) => mocha.run(resolve)) };
  } catch (err) {
    process.stdout.write(`\n${file} could not be run: ${(err as Error).stack ?? err}\n`);
    return { failures: 1, why: `could not be run: ${(err as Error).message ?? err}` };
  }
}

async function main(queueFile: string): Promise<number> {
  const claim = claimer(queueFile);
  for (let file = claim(); file !== undefined; file = claim()) {
    const before = Reporter.failedSoFar();
    const run = await runFile(file);
    const unreported = run.failures - (Reporter.failedSoFar() - before);
    if (unreported > 0) Reporter.unreported(file, unreported, run.why ?? "mocha counted a failure no test reported (a file without tests?)");
  }
  await stopRunFixtures();
  return Reporter.finishSummary() > 0 ? 1 : 0;
}

const [queue] = process.argv.slice(2);
if (!queue) throw new Error("worker: usage: node dist/tests/support/worker.js <queue file>");
main(queue).then((code) => {
  // As mocha's --exit: handles a test left open (a socket, a timer) do not keep the worker alive.
  process.stdout.write("", () => process.exit(code));
}, (err) => {
  process.stderr.write(`worker: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
