// List+watch with a local cache, like client-go's reflector + informer: LIST, then WATCH from the list's
// resourceVersion; on 410 Gone (or an ERROR event with code 410) re-LIST and replay the difference; on a dropped watch
// (API server restarted, stream closed, timeout) re-WATCH from the last seen resourceVersion with backoff.
import { Rest, WatchHandle, sleep } from "./rest";
import { KObject, key } from "./types";

export type Handler<T> = (obj: T, old?: T) => void;

/** The cache's key of an object by namespace and name (types.ts `key` of the object itself). */
const keyOf = (ns: string | undefined, name: string) => key({ metadata: { namespace: ns, name } });

export interface ReflectorOptions {
  /** Collection path, e.g. /api/v1/pods. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Name for logs. */
  name: string;
  log?: (msg: string) => void;
}

export class Reflector<T extends KObject = KObject> {
  private readonly cache = new Map<string, T>();
  private readonly handlers = { add: [] as Handler<T>[], update: [] as Handler<T>[], delete: [] as Handler<T>[] };
  /** Callers of `when`, by key: each is offered every object its key takes from now on (undefined: give up). */
  private readonly waiters = new Map<string, Set<(obj: T | undefined) => void>>();
  private rv = "";
  private stopped = false;
  private current: WatchHandle | undefined;
  private loop: Promise<void> | undefined;
  private syncedResolve!: () => void;
  readonly synced: Promise<void> = new Promise((r) => (this.syncedResolve = r));
  relists = 0;
  rewatches = 0;

  constructor(private readonly rest: Rest, private readonly opts: ReflectorOptions) {}

  on(ev: "add" | "update" | "delete", fn: Handler<T>): void {
    this.handlers[ev].push(fn);
  }

  get(ns: string | undefined, name: string): T | undefined {
    return this.cache.get(keyOf(ns, name));
  }

  /**
   * The object as this cache holds it once `pred` holds for it — at once, or at a later add or update of that key, the
   * way an informer's handler sees it — or undefined after `timeoutMs` (a watch that is away, an object never
   * matching): every wait has a bound.
   */
  when(ns: string | undefined, name: string, pred: (obj: T) => boolean, timeoutMs: number): Promise<T | undefined> {
    const k = keyOf(ns, name);
    const now = this.cache.get(k);
    if (now && pred(now)) return Promise.resolve(now);
    if (this.stopped) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const set = this.waiters.get(k) ?? new Set();
      this.waiters.set(k, set);
      const done = (obj: T | undefined) => {
        clearTimeout(timer);
        set.delete(offer);
        if (!set.size && this.waiters.get(k) === set) this.waiters.delete(k);
        resolve(obj);
      };
      const offer = (obj: T | undefined) => {
        if (!obj || pred(obj)) done(obj);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      set.add(offer);
    });
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  get size(): number {
    return this.cache.size;
  }

  /** Starts the loop; resolves after the first LIST has been delivered. */
  async start(): Promise<void> {
    this.loop ??= this.run();
    await this.synced;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const set of [...this.waiters.values()]) for (const offer of [...set]) offer(undefined);
    this.current?.abort();
    await this.loop;
  }

  private emit(ev: "add" | "update" | "delete", obj: T, old?: T): void {
    if (ev !== "delete") for (const offer of [...(this.waiters.get(key(obj)) ?? [])]) offer(obj);
    for (const fn of this.handlers[ev]) {
      try {
        fn(obj, old);
      } catch (e) {
        this.opts.log?.(`${this.opts.name} ${ev} handler threw: ${(e as Error).stack}`);
      }
    }
  }

  private async relist(): Promise<void> {
    const query: Record<string, string> = {};
    if (this.opts.labelSelector) query.labelSelector = this.opts.labelSelector;
    if (this.opts.fieldSelector) query.fieldSelector = this.opts.fieldSelector;
    const list = await this.rest.get<{ items: T[]; metadata: { resourceVersion: string } }>(this.opts.path, query);
    const seen = new Set<string>();
    for (const item of list.items) {
      const k = key(item);
      seen.add(k);
      const old = this.cache.get(k);
      this.cache.set(k, item);
      if (!old) this.emit("add", item);
      else if (old.metadata.resourceVersion !== item.metadata.resourceVersion) this.emit("update", item, old);
    }
    for (const [k, old] of [...this.cache]) {
      if (!seen.has(k)) {
        this.cache.delete(k);
        this.emit("delete", old);
      }
    }
    this.rv = list.metadata.resourceVersion;
    this.relists++;
  }

  private onEvent(ev: { type: string; object: any }): void {
    const obj = ev.object as T;
    if (ev.type === "ERROR") {
      if (ev.object?.code === 410) this.rv = "";
      return;
    }
    if (obj?.metadata?.resourceVersion) this.rv = obj.metadata.resourceVersion;
    if (ev.type === "BOOKMARK") return;
    const k = key(obj);
    const old = this.cache.get(k);
    if (ev.type === "DELETED") {
      this.cache.delete(k);
      this.emit("delete", obj);
    } else {
      this.cache.set(k, obj);
      this.emit(old ? "update" : "add", obj, old);
    }
  }

  private async run(): Promise<void> {
    let backoff = 100;
    while (!this.stopped) {
      try {
        if (!this.rv) {
          await this.relist();
          this.syncedResolve();
        }
        if (this.stopped) break;
        const query: Record<string, string | number | boolean> = {
          resourceVersion: this.rv,
          allowWatchBookmarks: true,
          // Like client-go: the server ends the watch after 5-10 minutes and the reflector re-watches.
          timeoutSeconds: 300 + Math.floor(Math.random() * 300),
        };
        if (this.opts.labelSelector) query.labelSelector = this.opts.labelSelector;
        if (this.opts.fieldSelector) query.fieldSelector = this.opts.fieldSelector;
        const started = Date.now();
        this.current = this.rest.watch(this.opts.path, query, (ev) => this.onEvent(ev));
        const err = await this.current.done;
        this.current = undefined;
        if (this.stopped) break;
        if (err && (err as { code?: number }).code === 410) this.rv = "";
        if (err) throw err;
        this.rewatches++;
        if (Date.now() - started > 1000) backoff = 100;
        else {
          // The stream closed at once (API server shutting down): back off before re-watching.
          await sleep(backoff);
          backoff = Math.min(backoff * 2, 2000);
        }
      } catch (err) {
        if (this.stopped) break;
        this.opts.log?.(`${this.opts.name}: ${(err as Error).message}; retrying in ${backoff} ms`);
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 2000);
      }
    }
  }
}
