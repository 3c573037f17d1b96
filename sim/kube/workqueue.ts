// A per-key work queue as client-go controllers use: one sync per key at a time, a key enqueued while its sync runs
// is synced once more afterwards, a failed sync is retried after a second.
export class KeyedQueue {
  private readonly queued = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly sync: (key: string) => Promise<void>,
    private readonly log: (msg: string) => void,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  enqueue(k: string): void {
    if (this.stopped) return;
    if (this.running.has(k)) {
      this.queued.add(k);
      return;
    }
    const run = (async () => {
      try {
        await this.sync(k);
      } catch (err) {
        if (!this.stopped) {
          this.log(`${this.name}: ${k}: ${(err as Error).message}`);
          setTimeout(() => this.enqueue(k), 1000).unref();
        }
      } finally {
        this.running.delete(k);
        if (this.queued.delete(k)) this.enqueue(k);
      }
    })();
    this.running.set(k, run);
  }

  /** Stops accepting work and waits for the syncs in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.running.values()]);
  }
}
