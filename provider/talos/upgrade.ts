// One node upgrade, like Omni: Talos >= 1.13 on both sides → ImageService.Pull, LifecycleService.Upgrade (exit code
// checked), beforeReboot (the caller drains; it cordons at the "pulling" step), Reboot; otherwise beforeReboot, then
// the legacy MachineService.Upgrade with preserve (stage only on 1.9.0–1.9.2). Then wait for a new boot id AND the
// target version. Level-based: a node already on the target is left alone, and a node that is down at the start is
// waited for first.
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
import { sleep } from "../sleep";
import { sameVersion, tryNormalizeVersion } from "../version";
import { afterFailedLook, lookMeaning, waitTimeoutError, type LastSeen, type LostAnswer } from "./look";
import { needsStagedUpgrade, preserveSkipsEtcdChecks, refuseBeforeNodeRouting, supportsLifecycleApi } from "./version";

export interface UpgradeTuning {
  /**
   * Longest pause between probes while waiting for the node, default 1 s. The pauses start at 100 ms and double up
   * to this, so a quick reboot is seen at once while a long one is still probed only once per interval.
   */
  pollIntervalMs?: number;
  /** The first of those pauses, default 100 ms (never longer than `pollIntervalMs`). */
  firstPollMs?: number;
  /** Deadline of each probe (Read boot id / Version), default 5 s. */
  probeTimeoutMs?: number;
  /** Longest pause between attempts of an action Talos refused for now (upgrade mutex, ...), default 10 s. */
  refusalRetryMaxMs?: number;
  /**
   * First pause after an etcd refusal of the legacy Upgrade on a Talos that leaks an etcd client per refusal
   * (before v1.12.9, v1.13.0–v1.13.3), default 5 s; doubled up to `leakyRefusalRetryMaxMs`, default 60 s.
   */
  leakyRefusalRetryFirstMs?: number;
  leakyRefusalRetryMaxMs?: number;
}

/** First pause between probes while waiting for a node; doubled up to `pollIntervalMs`. */
const FIRST_POLL_MS = 100;
/** First pause after a transient refusal; doubled up to `refusalRetryMaxMs`. */
const FIRST_REFUSAL_RETRY_MS = 250;
/**
 * Pauses after an etcd refusal of the legacy Upgrade by a Talos that leaks an etcd client on each one: before the fix
 * (talos 89e307e58, backported to v1.12.9 and v1.13.4) v1alpha1_server.go Upgrade never closed the client it opened
 * for the mutex and ValidateForUpgrade, so a refusal every few seconds runs etcd out of file descriptors.
 */
const LEAKY_REFUSAL_RETRY_FIRST_MS = 5_000;
const LEAKY_REFUSAL_RETRY_MAX_MS = 60_000;

/** The pause before attempt `attempt + 1` of a refused call: doubling from `firstMs` up to `maxMs`. */
export function refusalPauseMs(attempt: number, firstMs: number, maxMs: number): number {
  return Math.min(maxMs, firstMs * 2 ** Math.min(attempt, 16));
}

/** The legacy Upgrade's sequences, which a killed run may have left running on the node. */
const LEGACY_UPGRADE_SEQUENCES: readonly string[] = ["upgrade", "stageUpgrade"];
/** How many buffered events are read to find such a sequence, and how long the stream may stay quiet meanwhile. */
const TAIL_EVENTS = 200;
const TAIL_QUIET_MS = 300;
/** SequenceEvent actions (machine.SequenceEvent_Action). */
const SEQUENCE_START = 1;

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
  /** The stream has ended (broken: the node went down, or closed). */
  ended = false;
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
        this.ended = true;
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

/**
 * Whether another actor's legacy upgrade sequence is running on the node now (started, neither stopped nor failed,
 * node not booted since), read from the node's event buffer; undefined when the node did not answer at all. Talos answers a second Upgrade while one runs with
 * "sequence not started: locked" (v1alpha1_controller.go Run, ErrLocked from the priority lock, talos v1.13.4): when
 * the running one is an upgrade (a killed run's, still draining), the node is about to reboot into its image.
 */
async function legacyUpgradeInFlight(client: TalosClient, node: string, ourActor: string, boundMs: number, signal?: AbortSignal): Promise<boolean | undefined> {
  const stream = client.events(node, { tailEvents: TAIL_EVENTS }, { signal });
  const running = new Set<string>();
  let answered = false;
  const it = stream[Symbol.asyncIterator]();
  const deadline = Date.now() + boundMs;
  try {
    for (let left = boundMs; left > 0; left = deadline - Date.now()) {
      const next = await Promise.race([it.next(), sleep(Math.min(TAIL_QUIET_MS, left)).then(() => undefined)]);
      if (!next || next.done) break; // quiet: the buffer has been read
      answered = true;
      const e = next.value;
      if (e.type !== "SequenceEvent") continue;
      const p = e.payload;
      if (p.sequence === "initialize" || p.sequence === "boot") running.clear(); // booted since
      else if (LEGACY_UPGRADE_SEQUENCES.includes(p.sequence) && e.actorId && e.actorId !== ourActor) {
        if (p.action === SEQUENCE_START && !p.error?.message) running.add(e.actorId);
        else running.delete(e.actorId);
      }
    }
  } catch {
    // the stream broke: what was read so far still counts
  } finally {
    stream.cancel();
  }
  return answered ? running.size > 0 : undefined;
}

/** One node upgrade's fixed facts and tuning, shared by its steps. */
interface NodeUpgrade {
  client: TalosClient;
  node: string;
  target: string;
  opts: UpgradeNodeOptions;
  signal?: AbortSignal;
  step: NonNullable<UpgradeNodeOptions["onStep"]>;
  pollMs: number;
  firstPollMs: number;
  probeMs: number;
  refusalMaxMs: number;
  leakyFirstMs: number;
  leakyMaxMs: number;
}

function nodeUpgrade(client: TalosClient, node: string, opts: UpgradeNodeOptions, tuning: UpgradeTuning, target: string): NodeUpgrade {
  return {
    client, node, opts, signal: opts.signal, target,
    step: opts.onStep ?? (() => undefined),
    pollMs: tuning.pollIntervalMs ?? 1000,
    firstPollMs: Math.min(tuning.firstPollMs ?? FIRST_POLL_MS, tuning.pollIntervalMs ?? 1000),
    probeMs: tuning.probeTimeoutMs ?? 5000,
    refusalMaxMs: tuning.refusalRetryMaxMs ?? 10000,
    leakyFirstMs: tuning.leakyRefusalRetryFirstMs ?? LEAKY_REFUSAL_RETRY_FIRST_MS,
    leakyMaxMs: tuning.leakyRefusalRetryMaxMs ?? LEAKY_REFUSAL_RETRY_MAX_MS,
  };
}

function checkAbort(u: NodeUpgrade): void {
  if (u.signal?.aborted) throw new TalosError("ABORTED", msg.aborted(u.node), u.node);
}

export async function upgradeNode(client: TalosClient, node: string, opts: UpgradeNodeOptions, tuning: UpgradeTuning = {}): Promise<UpgradeNodeResult> {
  // Where is the node now? (waits through a reboot left over from an interrupted run.) Version and boot id are asked at
  // once, the event stream is opened with them (its hello is in by the time they answer), and the installer image may
  // still be being read from the node meanwhile (its own platform and schematic; checked against the target right
  // after): four round trips on each node's critical path were one after the other (issue 23.2). An image known already
  // is pulled meanwhile too (earlyPull).
  const imageRead = Promise.resolve(opts.image);
  imageRead.catch(() => undefined); // awaited below; not unhandled when the first look fails first
  const u = nodeUpgrade(client, node, opts, tuning,
    typeof opts.image === "string" ? targetVersion(opts.image, opts.targetVersion) : tryNormalizeVersion(opts.targetVersion) ?? opts.targetVersion);
  const { signal, step } = u;
  let from = "";
  let oldBootId = "";
  let looks = 0;
  let image: string;
  let watch = new SequenceWatch(client, node);
  let early = earlyPull(u, opts);
  try {
    await pollUntil(u, Date.now() + opts.nodeTimeoutMs, async (probe) => {
      looks++;
      const [version, bootId] = await Promise.all([client.version(node, probe), client.bootId(node, probe)]);
      from = version.tag;
      oldBootId = bootId;
      return true;
    });
    refuseBeforeNodeRouting(node, from);
    image = await imageRead;
    u.target = targetVersion(image, opts.targetVersion);
  } catch (err) {
    watch.close();
    early?.cancel();
    throw err;
  }
  const { target } = u;
  if (sameVersion(from, target)) {
    watch.close();
    early?.cancel();
    return { path: "none", fromVersion: from, toVersion: from, oldBootId, newBootId: oldBootId };
  }
  if (looks > 1 || watch.ended) {
    // Opened while the node was down: that stream broke (or will); one opened now follows the node as it is.
    watch.close();
    watch = new SequenceWatch(client, node);
  }
  let path: "lifecycle" | "legacy" = supportsLifecycleApi(from) && supportsLifecycleApi(target) ? "lifecycle" : "legacy";
  if (looks > 1 || path === "legacy") {
    // Sent before a boot the look waited for (what it pulled may be gone), or to a node without ImageService: not used.
    early?.cancel();
    early = undefined;
  }

  const staged = path === "legacy" && needsStagedUpgrade(from);
  /** Set when the answer to the rebooting action was lost: the action may or may not have started. */
  let lostAnswer: LostAnswer | undefined;
  /** The actor id of our legacy Upgrade, and whether a LOCKED answer to it met another run's upgrade in flight. */
  let ourActor = "";
  let otherUpgradeInFlight = false;
  // The stream must follow the node before the action that reboots it (its events name our actor); pull, install and
  // the drain need it not, so it is awaited right before that action, not before the pull (issue 23: the hello of a
  // busy apid was on every node's critical path). Events only sharpen errors: never blocked on past probeMs.
  const streamFollowing = () => Promise.race([watch.ready, sleep(u.probeMs, signal)]);
  try {
    checkAbort(u);
    if (path === "lifecycle") {
      step("pulling", image);
      try {
        // Pulled already beside the first look, or pulled now (also when that pull failed: the node was down, ...).
        if (!(early && (await early.pulled))) await client.pull(node, image, { signal, timeoutMs: opts.nodeTimeoutMs });
      } catch (err) {
        if ((err as TalosError).code !== "UNIMPLEMENTED") throw err;
        path = "legacy"; // the node does not have the new API after all (terraform-provider-talos does the same)
      }
    }
    if (path === "lifecycle") {
      step("installing", image);
      const res = await untilAccepted(u, () => client.lifecycleUpgrade(node, image, { signal, timeoutMs: opts.nodeTimeoutMs }));
      if (res.exitCode !== 0) {
        throw new TalosError("INSTALLER_EXIT", msg.installerExit(node, res.exitCode, from, res.log.slice(-3).join(" | ")), node);
      }
      checkAbort(u);
      if (opts.beforeReboot) {
        step("draining");
        await opts.beforeReboot({ installed: true });
      }
      await streamFollowing();
      checkAbort(u);
      step("rebooting");
      const sent = await sendAction(u, "Reboot", () => client.reboot(node, 0, { signal }));
      if ("answer" in sent) watch.follow(sent.answer.actorId, ["reboot"]);
      else lostAnswer = sent.lost;
    } else {
      // The legacy Upgrade drains with Talos' own drain (refusals ignored, rebooting anyway after 5 minutes) and
      // reboots by itself: the caller drains first, PDBs honoured, and etcd is asked right before (issue 18.2, 18.3).
      if (opts.beforeReboot) {
        step("draining");
        await opts.beforeReboot({ installed: false });
      }
      await streamFollowing();
      checkAbort(u);
      step("installing", image);
      const sent = await sendAction(u, "Upgrade", () => client.upgrade(node, { image, preserve: true, stage: staged, force: false }, {
        signal, timeoutMs: opts.nodeTimeoutMs,
      }), !preserveSkipsEtcdChecks(from));
      if ("answer" in sent) {
        ourActor = sent.answer.actorId;
        watch.follow(sent.answer.actorId, staged ? ["stageUpgrade"] : ["upgrade"]);
      } else lostAnswer = sent.lost;
      step("rebooting");
    }

    step("waiting");
    const facts = { node, target, staged };
    let last: LastSeen = { seen: "nothing" };
    let newBootId = "";
    await pollUntil(u, Date.now() + opts.nodeTimeoutMs, async (probe) => {
      // A LOCKED legacy Upgrade is decided by what runs on the node (below); every other sequence error at once.
      const lockedOut = watch.error?.code === "LOCKED" && path === "legacy";
      if (watch.error && !lockedOut) throw watch.error;
      // Boot id and version at once: one round trip when the node is back (issue 23). The version may have been answered
      // before the boot id by the boot before (or not at all, the node still down then): anything but the target is
      // asked again, after the boot id, before it decides.
      const versionNow = client.version(node, probe).then((v) => v.tag, () => undefined);
      const bootId = await client.bootId(node, probe);
      const booted = bootId !== oldBootId;
      if (!booted && lockedOut && !otherUpgradeInFlight) otherUpgradeInFlight = await lockedOutByUpgradeInFlight(u, watch.error!, ourActor, probe.timeoutMs);
      const meaning = lookMeaning({ ...facts, lockedOut }, booted ? { booted, version: await bootedVersion(u, versionNow, probe) } : { booted });
      if (meaning.outcome === "failed") throw meaning.error;
      if (meaning.outcome === "waiting") {
        last = meaning.last;
        return false;
      }
      newBootId = bootId;
      return true;
    }, (detail, unanswered) => (last = afterFailedLook(last, detail, unanswered)), () => {
      throw waitTimeoutError(facts, last, lostAnswer, opts.nodeTimeoutMs);
    }, opts.nodeChanged);
    step("back", target);
    return { path, fromVersion: from, toVersion: target, oldBootId, newBootId };
  } finally {
    watch.close();
    early?.cancel();
  }
}

/** A pull of `opts.image` sent before the first look: whether it succeeded (never throws), and how to stop it. */
interface EarlyPull {
  pulled: Promise<boolean>;
  cancel(): void;
}

/**
 * Sends the pull at once when the image is known and the node is expected (its Node's report) on a version with
 * ImageService, as is the target: the pull then overlaps the first look instead of following it (issue 23). Pulling
 * changes nothing the node runs or boots, so a pull the look finds unneeded (the node is on the target, or on the
 * legacy path) is only stopped, and one sent before a reboot the look waited for is sent again. Node routing needs
 * Talos >= v1.2 (refuseBeforeNodeRouting): a node whose kubelet reported >= v1.13 does not run < v1.2, and an endpoint
 * that old has no ImageService, so the call could not land on another node.
 */
function earlyPull(u: NodeUpgrade, opts: UpgradeNodeOptions): EarlyPull | undefined {
  const { image, expectedVersion } = opts;
  if (typeof image !== "string" || expectedVersion === undefined || sameVersion(expectedVersion, u.target)) return undefined;
  if (!supportsLifecycleApi(expectedVersion) || !supportsLifecycleApi(u.target)) return undefined;
  const stop = new AbortController();
  const signal = u.signal ? AbortSignal.any([u.signal, stop.signal]) : stop.signal;
  const pulled = u.client.pull(u.node, image, { signal, timeoutMs: opts.nodeTimeoutMs }).then(() => true, () => false);
  return { pulled, cancel: () => stop.abort() };
}

/**
 * The version of a node seen booted: the one asked beside its boot id when it is the target; otherwise asked again now
 * (that answer may have come from the boot before, or not at all), so only a version read after the new boot decides.
 */
async function bootedVersion(u: NodeUpgrade, asked: Promise<string | undefined>, probe: { signal?: AbortSignal; timeoutMs: number }): Promise<string> {
  const first = await asked;
  return first !== undefined && sameVersion(first, u.target) ? first : (await u.client.version(u.node, probe)).tag;
}

/**
 * A LOCKED answer to our legacy Upgrade while another run's upgrade is still running on the node (a killed run's,
 * draining): not a failure — that upgrade reboots the node, and the version it boots decides. True when such an
 * upgrade runs; throws the LOCKED error when nothing of the kind runs; false when the node could not be asked (going
 * down?): the next look decides, or its new boot does.
 */
async function lockedOutByUpgradeInFlight(u: NodeUpgrade, err: TalosError, ourActor: string, boundMs: number): Promise<boolean> {
  const inFlight = await legacyUpgradeInFlight(u.client, u.node, ourActor, boundMs, u.signal);
  if (inFlight === false) throw err; // nothing that will reboot the node: the lock is someone else's sequence
  if (inFlight) u.step("waiting", msg.otherUpgradeInFlight());
  return inFlight === true;
}

/**
 * Sends a call Talos may refuse for now; a transient refusal (upgrade mutex, another installation in progress,
 * etcd not healthy yet) proves the call did not take, so it is sent again after a pause, until nodeTimeout.
 * `leaky`: each etcd refusal costs the node an etcd client (legacy Upgrade on a Talos before the fix), so those are
 * retried slowly, and not once more right at the deadline.
 */
async function untilAccepted<T>(u: NodeUpgrade, send: () => Promise<T>, leaky = false): Promise<T> {
  const { node, target, opts, signal } = u;
  const refusalDeadline = Date.now() + opts.nodeTimeoutMs;
  for (let attempt = 0; ; attempt++) {
    checkAbort(u);
    try {
      return await send();
    } catch (err) {
      if (!isTransientRefusal(err)) throw err;
      const e = err as TalosError;
      const slow = leaky && (e.code === "MUTEX_BUSY" || e.code === "ETCD_UNHEALTHY");
      const left = refusalDeadline - Date.now();
      const wanted = slow ? refusalPauseMs(attempt, u.leakyFirstMs, u.leakyMaxMs) : refusalPauseMs(attempt, FIRST_REFUSAL_RETRY_MS, u.refusalMaxMs);
      if (slow && wanted >= left) await sleep(Math.max(0, left), signal); // no last refusal (and leak) at the deadline
      if (left <= 0 || (slow && wanted >= left)) {
        checkAbort(u);
        throw new TalosError("TIMEOUT", msg.refusedUntilTimeout(node, target, opts.nodeTimeoutMs, e.detail ?? e.message), node);
      }
      const pause = Math.min(wanted, left);
      u.step("installing", slow ? msg.retryingLeakyRefusal(e.detail ?? e.message, pause) : msg.retryingRefusal(e.detail ?? e.message, pause));
      await sleep(pause, signal);
    }
  }
}

/** How a rebooting action went: its answer, or the answer lost after the request may have reached the node. */
type SendOutcome<T> = { answer: T } | { lost: LostAnswer };

/**
 * Sends an action that reboots the node (Reboot, legacy Upgrade). Its answer, or `lost` when the answer was lost
 * after the request may have reached the node: then only the boot id can tell, and the action is not sent again. A
 * request that reached no endpoint at all never left, and is sent again within nodeTimeout.
 */
async function sendAction<T>(u: NodeUpgrade, action: string, send: () => Promise<T>, leaky = false): Promise<SendOutcome<T>> {
  const { node, opts, signal } = u;
  const actionDeadline = Date.now() + opts.nodeTimeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return { answer: await untilAccepted(u, send, leaky) };
    } catch (err) {
      const e = classify(err, node, action);
      if (e.code === "ABORTED" || !e.retryable || isTransientRefusal(e)) throw e;
      if (e.unsent) {
        // never delivered (no endpoint, or apid's proxy could not reach the node): sending again is safe
        if (Date.now() >= actionDeadline) throw new TalosError("TIMEOUT", msg.notDelivered(node, action, opts.nodeTimeoutMs, e.detail ?? e.message), node);
        await sleep(Math.min(u.pollMs, FIRST_POLL_MS * 2 ** Math.min(attempt, 16)), signal);
        checkAbort(u);
        continue;
      }
      return { lost: { action, detail: e.detail ?? e.message } };
    }
  }
}

/**
 * Calls `probe` until it returns true; retryable errors (node down) are waited out until `deadline`, other errors
 * are thrown. `onDown` sees each retryable error (and whether it was a look that got no answer in time); `onTimeout`
 * throws the timeout error. `wake` (the caller's `nodeChanged`) cuts a pause short: asked before each look, so a change
 * that lands while the look is in flight still counts.
 */
async function pollUntil(
  u: NodeUpgrade,
  deadline: number,
  probe: (o: { signal?: AbortSignal; timeoutMs: number }) => Promise<boolean>,
  onDown?: (detail: string, unanswered: boolean) => void,
  onTimeout?: () => never,
  wake?: (signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const { node, target, opts, signal } = u;
  let lastErr: TalosError | undefined;
  for (let attempt = 0; ; attempt++) {
    checkAbort(u);
    const left = deadline - Date.now();
    if (left <= 0) {
      if (onTimeout) onTimeout();
      throw new TalosError("TIMEOUT", msg.notBack(node, target, opts.nodeTimeoutMs,
        lastErr ? msg.lastDown(lastErr.message) : msg.lastNothing()), node);
    }
    const look = new AbortController();
    const pauseEnds = signal ? AbortSignal.any([signal, look.signal]) : look.signal;
    if (wake) void wake(pauseEnds).then(() => look.abort(), () => undefined);
    try {
      try {
        if (await probe({ signal, timeoutMs: Math.min(u.probeMs, left) })) return;
      } catch (err) {
        const e = classify(err, node, "probe");
        if (!e.retryable || e.code === "ABORTED") throw e;
        // A last probe cut short by our own deadline says nothing about the node: keep the error seen before it.
        const cutShort = e.code === "DEADLINE_EXCEEDED" && left < u.probeMs && lastErr !== undefined;
        if (!cutShort) {
          lastErr = e;
          onDown?.(e.message.replace(/^talos: node \S+: probe: /, ""), e.code === "DEADLINE_EXCEEDED");
        }
      }
      // Backoff from 100 ms up to pollMs (was a flat pollMs: up to a whole interval late for every node).
      const pause = Math.min(u.pollMs, u.firstPollMs * 2 ** Math.min(attempt, 16));
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())), pauseEnds);
    } finally {
      look.abort(); // ends the wake's wait
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
