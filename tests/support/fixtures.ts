// Registry of long-lived test fixtures (control planes, simulated clusters, clients, temp dirs). A fixture lives as
// long as the test file that started it: tests/support/hooks.ts stops a file's fixtures after its last suite, so idle
// control planes do not pile up through a run. Fixtures shared by every file (the pool of control planes), and those
// registered while the files are loaded (no file runs yet, so whose they are is unknown), live until the end of the run.
type Stopper = () => Promise<void>;
const fileStoppers: Stopper[] = [];
const runStoppers: Stopper[] = [];
let fileRunning = false;

/** Registers a cleanup to run after the current test file (last registered, first stopped). */
export function onFileEnd(stop: Stopper): void {
  (fileRunning ? fileStoppers : runStoppers).push(stop);
}

/** Registers a cleanup to run after the whole run, for a fixture every file shares. */
export function onRunEnd(stop: Stopper): void {
  runStoppers.push(stop);
}

async function stopAll(stoppers: Stopper[]): Promise<void> {
  while (stoppers.length > 0) {
    const stop = stoppers.pop()!;
    try {
      await stop();
    } catch (err) {
      process.stderr.write(`fixture cleanup failed: ${(err as Error).message}\n`);
    }
  }
}

/** A test file starts running: what it registers from now on is its own. */
export function fileStarted(): void {
  fileRunning = true;
}

/** The running file ended: stops its fixtures. */
export async function stopFileFixtures(): Promise<void> {
  fileRunning = false;
  await stopAll(fileStoppers);
}

export const stopRunFixtures = () => stopAll(runStoppers);
