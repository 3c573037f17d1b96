// What every named part of a run shares: the options, the ports, the clock, the current status (changed only through
// `emit`, which reduces the event, prints its progress line and mirrors the status into the cluster), the stop signal
// (cancelled, lease lost, or asked to stop through the cluster) and the live machines.
import { PreparedImages } from "./prepare";
import type { Clock } from "./clock";
import type { KubeApi, Lease, Machine, MachineWatch, TalosApi } from "./ports";
import type { RunOptions } from "./run";
import { progressLine, reduce, type StatusEvent, type UpgradeStatus } from "./status";
import * as msg from "./messages";
import { nodeEventFor } from "./nodeEvents";
import { errorText } from "../errorText";

/** Internal: ends the run with this reason (phase Failed, partial state, resumable). */
export class Stop extends Error {}

/** Shortest spacing of the status writes of notable transitions (the port throttles to ~500 ms anyway). */
const FORCED_WRITE_SPACING_MS = 500;

/** With a Node watch, waits still look every so often (a watch that silently stalls must not stall a run). */
const WATCH_SAFETY_POLL_MS = 10_000;

/** How long reading the Nodes is retried before the run fails. */
const LIST_RETRY_MS = 30_000;

export { errorText };

export class RunContext {
  status: UpgradeStatus;
  /** Aborted when the run must stop before the next node: caller's cancel, lease lost, or a stop request. */
  readonly stop: AbortSignal;
  private readonly mirror: StatusMirrorWriter;
  private listing: Promise<Machine[]> | undefined;
  /** Every Node, kept current by one watch, when the port can (otherwise reads list, and waits poll). */
  private readonly nodes: MachineWatch | undefined;
  /** The next wave's installer images, read while its gate runs. */
  readonly prepared: PreparedImages;

  constructor(
    readonly kube: KubeApi,
    readonly talos: TalosApi,
    readonly opts: RunOptions,
    readonly clock: Clock,
    readonly lease: Lease,
    status: UpgradeStatus,
  ) {
    this.status = status;
    this.stop = AbortSignal.any([opts.signal, lease.lost, lease.stopRequested].filter((s): s is AbortSignal => s !== undefined));
    this.mirror = new StatusMirrorWriter(this, opts.statusWriteIntervalMs ?? 5000);
    this.nodes = kube.watchMachines();
    this.prepared = new PreparedImages((m, target) => opts.installerImage(m, target), () => clock.now());
  }

  now(): number {
    return this.clock.now();
  }

  /** Reduces one event into the status, prints its progress line, mirrors the status (throttled unless forced). */
  async emit(event: StatusEvent, forceWrite = false, final = false): Promise<void> {
    this.status = reduce(this.status, event);
    const line = progressLine(event, this.status);
    if (line !== undefined && !this.opts.onEvent) this.opts.onProgress?.(line);
    this.opts.onEvent?.(event, this.status, line);
    const nodeEvent = nodeEventFor(event, this.status);
    if (nodeEvent) this.kube.recordEvent?.(nodeEvent); // queued, never awaited: Events must not slow the run
    this.opts.onStatus?.(this.status);
    await this.mirror.write(forceWrite, final);
  }

  /** A warning the user must see (Pulumi shows it on the resource row); never carries secrets. */
  warn(text: string): void {
    const line = msg.progressPrefix(this.opts.cluster) + text;
    if (this.opts.onWarning) this.opts.onWarning(line);
    else this.opts.onProgress?.(line);
  }

  /** Why the run stops before `beforeNode` (or at all). */
  stopReason(beforeNode?: string): string {
    if (this.lease.lost.aborted && !this.opts.signal?.aborted && !this.lease.stopRequested?.aborted) {
      return msg.reasonLeaseLost(this.opts.cluster);
    }
    const done = this.status.machines.filter((m) => m.state === "done" || m.state === "skipped").length;
    const source = this.opts.signal?.aborted ? this.opts.signal : this.lease.stopRequested;
    return msg.reasonCancelled(beforeNode, done, this.status.machines.length, whyStopped(source));
  }

  /** Throws Stop when the run must stop before `beforeNode`. */
  checkStop(beforeNode?: string): void {
    if (this.stop.aborted) throw new Stop(this.stopReason(beforeNode));
  }

  /**
   * The live machines. Single flight: the nodes of a parallel wave that wait at the same time share one LIST in flight
   * (50 concurrent LISTs of 1,000 Nodes otherwise). Retried for a while: an API server restart must not end a rollout.
   */
  machines(): Promise<Machine[]> {
    if (this.nodes && !this.nodes.failed) return this.nodes.machines().catch(() => this.listed());
    return this.listed();
  }

  /** One machine by name (from the watch, else by reading one Node when the port can). */
  async machine(name: string): Promise<Machine | undefined> {
    if (this.nodes && !this.nodes.failed) return (await this.machines()).find((m) => m.name === name);
    return this.kube.readMachine(name);
  }

  /** Marks the machines as read now: `machinesChanged` waits for the next change after this. */
  machinesVersion(): number {
    return this.nodes?.generation ?? 0;
  }

  /**
   * Waits for the machines to change after `since` (a watch event), at most `pollMs` when there is no watch (then it
   * is a poll), and never past `signal`.
   */
  async machinesChanged(since: number, pollMs: number, signal: AbortSignal): Promise<void> {
    if (!this.nodes || this.nodes.failed) return this.clock.sleep(pollMs, signal);
    // A periodic look anyway: a watch that silently stalls must not stall the run (the port re-opens it too).
    const wake = new AbortController();
    const both = AbortSignal.any([signal, wake.signal]);
    await Promise.race([this.nodes.changed(since, both), this.clock.sleep(Math.max(pollMs, WATCH_SAFETY_POLL_MS), both)]);
    wake.abort();
  }

  /**
   * Resolves at the first change of `name`'s Ready, version or boot id on the Node watch after the call, or when
   * `signal` aborts; without a watch only at the abort (the caller polls anyway). A hint for the Talos wait
   * (UpgradeNodeOptions.nodeChanged).
   */
  async machineChanged(name: string, signal: AbortSignal): Promise<void> {
    const nodes = this.nodes;
    const aborted = () => new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    if (!nodes || nodes.failed) return aborted();
    const key = (ms: Machine[] | undefined) => {
      const m = ms?.find((x) => x.name === name);
      return `${m?.ready}/${m?.talosVersion}/${m?.bootId}`;
    };
    let since = nodes.generation;
    const before = key(await nodes.machines().catch(() => undefined));
    for (;;) {
      await nodes.changed(since, signal);
      if (signal.aborted) return;
      // No new generation: the watch stopped or failed, so no change will come (and waking now would poll in a loop).
      if (nodes.generation === since) return aborted();
      since = nodes.generation;
      if (key(await nodes.machines().catch(() => undefined)) !== before) return;
    }
  }

  /**
   * The first state of `name` on the Node watch, from now on, that `accept` takes; undefined without a watch, or when
   * it fails or stops, or `signal` aborts (never a read: a caller that needs an answer then reads or polls itself).
   */
  async machineWhen(name: string, accept: (m: Machine) => boolean, signal: AbortSignal): Promise<Machine | undefined> {
    const nodes = this.nodes;
    if (!nodes || nodes.failed) return undefined;
    for (let since = nodes.generation; !signal.aborted; since = nodes.generation) {
      const m = (await nodes.machines().catch(() => undefined))?.find((x) => x.name === name);
      if (m && accept(m)) return m;
      await nodes.changed(since, signal);
      if (nodes.generation === since) return undefined; // stopped, failed, or the signal
    }
    return undefined;
  }

  /** Stops the Node watch (end of run). */
  stopWatching(): void {
    this.nodes?.stop();
  }

  private listed(): Promise<Machine[]> {
    return (this.listing ??= this.listWithRetry().finally(() => {
      this.listing = undefined;
    }));
  }

  /** Writes a pending throttled status now (end of run). */
  async flushStatus(): Promise<void> {
    await this.mirror.finish();
  }

  private async listWithRetry(): Promise<Machine[]> {
    const until = this.now() + LIST_RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.kube.listMachines();
      } catch (e) {
        if (this.now() >= until || this.stop.aborted) throw e;
        await this.clock.sleep(Math.min(5000, 250 * 2 ** attempt), this.stop);
      }
    }
  }
}

/** The stop request's own words (an Error reason or a string), if the signal carries one. */
function whyStopped(signal: AbortSignal | undefined): string | undefined {
  const r: unknown = signal?.reason;
  if (r instanceof Error && r.name !== "AbortError") return r.message;
  if (typeof r === "string" && r !== "") return r;
  return undefined;
}

/**
 * Throttled mirror writes. Transitions worth showing at once (a node starts or is back, the gate holds or opens) are
 * still written at most once per 500 ms, with a trailing write of the newest status: with 50 nodes in flight they come
 * in bursts, and every write snapshots the whole status (1,000 machines → thousands of copies of ~300 KB otherwise).
 */
class StatusMirrorWriter {
  private lastWrite = -Infinity;
  private dirty = false;
  private trailing = false;
  private finished = false;
  private warned = false;
  private readonly forcedSpacing: number;

  constructor(private readonly ctx: RunContext, private readonly writeEvery: number) {
    this.forcedSpacing = Math.min(FORCED_WRITE_SPACING_MS, writeEvery);
  }

  async write(force: boolean, final = false): Promise<void> {
    const { clock } = this.ctx;
    const since = clock.now() - this.lastWrite;
    if (!final && since < (force ? this.forcedSpacing : this.writeEvery)) {
      this.dirty = true;
      if (force && !this.trailing) {
        this.trailing = true;
        void clock.sleep(this.forcedSpacing - since).then(() => {
          this.trailing = false;
          if (this.dirty && !this.finished) void this.write(true);
        });
      }
      return;
    }
    this.lastWrite = clock.now();
    this.dirty = false;
    try {
      await this.ctx.kube.writeStatus(this.ctx.opts.cluster, this.ctx.status);
    } catch (e) {
      if (!this.warned) this.ctx.warn(msg.mirrorWriteFailed(errorText(e)));
      this.warned = true;
    }
  }

  async finish(): Promise<void> {
    this.finished = true;
    if (this.dirty) await this.write(true, true);
  }
}
