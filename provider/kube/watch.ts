// Observing one object by name: list once, then watch from the list's resourceVersion (bookmarks on), re-list on
// 410 Gone, reconnect with backoff when the watch drops (API server restart, network error, server-side timeout), and
// abort a watch that stays silent longer than it may. The consumer pulls the latest state with `next()`; states that
// arrive while it is busy are coalesced (last wins), since it only ever acts on the current object.
import { KubeClients } from "./client";
import { backoffMs, isGone, isTransient, sleep } from "./errors";
import { msg } from "./messages";

export interface ObserveOptions<T> {
  clients: KubeClients;
  /** Collection path, e.g. /apis/batch/v1/namespaces/<ns>/jobs. */
  path: string;
  name: string;
  /** Lists the collection with fieldSelector metadata.name=<name>. */
  list(): Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>;
  /** Server-side watch timeout; the watch is re-opened from the last resourceVersion after it. */
  timeoutSeconds?: number;
  log?: (line: string) => void;
}

interface Meta {
  metadata?: { name?: string; resourceVersion?: string };
}

/** One observed state: the object, or undefined when it does not exist. */
export interface Observed<T> {
  object: T | undefined;
}

export class ObjectObserver<T extends Meta> {
  private latest: Observed<T> | undefined;
  private wake: (() => void) | undefined;
  private failure: unknown;
  private stopped = false;
  private readonly stopCtl = new AbortController();
  private resourceVersion: string | undefined;
  private current: AbortController | undefined;
  private endCurrent: (() => void) | undefined;

  constructor(private readonly o: ObserveOptions<T>) {
    void this.loop();
  }

  /** The next state not consumed yet (waits for one); undefined once stopped. Throws a permanent list error. */
  async next(): Promise<Observed<T> | undefined> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure;
      if (this.stopped) return undefined;
      if (this.latest) {
        const s = this.latest;
        this.latest = undefined;
        return s;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** The newest state not consumed yet, without waiting. */
  take(): Observed<T> | undefined {
    const s = this.latest;
    this.latest = undefined;
    return s;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopCtl.abort();
    this.current?.abort();
    this.endCurrent?.();
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private push(object: T | undefined): void {
    this.latest = { object };
    this.notify();
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      if (this.resourceVersion === undefined) {
        try {
          const list = await this.o.list();
          if (this.stopped) return;
          this.resourceVersion = list.metadata?.resourceVersion;
          this.push(list.items.find((i) => i.metadata?.name === this.o.name));
          attempt = 0;
        } catch (err) {
          if (this.stopped) return;
          if (!isTransient(err)) {
            this.failure = err;
            this.notify();
            return;
          }
          await sleep(backoffMs(attempt++), this.stopCtl.signal);
          continue;
        }
      }
      const result = await this.watchOnce();
      if (this.stopped) return;
      if (result.gone) {
        this.resourceVersion = undefined; // too old: list again, then watch from the new version
        continue;
      }
      if (result.failed) {
        this.o.log?.(msg.watchDropped(`${this.o.path}/${this.o.name}`, result.detail));
        await sleep(backoffMs(attempt++), this.stopCtl.signal);
      } else {
        attempt = 0;
      }
    }
  }

  private watchOnce(): Promise<{ gone: boolean; failed: boolean; detail?: string }> {
    const timeoutSeconds = this.o.timeoutSeconds ?? 60 + Math.floor(Math.random() * 30);
    return new Promise((resolve) => {
      let gone = false;
      let errorEvent: string | undefined;
      let sawEvent = false;
      let finished = false;
      const started = Date.now();
      let watchdog: NodeJS.Timeout | undefined;
      const finish = (r: { gone: boolean; failed: boolean; detail?: string }) => {
        if (finished) return;
        finished = true;
        if (watchdog) clearTimeout(watchdog);
        this.endCurrent = undefined;
        this.current = undefined;
        resolve(r);
      };
      this.endCurrent = () => finish({ gone: false, failed: false });
      // A watch the server should have closed long ago (half-open connection) is aborted and re-opened.
      const arm = () => {
        if (watchdog) clearTimeout(watchdog);
        watchdog = setTimeout(() => {
          this.current?.abort();
          finish({ gone: false, failed: true, detail: "no answer from the API server" });
        }, (timeoutSeconds + 30) * 1000);
        watchdog.unref?.();
      };
      arm();
      this.o.clients
        .watch(
          this.o.path,
          {
            fieldSelector: `metadata.name=${this.o.name}`,
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds,
          },
          (type: string, obj: any) => {
            if (finished) return;
            sawEvent = true;
            if (type === "ERROR") {
              if (obj?.code === 410) gone = true;
              else errorEvent = obj?.message ?? "watch error";
              this.current?.abort();
              finish({ gone, failed: !gone, detail: errorEvent });
              return;
            }
            const rv = obj?.metadata?.resourceVersion;
            if (typeof rv === "string" && rv !== "") this.resourceVersion = rv;
            if (type === "BOOKMARK") return;
            if (obj?.metadata?.name !== this.o.name) return;
            this.push(type === "DELETED" ? undefined : (obj as T));
          },
          (err: unknown) => {
            if (err && isGone(err)) gone = true;
            const detail = err ? String((err as Error).message ?? err).split("\n")[0] : undefined;
            // A clean close right away without any event counts as a failure too (backoff, no hot loop).
            const quickClose = !sawEvent && Date.now() - started < 1000;
            finish({ gone, failed: !gone && (Boolean(err) || quickClose), detail: detail ?? "closed at once" });
          },
        )
        .then((ctl) => {
          this.current = ctl;
          if (finished || this.stopped) ctl.abort();
        })
        .catch((err: unknown) => finish({ gone: false, failed: true, detail: String((err as Error)?.message ?? err) }));
    });
  }
}
