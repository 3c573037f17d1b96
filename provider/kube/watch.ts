// Observing a selection of objects — one by name, or every object a label selector matches: list once, then watch
// from the list's resourceVersion (bookmarks on), re-list on 410 Gone, reconnect with backoff when the watch drops
// (API server restart, network error, server-side timeout), and abort a watch that stays silent longer than it may.
// The observer keeps the current set (by namespace/name) and the consumer pulls it with `next()`; sets that change
// while it is busy are coalesced (last wins), since it only ever acts on the current state. `ObjectObserver` is the
// one-object view the healthcheck runner uses.
import { KubeClients } from "./client";
import { backoffMs, isGone, isTransient, sleep } from "./errors";
import { msg } from "./messages";

export interface ObserveOptions<T> {
  clients: KubeClients;
  /** Collection path, e.g. /apis/batch/v1/namespaces/<ns>/jobs (no namespace segment = every namespace). */
  path: string;
  /** One object: lists and watches with fieldSelector metadata.name=<name>. */
  name?: string;
  /** Objects matching a label selector, in the API server's syntax (`app=x,tier in (a,b)`). */
  labelSelector?: string;
  /** Lists the collection with the same selectors (all pages). */
  list(): Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>;
  /** Server-side watch timeout; the watch is re-opened from the last resourceVersion after it. */
  timeoutSeconds?: number;
  /** Applied to every object before it is kept (e.g. drop managedFields to bound memory). */
  trim?: (obj: T) => T;
  /** Keeps only the objects it accepts (a selection the API server cannot make, e.g. by spec.nodeName). */
  filter?: (obj: T) => boolean;
  /**
   * Whether an update of a held object is one the consumer need not see (compared after `trim`): the held object is
   * kept and no new state is offered. Without it, every update is a new state.
   */
  same?: (held: T, next: T) => boolean;
  /**
   * The order of a state's objects (default: by namespace/name), over what never changes for an object (its namespace
   * and name): the order is kept between states and sorted again only when an object comes or goes — at 1,000 Nodes,
   * sorting on every update was most of what a Node event cost.
   */
  order?: (a: T, b: T) => number;
  log?: (line: string) => void;
  /**
   * A watch dropped or was not opened, with its error: undefined when it ended without one (closed at once, an ERROR
   * event, no answer until the watchdog). Called after `log`.
   */
  onDrop?: (err: unknown) => void;
}

interface Meta {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** One observed state of the selection: the objects, ordered by namespace/name (or the observer's `order`). */
export interface ObservedSet<T> {
  objects: T[];
  /** Counts the changes seen (1 = the first list). */
  generation: number;
}

const keyOf = (o: Meta) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

/**
 * The newest state for one consumer: `next()` waits for a state not consumed yet (coalesced: only the newest counts,
 * built when taken), throws a permanent failure, and returns undefined once closed.
 */
export class Mailbox<T> {
  private make: (() => T) | undefined;
  private wake: (() => void) | undefined;
  private failure: unknown;
  private closed = false;

  /** A new state is available; `make` builds it when the consumer takes it. */
  offer(make: () => T): void {
    this.make = make;
    this.notify();
  }

  fail(err: unknown): void {
    this.failure = err;
    this.notify();
  }

  close(): void {
    this.closed = true;
    this.notify();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async next(): Promise<T | undefined> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure;
      if (this.closed) return undefined;
      const s = this.take();
      if (s !== undefined) return s;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  take(): T | undefined {
    const make = this.make;
    this.make = undefined;
    return make?.();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

export class SetObserver<T extends Meta> implements AsyncIterable<ObservedSet<T>> {
  private readonly objects = new Map<string, T>();
  /** The keys of `objects` in the state's order; undefined once an object came or went (sorted again when needed). */
  private ordered: string[] | undefined;
  private generation = 0;
  private readonly box = new Mailbox<ObservedSet<T>>();
  private stopped = false;
  private readonly stopCtl = new AbortController();
  private resourceVersion: string | undefined;
  private current: AbortController | undefined;
  /** A watch is open now (its request answered, not ended): the set is as current as the watch's events. */
  private open = false;
  private endCurrent: (() => void) | undefined;

  constructor(private readonly o: ObserveOptions<T>) {
    void this.loop();
  }

  /** The next state not consumed yet (waits for one); undefined once stopped. Throws a permanent list error. */
  next(): Promise<ObservedSet<T> | undefined> {
    return this.box.next();
  }

  /** The newest state not consumed yet, without waiting. */
  take(): ObservedSet<T> | undefined {
    return this.box.take();
  }

  /** Every state until stopped (coalesced while the loop body runs). */
  async *[Symbol.asyncIterator](): AsyncIterator<ObservedSet<T>> {
    for (;;) {
      const s = await this.next();
      if (!s) return;
      yield s;
    }
  }

  /**
   * Whether the set is kept current right now: listed, and its watch open. False while it starts, reconnects after a
   * drop (the set may miss changes until the watch is back) and once stopped or failed.
   */
  get live(): boolean {
    return this.open && !this.stopped;
  }

  /** Objects held right now (for memory accounting). */
  get size(): number {
    return this.objects.size;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopCtl.abort();
    this.current?.abort();
    this.endCurrent?.();
    this.box.close();
  }

  private snapshot(): ObservedSet<T> {
    const order = this.o.order;
    this.ordered ??= order
      ? [...this.objects.entries()].sort(([, a], [, b]) => order(a, b)).map(([k]) => k)
      : [...this.objects.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { objects: this.ordered.map((k) => this.objects.get(k)!), generation: this.generation };
  }

  private keep(obj: T): T {
    return this.o.trim ? this.o.trim(obj) : obj;
  }

  private selected(obj: T): boolean {
    return (this.o.name === undefined || obj.metadata?.name === this.o.name) && (!this.o.filter || this.o.filter(obj));
  }

  private changed(): void {
    this.generation++;
    this.box.offer(() => this.snapshot());
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      if (this.resourceVersion === undefined) {
        try {
          const list = await this.o.list();
          if (this.stopped) return;
          this.resourceVersion = list.metadata?.resourceVersion;
          this.objects.clear();
          this.ordered = undefined;
          for (const item of list.items) if (this.selected(item)) this.objects.set(keyOf(item), this.keep(item));
          this.changed();
          attempt = 0;
        } catch (err) {
          if (this.stopped) return;
          if (!isTransient(err)) {
            this.box.fail(err);
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
        this.o.log?.(msg.watchDropped(this.what(), result.detail));
        this.o.onDrop?.(result.error);
        await sleep(backoffMs(attempt++), this.stopCtl.signal);
      } else {
        attempt = 0;
      }
    }
  }

  private what(): string {
    if (this.o.name !== undefined) return `${this.o.path}/${this.o.name}`;
    return this.o.labelSelector ? `${this.o.path}?labelSelector=${this.o.labelSelector}` : this.o.path;
  }

  private watchOnce(): Promise<{ gone: boolean; failed: boolean; detail?: string; error?: unknown }> {
    const timeoutSeconds = this.o.timeoutSeconds ?? 60 + Math.floor(Math.random() * 30);
    return new Promise((resolve) => {
      let gone = false;
      let errorEvent: string | undefined;
      let sawEvent = false;
      let finished = false;
      const started = Date.now();
      let watchdog: NodeJS.Timeout | undefined;
      const finish = (r: { gone: boolean; failed: boolean; detail?: string; error?: unknown }) => {
        if (finished) return;
        finished = true;
        this.open = false;
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
            fieldSelector: this.o.name !== undefined ? `metadata.name=${this.o.name}` : undefined,
            labelSelector: this.o.labelSelector || undefined,
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds,
          },
          // client-node's Watch hands each event's object untyped (its signature): read defensively below
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
            if (this.o.name !== undefined && obj?.metadata?.name !== this.o.name) return;
            const key = keyOf(obj);
            if (type === "DELETED" || !this.selected(obj as T)) {
              if (!this.objects.delete(key)) return; // never held: nothing changed for the consumer
              this.ordered = undefined;
            } else {
              const held = this.objects.get(key);
              const kept = this.keep(obj as T);
              // The held object stays (its consumer may have derived something from it); only the version moves on.
              if (held !== undefined && this.o.same?.(held, kept)) return;
              if (held === undefined) this.ordered = undefined;
              this.objects.set(key, kept);
            }
            this.changed();
          },
          (err: unknown) => {
            if (err && isGone(err)) gone = true;
            const detail = err ? String((err as Error).message ?? err).split("\n")[0] : undefined;
            // A clean close right away without any event counts as a failure too (backoff, no hot loop).
            const quickClose = !sawEvent && Date.now() - started < 1000;
            finish({ gone, failed: !gone && (Boolean(err) || quickClose), detail: detail ?? "closed at once", error: err || undefined });
          },
        )
        .then((ctl) => {
          this.current = ctl;
          if (finished || this.stopped) ctl.abort();
          else this.open = true;
        })
        .catch((err: unknown) => finish({ gone: false, failed: true, detail: String((err as Error)?.message ?? err), error: err }));
    });
  }
}

/** One observed state: the object, or undefined when it does not exist. */
export interface Observed<T> {
  object: T | undefined;
}

/** One object by name (the runner's view of its Job). */
export class ObjectObserver<T extends Meta> {
  private readonly set: SetObserver<T>;

  constructor(o: ObserveOptions<T> & { name: string }) {
    this.set = new SetObserver(o);
  }

  async next(): Promise<Observed<T> | undefined> {
    const s = await this.set.next();
    return s && { object: s.objects[0] };
  }

  take(): Observed<T> | undefined {
    const s = this.set.take();
    return s && { object: s.objects[0] };
  }

  stop(): void {
    this.set.stop();
  }
}
