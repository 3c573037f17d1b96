// Registry of long-lived test fixtures (kube-apiserver, simulated clusters, ...), stopped by the root hook.
type Stopper = () => Promise<void>;
const stoppers: Stopper[] = [];

/** Registers a cleanup to run after the whole suite (last registered, first stopped). */
export function onSuiteEnd(stop: Stopper): void {
  stoppers.push(stop);
}

export async function stopAllFixtures(): Promise<void> {
  while (stoppers.length > 0) {
    const stop = stoppers.pop()!;
    try {
      await stop();
    } catch (err) {
      process.stderr.write(`fixture cleanup failed: ${(err as Error).message}\n`);
    }
  }
}
