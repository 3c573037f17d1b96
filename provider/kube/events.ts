// Kubernetes Events (core/v1) on Nodes and runner Jobs for rollout transitions, so `kubectl describe node` and
// `kubectl get events` show what talos-gate did. Like client-go's recorder: the same event again on the same object
// bumps `count` and `lastTimestamp` of the existing Event instead of creating a new one. Writes are queued in order
// and never awaited by the caller (best effort; failures logged); `flush()` waits for the queue.
import * as k8s from "./k8s";
import * as os from "node:os";
import type { RolloutEvent } from "../rollout/ports";
import { KubeClients } from "./client";
import { apiMessage, isNotFound, statusOf } from "./errors";
import { FIELD_MANAGER } from "./labels";
import { msg } from "./messages";

const MESSAGE_LIMIT = 1024;
const MAX_TRACKED = 500;
/**
 * Events are best effort and must never slow a rollout (issue 22.5): at most this many writes wait in the queue (a
 * slow API server drops the newest, once said), a refused write (403) stops recording for the process, and a flush
 * waits at most FLUSH_BOUND_MS.
 */
const MAX_PENDING = 1000;
const FLUSH_BOUND_MS = 10_000;

function clip(s: string): string {
  const b = Buffer.from(s, "utf8");
  if (b.length <= MESSAGE_LIMIT) return s;
  return b.subarray(0, MESSAGE_LIMIT - 3).toString("utf8").replace(/\uFFFD$/, "") + "...";
}

const eventsPath = (namespace: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;

export class EventRecorder {
  private queue: Promise<void> = Promise.resolve();
  private readonly seen = new Map<string, { name: string; namespace: string; count: number }>();
  private seq = 0;
  private readonly instance = `${os.hostname()}-${process.pid}`;

  constructor(
    private readonly c: KubeClients,
    private readonly log: (line: string) => void,
  ) {}

  private pending = 0;
  private refused = false;
  private dropped = false;

  record(e: RolloutEvent): void {
    if (this.refused) return;
    if (this.pending >= MAX_PENDING) {
      if (!this.dropped) this.log(msg.eventsDropped(MAX_PENDING));
      this.dropped = true;
      return;
    }
    this.pending++;
    this.queue = this.queue.then(() => (this.refused ? undefined : this.write(e))).catch((err) => {
      if (statusOf(err) === 403) {
        this.refused = true;
        this.log(msg.eventsRefused(apiMessage(err)));
      } else {
        this.log(msg.eventWriteFailed(`${e.object.kind} ${e.object.name}`, e.reason, apiMessage(err)));
      }
    }).finally(() => {
      this.pending--;
    });
  }

  /** Waits for the queued writes, at most FLUSH_BOUND_MS. */
  async flush(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.queue, new Promise<void>((r) => { timer = setTimeout(r, FLUSH_BOUND_MS).unref(); })]);
    clearTimeout(timer);
  }

  private async write(e: RolloutEvent): Promise<void> {
    const namespace = e.object.kind === "Node" ? "default" : e.object.namespace || "default";
    const type = e.type ?? "Normal";
    const message = clip(e.message);
    const key = [e.object.kind, namespace, e.object.name, e.object.uid ?? "", type, e.reason, message].join("\u0000");
    const now = new Date();
    const prev = this.seen.get(key);
    if (prev) {
      try {
        await this.c.objects.sendRaw("PATCH", `${eventsPath(prev.namespace)}/${encodeURIComponent(prev.name)}`, [
          { op: "replace", path: "/count", value: prev.count + 1 },
          { op: "replace", path: "/lastTimestamp", value: now.toISOString().replace(/\.\d+Z$/, "Z") },
        ]);
        prev.count++;
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.seen.delete(key); // expired (events have a TTL): create a new one
      }
    }
    const name = `${e.object.name}.${(BigInt(now.getTime()) * 1000000n + BigInt(this.seq++ % 1000000)).toString(16)}`;
    const body: k8s.CoreV1Event = {
      metadata: { name, namespace },
      involvedObject: {
        kind: e.object.kind,
        apiVersion: e.object.kind === "Node" ? "v1" : "batch/v1",
        name: e.object.name,
        ...(e.object.kind === "Job" ? { namespace } : {}),
        ...(e.object.uid ? { uid: e.object.uid } : {}),
      },
      reason: e.reason,
      message,
      type,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: FIELD_MANAGER },
      reportingComponent: FIELD_MANAGER,
      reportingInstance: this.instance,
    };
    // The Event the API server answers with is not needed: dropped unread (two Events per node of a rollout).
    await this.c.objects.sendRaw("POST", eventsPath(namespace), body);
    if (this.seen.size >= MAX_TRACKED) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(key, { name, namespace, count: 1 });
  }
}
