// The live status mirror: the rollout's status object as JSON in ConfigMap kube-system/talos-gate-status-<cluster>
// (key `status.json`), so `kubectl -n kube-system get cm talos-gate-status-<cluster>` and `talos-gate status` (which
// prints it as YAML) show it. JSON, not YAML, because at 1,000 machines YAML.stringify took 60 ms and 28 MB of heap
// per write, and the mirror is written on every notable transition. Writes are throttled per cluster: the first goes
// out at once, later ones within the window of the previous write (500 ms, longer for a large status) are coalesced
// (last one wins) and written at the end of the window; `flush()` writes what is pending and waits. Mirroring is best effort: failures are logged, never thrown into the rollout. Each write also stores the
// port's own API counters so far (key `api.json`: requests, watches, bytes read), which `talos-gate status` shows and
// `npm run bench` reads after a `pulumi up`.
import * as k8s from "./k8s";
import * as YAML from "yaml";
import { KubeClients } from "./client";
import { apiMessage, isNotFound, KubeError, statusOf } from "./errors";
import {
  API_STATS_KEY, FIELD_MANAGER, LEGACY_STATUS_KEY, STATUS_KEY, STATUS_WRITER_ANNOTATION, statusConfigMapName, SYSTEM_NAMESPACE,
} from "./labels";
import { msg } from "./messages";

interface ClusterSlot {
  /** The newest status asked for, serialized when it is written (so each write serializes once, not each call). */
  pending?: { status: unknown };
  timer?: NodeJS.Timeout;
  inflight?: Promise<void>;
  lastWriteAt: number;
  /** Bytes of the last status written: a large status is written less often (see MIRROR_BYTES_PER_SECOND). */
  lastBytes: number;
}

/**
 * The mirror writes at most about this many bytes per second per cluster: a 1,000-node status is ~200 KB, and
 * rewriting it every 500 ms is 400 KB/s into etcd (every revision kept until compaction) and, in this process, two
 * large strings and a buffer per write that only a full GC frees. So the window grows with the status: 500 ms up to
 * 50 KB, 2 s at 200 KB.
 */
const MIRROR_BYTES_PER_SECOND = 100 * 1024;

/** How long after a write of `lastBytes` the next one waits (coalescing what comes meanwhile). */
export function mirrorWindowMs(throttleMs: number, lastBytes: number): number {
  return Math.max(throttleMs, Math.round((lastBytes / MIRROR_BYTES_PER_SECOND) * 1000));
}

/** The status a mirror ConfigMap holds (undefined if it holds none); throws if the text does not parse. */
export function decodeStatus(cm: k8s.V1ConfigMap): unknown | undefined {
  const json = cm.data?.[STATUS_KEY];
  if (json !== undefined) return JSON.parse(json);
  const yaml = cm.data?.[LEGACY_STATUS_KEY];
  return yaml === undefined ? undefined : YAML.parse(yaml);
}

/** The API counters the mirror's writer stored beside the status (undefined if none, or unreadable). */
export function decodeApiStats(cm: k8s.V1ConfigMap): ApiStats | undefined {
  const json = cm.data?.[API_STATS_KEY];
  if (json === undefined) return undefined;
  try {
    const v = JSON.parse(json) as Partial<ApiStats>;
    const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
    return { requests: n(v.requests), watches: n(v.watches), bytesRead: n(v.bytesRead) };
  } catch {
    return undefined;
  }
}

/** What the port writing the status has asked of the API server so far. */
export interface ApiStats {
  requests: number;
  watches: number;
  bytesRead: number;
}

/** A mirror as read back: the status and who says they wrote it (display only: anyone with the rights can write it). */
export interface MirroredStatus {
  status: unknown;
  writtenBy: string;
}

export class StatusMirror {
  private readonly slots = new Map<string, ClusterSlot>();

  constructor(
    private readonly c: KubeClients,
    private readonly log: (line: string) => void,
    private readonly throttleMs = 500,
    /** Stamped on every write (the rollout's holder), so a reader can tell a mirror someone else wrote. */
    private readonly writer = "",
  ) {}

  /** Queues `status` for `cluster`; returns at once (the write happens now or at the end of the throttle window). */
  write(cluster: string, status: unknown): Promise<void> {
    const slot = this.slot(cluster);
    // Not a copy: the write sends the status as it is then, which is this one or newer. A deep copy per call (a
    // ~200 KB status at 1,000 nodes, thousands of calls, each kept up to the 500 ms window) was most of the
    // provider's garbage.
    slot.pending = { status: status ?? null };
    this.pump(cluster, slot);
    return Promise.resolve();
  }

  /** Writes every pending status now and waits for all writes in flight. */
  async flush(cluster?: string): Promise<void> {
    const names = cluster ? [cluster] : [...this.slots.keys()];
    await Promise.all(
      names.map(async (name) => {
        const slot = this.slots.get(name);
        if (!slot) return;
        for (let i = 0; i < 3 && (slot.pending || slot.inflight); i++) {
          await slot.inflight;
          if (slot.pending) {
            if (slot.timer) clearTimeout(slot.timer);
            slot.timer = undefined;
            this.startWrite(name, slot);
          }
        }
        await slot.inflight;
      }),
    );
  }

  async read(cluster: string): Promise<unknown | undefined> {
    return (await this.readRecord(cluster))?.status;
  }

  async readRecord(cluster: string): Promise<MirroredStatus | undefined> {
    await this.flush(cluster); // read-your-writes within this process
    let cm: k8s.V1ConfigMap;
    try {
      cm = await this.c.core.readNamespacedConfigMap({ name: statusConfigMapName(cluster), namespace: SYSTEM_NAMESPACE });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw new KubeError(msg.statusReadFailed(cluster, apiMessage(err), statusOf(err)), statusOf(err));
    }
    try {
      const status = decodeStatus(cm);
      return status === undefined ? undefined : { status, writtenBy: cm.metadata?.annotations?.[STATUS_WRITER_ANNOTATION] ?? "" };
    } catch (err) {
      throw new KubeError(msg.statusUnreadable(cluster, (err as Error).message.split("\n")[0]));
    }
  }

  private slot(cluster: string): ClusterSlot {
    let s = this.slots.get(cluster);
    if (!s) {
      s = { lastWriteAt: 0, lastBytes: 0 };
      this.slots.set(cluster, s);
    }
    return s;
  }

  private pump(cluster: string, slot: ClusterSlot): void {
    if (!slot.pending || slot.inflight || slot.timer) return;
    const wait = slot.lastWriteAt + mirrorWindowMs(this.throttleMs, slot.lastBytes) - Date.now();
    if (wait <= 0) return this.startWrite(cluster, slot);
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      this.pump(cluster, slot);
    }, wait);
  }

  private startWrite(cluster: string, slot: ClusterSlot): void {
    const pending = slot.pending;
    if (!pending) return;
    slot.pending = undefined;
    slot.lastWriteAt = Date.now();
    slot.inflight = this.put(cluster, pending.status, (bytes) => (slot.lastBytes = bytes))
      .catch((err) => this.log(msg.statusWriteFailed(cluster, apiMessage(err))))
      .finally(() => {
        slot.inflight = undefined;
        this.pump(cluster, slot);
      });
  }

  private async put(cluster: string, status: unknown, sized: (bytes: number) => void): Promise<void> {
    const name = statusConfigMapName(cluster);
    let json: string;
    try {
      json = JSON.stringify(status);
    } catch (err) {
      throw new Error(msg.statusUnserializable((err as Error).message));
    }
    sized(json.length);
    const body: k8s.V1ConfigMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name,
        namespace: SYSTEM_NAMESPACE,
        labels: { "app.kubernetes.io/managed-by": FIELD_MANAGER, "talos-gate.dev/cluster": cluster },
        annotations: { "talos-gate.dev/updated-at": new Date().toISOString(), ...(this.writer ? { [STATUS_WRITER_ANNOTATION]: this.writer } : {}) },
      },
      data: { [STATUS_KEY]: json, [API_STATS_KEY]: JSON.stringify(this.apiStats()) },
    };
    const collection = `/api/v1/namespaces/${SYSTEM_NAMESPACE}/configmaps`;
    const query = { fieldManager: FIELD_MANAGER };
    try {
      // Unconditional update (no resourceVersion): the newest status simply replaces the previous one.
      await this.c.objects.sendRaw("PUT", `${collection}/${name}`, body, query);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.c.objects.sendRaw("POST", collection, body, query);
    }
  }

  private apiStats(): ApiStats {
    const { requests, watches, bytesRead } = this.c.stats();
    return { requests, watches, bytesRead };
  }

  close(): void {
    for (const s of this.slots.values()) if (s.timer) clearTimeout(s.timer);
  }
}
