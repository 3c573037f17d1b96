// One node upgrade, like Omni: Talos >= 1.13 on both sides → ImageService.Pull, LifecycleService.Upgrade (exit code
// checked), beforeReboot (the caller cordons + drains), Reboot; otherwise beforeReboot, then the legacy
// MachineService.Upgrade with preserve (stage only on 1.9.0–1.9.2). Then wait for a new boot id AND the target version. Level-based: a node
// already on the target is left alone, and a node that is down at the start is waited for first.
//
// Actions that reboot (Reboot, legacy Upgrade) are sent once per node upgrade. Sent again only when the node proved
// the first did not take: Talos refused it (a transient refusal — upgrade mutex, another installation, etcd not
// healthy yet — is retried within nodeTimeout), or no endpoint could be reached so it never left. When the answer is
// lost on the way back (the node went down fast, the endpoint's connection dropped), the action may have started:
// the new boot id decides, never a second call.
import type { UpgradeNodeOptions, UpgradeNodeResult } from "../rollout/ports";
import { EventStream, TalosClient, TalosEvent } from "./client";
import { classify, isTransientRefusal, TalosError } from "./errors";
import { targetVersion, versionFromImage } from "./image";
import { msg } from "./messages";
import { sameVersion } from "../version";
import { needsStagedUpgrade, supportsLifecycleApi } from "./version";

export interface UpgradeTuning {
  /**
   * Longest pause between probes while waiting for the node, default 1 s. The pauses start at 100 ms and double up
   * to this, so a quick reboot is seen at once while a long one is still probed only once per interval.
   */
  pollIntervalMs?: number;
  /** Deadline of each probe (Read boot id / Version), default 5 s. */
  probeTimeoutMs?: number;
  /** Longest pause between attempts of an action Talos refused for now (upgrade mutex, ...), default 10 s. */
  refusalRetryMaxMs?: number;
}

/** First pause between probes while waiting for a node; doubled up to `pollIntervalMs`. */
const FIRST_POLL_MS = 100;
/** First pause after a transient refusal; doubled up to `refusalRetryMaxMs`. */
const FIRST_REFUSAL_RETRY_MS = 250;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() { clearTimeout(t); signal?.removeEventListener("abort", done); resolve(); }
    signal?.addEventListener("abort", done, { once: true });
  });

/**
 * Watches a node's events during an action and keeps the first error of OUR action: events are filtered by the
 * actor id the action returned, as talosctl's action tracker does, so another client's failing or locked sequence on
 * the same node is not taken for ours. The one exception is Talos' "sequence not started: locked", published without
 * an actor id: it is ours when it names our sequence and arrives before any event of our actor (a sequence that
 * started publishes its START first, so a later LOCKED belongs to someone else's attempt).
 */
class SequenceWatch {
  error?: TalosError;
  private readonly stream: EventStream;
  readonly ready: Promise<void>;
  private actor?: { id: string; sequences: readonly string[] };
  private seenOurs = false;
  /** Events that arrived before the action returned its actor id. */
  private pending: TalosEvent[] = [];
  constructor(client: TalosClient, private readonly node: string) {
    const stream = (this.stream = client.events(node, { tailEvents: 0 }));
    let markReady!: () => void;
    this.ready = new Promise<void>((r) => (markReady = r));
    void (async () => {
      try {
        for await (const e of stream) {
          markReady();
          if (this.actor) this.observe(e);
          else this.pending.push(e);
        }
      } catch {
        // the stream breaks when the node goes down; waiting is done by polling
      } finally {
        markReady();
      }
    })();
  }

  /** The action returned `actorId`; its sequence is one of `sequences` (e.g. "upgrade", "stageUpgrade"). */
  follow(actorId: string, sequences: readonly string[]): void {
    this.actor = { id: actorId, sequences };
    const pending = this.pending;
    this.pending = [];
    for (const e of pending) this.observe(e);
  }

  private observe(e: TalosEvent): void {
    const actor = this.actor!;
    if (this.error || !e.type) return;
    if (actor.id && e.actorId === actor.id) {
      this.seenOurs = true;
      if (e.type !== "SequenceEvent") return;
      const err = e.payload.error;
      if (!err?.message) return;
      const text = `${e.payload.sequence || "sequence"}: ${err.message}`;
      const exit = /exit (?:status|code) (\d+)/.exec(err.message);
      if (err.code === 1) this.error = new TalosError("LOCKED", msg.sequenceLocked(this.node, err.message), this.node);
      else if (exit) this.error = new TalosError("INSTALLER_EXIT", msg.sequenceFailed(this.node, text), this.node);
      else this.error = new TalosError("SEQUENCE_FAILED", msg.sequenceFailed(this.node, text), this.node);
      return;
    }
    const locked = e.type === "SequenceEvent" && !e.actorId && e.payload.error?.code === 1 && actor.sequences.includes(e.payload.sequence);
    if (locked && !this.seenOurs) this.error = new TalosError("LOCKED", msg.sequenceLocked(this.node, e.payload.error.message), this.node);
  }

  close(): void {
    this.stream.cancel();
  }
}

export async function upgradeNode(client: TalosClient, node: string, opts: UpgradeNodeOptions, tuning: UpgradeTuning = {}): Promise<UpgradeNodeResult> {
  const pollMs = tuning.pollIntervalMs ?? 1000;
  const probeMs = tuning.probeTimeoutMs ?? 5000;
  const refusalMaxMs = tuning.refusalRetryMaxMs ?? 10000;
  const target = targetVersion(opts.image, opts.targetVersion);
  const signal = opts.signal;
  const step = opts.onStep ?? (() => undefined);
  const checkAbort = () => {
    if (signal?.aborted) throw new TalosError("ABORTED", msg.aborted(node), node);
  };
  const startDeadline = Date.now() + opts.nodeTimeoutMs;

  // Where is the node now? (waits through a reboot left over from an interrupted run)
  let from = "";
  let oldBootId = "";
  await pollUntil(startDeadline, async (probe) => {
    from = (await client.version(node, probe)).tag;
    oldBootId = await client.bootId(node, probe);
    return true;
  });
  if (sameVersion(from, target)) return { path: "none", fromVersion: from, toVersion: from, oldBootId, newBootId: oldBootId };

  let path: "lifecycle" | "legacy" = supportsLifecycleApi(from) && supportsLifecycleApi(target) ? "lifecycle" : "legacy";
  const staged = path === "legacy" && needsStagedUpgrade(from);
  const watch = new SequenceWatch(client, node);
  /** Set when the answer to the rebooting action was lost: the action may or may not have started. */
  let lostAnswer: { action: string; detail: string } | undefined;
  try {
    await Promise.race([watch.ready, sleep(probeMs, signal)]); // events only sharpen errors; never block on them
    checkAbort();
    if (path === "lifecycle") {
      step("pulling", opts.image);
      try {
        await client.pull(node, opts.image, { signal, timeoutMs: opts.nodeTimeoutMs });
      } catch (err) {
        if ((err as TalosError).code !== "UNIMPLEMENTED") throw err;
        path = "legacy"; // the node does not have the new API after all (terraform-provider-talos does the same)
      }
    }
    if (path === "lifecycle") {
      step("installing", opts.image);
      const res = await untilAccepted(() => client.lifecycleUpgrade(node, opts.image, { signal, timeoutMs: opts.nodeTimeoutMs }));
      if (res.exitCode !== 0) {
        throw new TalosError("INSTALLER_EXIT", msg.installerExit(node, res.exitCode, from, res.log.slice(-3).join(" | ")), node);
      }
      checkAbort();
      if (opts.beforeReboot) {
        step("draining");
        await opts.beforeReboot({ installed: true });
      }
      checkAbort();
      step("rebooting");
      const r = await sendAction("Reboot", () => client.reboot(node, 0, { signal }));
      if (r) watch.follow(r.actorId, ["reboot"]);
    } else {
      // The legacy Upgrade drains with Talos' own drain (refusals ignored, rebooting anyway after 5 minutes) and
      // reboots by itself: the caller drains first, PDBs honoured, and etcd is asked right before (issue 18.2, 18.3).
      if (opts.beforeReboot) {
        step("draining");
        await opts.beforeReboot({ installed: false });
      }
      checkAbort();
      step("installing", opts.image);
      const r = await sendAction("Upgrade", () => client.upgrade(node, { image: opts.image, preserve: true, stage: staged, force: false }, {
        signal, timeoutMs: opts.nodeTimeoutMs,
      }));
      if (r) watch.follow(r.actorId, staged ? ["stageUpgrade"] : ["upgrade"]);
      step("rebooting");
    }

    step("waiting");
    const deadline = Date.now() + opts.nodeTimeoutMs;
    let last = msg.lastNothing();
    let newBootId = "";
    await pollUntil(deadline, async (probe) => {
      if (watch.error) throw watch.error;
      const bootId = await client.bootId(node, probe);
      if (bootId === oldBootId) {
        last = msg.lastSameBoot();
        return false;
      }
      const now = (await client.version(node, probe)).tag;
      if (sameVersion(now, target)) {
        newBootId = bootId;
        return true;
      }
      // A staged upgrade boots once more before the new version runs; elsewhere this is an A/B rollback.
      if (!staged) throw new TalosError("ROLLED_BACK", msg.rolledBack(node, now, target), node);
      last = msg.lastOtherVersion(now);
      return false;
    }, (detail) => (last = msg.lastDown(detail)), () => {
      if (lostAnswer && last === msg.lastSameBoot()) {
        throw new TalosError("TIMEOUT", msg.answerLost(node, lostAnswer.action, lostAnswer.detail, opts.nodeTimeoutMs, last), node);
      }
      throw new TalosError("TIMEOUT", staged && last.startsWith("last seen: rebooted")
        ? msg.rolledBack(node, last.replace(/^.*running /, ""), target)
        : msg.notBack(node, target, opts.nodeTimeoutMs, last), node);
    });
    step("back", target);
    return { path, fromVersion: from, toVersion: target, oldBootId, newBootId };
  } finally {
    watch.close();
  }

  /**
   * Sends a call Talos may refuse for now; a transient refusal (upgrade mutex, another installation in progress,
   * etcd not healthy yet) proves the call did not take, so it is sent again after a pause, until nodeTimeout.
   */
  async function untilAccepted<T>(send: () => Promise<T>): Promise<T> {
    const refusalDeadline = Date.now() + opts.nodeTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      checkAbort();
      try {
        return await send();
      } catch (err) {
        if (!isTransientRefusal(err)) throw err;
        const e = err as TalosError;
        const left = refusalDeadline - Date.now();
        if (left <= 0) throw new TalosError("TIMEOUT", msg.refusedUntilTimeout(node, target, opts.nodeTimeoutMs, e.detail ?? e.message), node);
        const pause = Math.min(refusalMaxMs, FIRST_REFUSAL_RETRY_MS * 2 ** Math.min(attempt, 16), left);
        step("installing", msg.retryingRefusal(e.detail ?? e.message, pause));
        await sleep(pause, signal);
      }
    }
  }

  /**
   * Sends an action that reboots the node (Reboot, legacy Upgrade). Resolves with its answer, or undefined when the
   * answer was lost after the request may have reached the node: then only the boot id can tell, and the action is
   * not sent again. A request that reached no endpoint at all never left, and is sent again within nodeTimeout.
   */
  async function sendAction<T>(action: string, send: () => Promise<T>): Promise<T | undefined> {
    const actionDeadline = Date.now() + opts.nodeTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await untilAccepted(send);
      } catch (err) {
        const e = classify(err, node, action);
        if (e.code === "ABORTED" || !e.retryable || isTransientRefusal(e)) throw e;
        if (e.unsent && Date.now() < actionDeadline) {
          await sleep(Math.min(pollMs, FIRST_POLL_MS * 2 ** Math.min(attempt, 16)), signal);
          checkAbort();
          continue;
        }
        lostAnswer = { action, detail: e.detail ?? e.message };
        return undefined;
      }
    }
  }

  /**
   * Calls `probe` until it returns true; retryable errors (node down) are waited out until `deadline`, other errors
   * are thrown. `onDown` sees the last retryable error; `onTimeout` throws the timeout error.
   */
  async function pollUntil(
    deadline: number,
    probe: (o: { signal?: AbortSignal; timeoutMs: number }) => Promise<boolean>,
    onDown?: (detail: string) => void,
    onTimeout?: () => never,
  ): Promise<void> {
    let lastErr: TalosError | undefined;
    for (let attempt = 0; ; attempt++) {
      checkAbort();
      const left = deadline - Date.now();
      if (left <= 0) {
        if (onTimeout) onTimeout();
        throw new TalosError("TIMEOUT", msg.notBack(node, target, opts.nodeTimeoutMs,
          lastErr ? msg.lastDown(lastErr.message) : msg.lastNothing()), node);
      }
      try {
        if (await probe({ signal, timeoutMs: Math.min(probeMs, left) })) return;
      } catch (err) {
        const e = classify(err, node, "probe");
        if (!e.retryable || e.code === "ABORTED") throw e;
        // A last probe cut short by our own deadline says nothing about the node: keep the error seen before it.
        const cutShort = e.code === "DEADLINE_EXCEEDED" && left < probeMs && lastErr !== undefined;
        if (!cutShort) {
          lastErr = e;
          onDown?.(e.message.replace(/^talos: node \S+: probe: /, ""));
        }
      }
      // Backoff from 100 ms up to pollMs (was a flat pollMs: up to a whole interval late for every node).
      const pause = Math.min(pollMs, FIRST_POLL_MS * 2 ** Math.min(attempt, 16));
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())), signal);
    }
  }
}

/**
 * Installs `image` without rebooting (ImageService.Pull, LifecycleService.Upgrade): to disarm a node whose failed
 * upgrade left another version installed, the version it runs is installed again, so its next reboot boots what it
 * runs now (issue 18.4). A refusal for now (another installation) is not retried: the next run disarms it.
 */
export async function reinstall(client: TalosClient, node: string, opts: { image: string; timeoutMs: number; signal?: AbortSignal }): Promise<void> {
  await client.pull(node, opts.image, { signal: opts.signal, timeoutMs: opts.timeoutMs });
  const res = await client.lifecycleUpgrade(node, opts.image, { signal: opts.signal, timeoutMs: opts.timeoutMs });
  if (res.exitCode !== 0) {
    throw new TalosError("INSTALLER_EXIT", msg.installerExit(node, res.exitCode, versionFromImage(opts.image) ?? "the running version", res.log.slice(-3).join(" | ")), node);
  }
}
