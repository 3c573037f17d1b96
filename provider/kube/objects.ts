// Watch-driven observation of any kind (CRDs included) for condition gates: apiVersion/kind resolved to a resource
// path by API discovery (cached), then one SetObserver (watch.ts: list + watch, bookmarks, re-list on 410, reconnect
// with backoff) over the object by name or the objects matching a label selector. Every change yields the current set,
// so a gate re-evaluates on each watch event, never by polling. A kind the cluster does not serve (CRD not installed)
// yields `unavailable` with the reason and is looked up again with backoff until it is served (discovery is the one
// thing asked repeatedly: there is no watch for "a CRD became served" short of watching CRDs, which needs more RBAC).
import type { ObjectSelection, ObjectWatch, SelectionState } from "../rollout/ports";
import { KubeClients } from "./client";
import { apiMessage, backoffMs, isTransient, KubeError, sleep, statusOf } from "./errors";
import { msg } from "./messages";
import { Mailbox, SetObserver } from "./watch";

type KubeObject = Record<string, unknown> & { metadata?: { name?: string; namespace?: string; resourceVersion?: string } };

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
const PAGE = 500;

/**
 * Bounded memory per object: managedFields (often larger than the object) and kubectl's last-applied copy of the
 * spec are dropped; a gate's expression sees everything else.
 */
export function trimObject<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata as Record<string, unknown> | undefined;
  if (meta) {
    delete meta.managedFields;
    const ann = meta.annotations as Record<string, string> | undefined;
    if (ann && LAST_APPLIED in ann) delete ann[LAST_APPLIED];
  }
  return obj;
}

/** `/apis/<group>/<version>[/namespaces/<ns>]/<plural>` (core kinds under `/api/v1`). */
export function collectionPath(apiVersion: string, plural: string, namespace?: string): string {
  const root = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return namespace ? `${root}/namespaces/${encodeURIComponent(namespace)}/${plural}` : `${root}/${plural}`;
}

/**
 * Lists every page of a collection path as raw JSON, the shape watch events have (`limit` 500 per request bounds one
 * response at any size).
 */
export async function listAll(
  c: KubeClients, path: string, selectors: { fieldSelector?: string; labelSelector?: string } = {},
): Promise<{ items: KubeObject[]; metadata: { resourceVersion?: string } }> {
  const items: KubeObject[] = [];
  let resourceVersion: string | undefined;
  let next: string | undefined;
  do {
    const page = (await c.objects.getRaw(path, { ...selectors, limit: PAGE, continue: next })) as {
      items?: KubeObject[]; metadata?: { resourceVersion?: string; continue?: string };
    };
    for (const item of page.items ?? []) items.push(item);
    resourceVersion = page.metadata?.resourceVersion;
    next = page.metadata?.continue || undefined;
  } while (next);
  return { items, metadata: { resourceVersion } };
}

const describe = (s: ObjectSelection) =>
  `${s.apiVersion} ${s.kind} ` +
  (s.name !== undefined ? (s.namespace ? `${s.namespace}/${s.name}` : s.name) : `objects matching "${s.labelSelector ?? ""}"`);

class SelectionWatch implements ObjectWatch {
  private readonly box = new Mailbox<SelectionState>();
  private readonly stopCtl = new AbortController();
  private observer: SetObserver<KubeObject> | undefined;

  constructor(private readonly c: KubeClients, private readonly sel: ObjectSelection, private readonly log: (line: string) => void) {
    void this.run();
  }

  next(): Promise<SelectionState | undefined> {
    return this.box.next();
  }

  take(): SelectionState | undefined {
    return this.box.take();
  }

  stop(): void {
    if (this.box.isClosed) return;
    this.stopCtl.abort();
    this.observer?.stop();
    this.box.close();
  }

  private get stopped(): boolean {
    return this.box.isClosed;
  }

  private publish(s: SelectionState): void {
    this.box.offer(() => s);
  }

  private fail(err: unknown): void {
    this.box.fail(err);
  }

  private async run(): Promise<void> {
    const { apiVersion, kind, namespace, name, labelSelector } = this.sel;
    let attempt = 0;
    let info: { plural: string; namespaced: boolean } | undefined;
    while (!this.stopped && !info) {
      try {
        info = await this.c.objects.served(apiVersion, kind);
        if (!info) this.publish({ unavailable: msg.kindNotServed(apiVersion, kind) });
      } catch (err) {
        if (!isTransient(err)) return this.fail(new KubeError(msg.discoveryFailed(apiVersion, kind, apiMessage(err), statusOf(err)), statusOf(err)));
        this.publish({ unavailable: msg.discoveryFailed(apiVersion, kind, apiMessage(err), statusOf(err)) });
      }
      if (!info) await sleep(backoffMs(attempt++, 1000, 10_000), this.stopCtl.signal);
    }
    if (this.stopped || !info) return;
    if (info.namespaced && name !== undefined && !namespace) return this.fail(new KubeError(msg.kindNeedsNamespace(apiVersion, kind)));
    if (!info.namespaced && namespace) return this.fail(new KubeError(msg.kindClusterScoped(apiVersion, kind)));
    const path = collectionPath(apiVersion, info.plural, info.namespaced ? namespace : undefined);
    const selectors = name !== undefined ? { fieldSelector: `metadata.name=${name}` } : { labelSelector: labelSelector ?? "" };
    this.observer = new SetObserver<KubeObject>({
      clients: this.c,
      path,
      name,
      labelSelector: selectors.labelSelector,
      list: () => listAll(this.c, path, selectors),
      trim: trimObject,
      log: this.log,
    });
    try {
      for (;;) {
        const s = await this.observer.next();
        if (!s) return;
        this.publish({ objects: s.objects, generation: s.generation });
      }
    } catch (err) {
      this.fail(err instanceof KubeError ? err : new KubeError(msg.objectsListFailed(describe(this.sel), apiMessage(err), statusOf(err)), statusOf(err)));
    }
  }
}

/** Watches a selection; see ObjectWatch in provider/rollout/ports.ts. */
export function watchObjects(c: KubeClients, sel: ObjectSelection, log: (line: string) => void = () => undefined): ObjectWatch {
  return new SelectionWatch(c, sel, log);
}
