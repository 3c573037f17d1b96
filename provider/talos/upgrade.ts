// One node upgrade, like Omni: Talos >= 1.13 on both sides → ImageService.Pull, LifecycleService.Upgrade (exit code
// checked), beforeReboot (the caller cordons + drains), Reboot; otherwise the legacy MachineService.Upgrade with
// preserve (stage only on 1.9.0–1.9.2). Then wait for a new boot id AND the target version. Level-based: a node
// already on the target is left alone, and a node that is down at the start is waited for first.
import type { UpgradeNodeOptions, UpgradeNodeResult } from "../rollout/ports";
import { EventStream, TalosClient, TalosEvent } from "./client";
import { classify, TalosError } from "./errors";
import { targetVersion } from "./image";
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
}

/** First pause between probes while waiting for a node; doubled up to `pollIntervalMs`. */
const FIRST_POLL_MS = 100;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() { clearTimeout(t); signal?.removeEventListener("abort", done); resolve(); }
    signal?.addEventListener("abort", done, { once: true });
  });

/** Watches a node's events during an action, remembering the first sequence error (failed or not started). */
class SequenceWatch {
  error?: TalosError;
  private readonly stream: EventStream;
  readonly ready: Promise<void>;
  constructor(client: TalosClient, private readonly node: string) {
    const stream = (this.stream = client.events(node, { tailEvents: 0 }));
    let markReady!: () => void;
    this.ready = new Promise<void>((r) => (markReady = r));
    void (async () => {
      try {
        for await (const e of stream) {
          markReady();
          this.observe(e);
        }
      } catch {
        // the stream breaks when the node goes down; waiting is done by polling
      } finally {
        markReady();
      }
    })();
  }
  private observe(e: TalosEvent): void {
    if (this.error || e.type !== "SequenceEvent") return;
    const err = e.payload.error;
    if (!err?.message) return;
    const text = `${e.payload.sequence || "sequence"}: ${err.message}`;
    const exit = /exit (?:status|code) (\d+)/.exec(err.message);
    if (err.code === 1) this.error = new TalosError("LOCKED", msg.sequenceLocked(this.node, err.message), this.node);
    else if (exit) this.error = new TalosError("INSTALLER_EXIT", msg.sequenceFailed(this.node, text), this.node);
    else this.error = new TalosError("SEQUENCE_FAILED", msg.sequenceFailed(this.node, text), this.node);
  }
  close(): void {
    this.stream.cancel();
  }
}

export async function upgradeNode(client: TalosClient, node: string, opts: UpgradeNodeOptions, tuning: UpgradeTuning = {}): Promise<UpgradeNodeResult> {
  const pollMs = tuning.pollIntervalMs ?? 1000;
  const probeMs = tuning.probeTimeoutMs ?? 5000;
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
  const watch = new SequenceWatch(client, node);
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
      const res = await client.lifecycleUpgrade(node, opts.image, { signal, timeoutMs: opts.nodeTimeoutMs });
      if (res.exitCode !== 0) {
        throw new TalosError("INSTALLER_EXIT", msg.installerExit(node, res.exitCode, from, res.log.slice(-3).join(" | ")), node);
      }
      checkAbort();
      if (opts.beforeReboot) {
        step("draining");
        await opts.beforeReboot();
      }
      checkAbort();
      step("rebooting");
      try {
        await client.reboot(node, 0, { signal });
      } catch (err) {
        // the node may drop the connection as it goes down: wait and let the boot id tell whether it rebooted
        if (!(err instanceof TalosError) || !err.retryable || err.code === "ABORTED") throw err;
      }
    } else {
      step("installing", opts.image);
      await client.upgrade(node, { image: opts.image, preserve: true, stage: needsStagedUpgrade(from), force: false }, {
        signal, timeoutMs: opts.nodeTimeoutMs,
      });
      step("rebooting");
    }

    step("waiting");
    const deadline = Date.now() + opts.nodeTimeoutMs;
    const staged = path === "legacy" && needsStagedUpgrade(from);
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
