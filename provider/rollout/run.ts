// The imperative rollout loop over the two ports. Level-based: every wave starts from the live cluster (machines are
// re-read and re-planned), so an interrupted run resumes with the first node not at the target and never upgrades a
// node twice. The clock is injected; everything the user sees is built by the pure core (plan, gate, status,
// messages).

import type { CheckOutcome, HealthcheckJob, KubeApi, Lease, Machine, NodeUpgradeStep, TalosApi } from "./ports";
import { detectMode, planRollout, type Plan, type RolloutStrategy, type Wave } from "./plan";
import { evaluateGate, type CheckResult } from "./gate";
import { initialStatus, progressLine, reduce, type StatusEvent, type UpgradeStatus } from "./status";
import * as msg from "./messages";
import { sameVersion } from "../version";

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock (the default). */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener("abort", done, { once: true });
    }),
};

export interface RunOptions {
  cluster: string;
  /** Lease holder identity (e.g. "pulumi/<stack>/<urn>@<host>"). */
  holder: string;
  targetVersion: string;
  /** Installer image for a machine, e.g. `ghcr.io/siderolabs/installer:v1.13.2`. */
  installerImage: (machine: Machine, targetVersion: string) => string;
  healthchecks: readonly HealthcheckJob[];
  strategy?: RolloutStrategy;
  /** The version the cluster last converged to (drives revert detection). */
  lastUpgradeVersion?: string;
  /** Longest a wave may wait for readiness plus passing healthchecks. */
  holdTimeoutMs: number;
  /** Longest one node may take from start of its upgrade until Ready on the target. */
  nodeTimeoutMs: number;
  /** Drain budget per node (default: nodeTimeoutMs). */
  drainTimeoutMs?: number;
  /** Poll interval while waiting for Ready (default 2 s). */
  readyPollMs?: number;
  /** Minimum spacing of status mirror writes (default 5 s); the final status is always written. */
  statusWriteIntervalMs?: number;
  leaseDurationSeconds?: number;
  /** Cancels before the next node; nodes already in flight finish. */
  signal?: AbortSignal;
  clock?: Clock;
  /** The status to continue from (e.g. read back from the mirror); default: a fresh idle status. */
  status?: UpgradeStatus;
  onStatus?: (status: UpgradeStatus) => void;
  onProgress?: (line: string) => void;
}

/** A run that ended with phase Failed; `status` is the final status (also mirrored). */
export class RolloutError extends Error {
  constructor(
    message: string,
    readonly status: UpgradeStatus,
  ) {
    super(message);
    this.name = "RolloutError";
  }
}

/** Shortest spacing of the status writes of notable transitions (the port throttles to ~500 ms anyway). */
const FORCED_WRITE_SPACING_MS = 500;

/** How long reading the Nodes is retried before the run fails. */
const LIST_RETRY_MS = 30_000;

/** Internal: ends the run with this reason. */
class Stop extends Error {}

export async function runRollout(kube: KubeApi, talos: TalosApi, opts: RunOptions): Promise<UpgradeStatus> {
  const clock = opts.clock ?? systemClock;
  const readyPollMs = opts.readyPollMs ?? 2000;
  const writeEvery = opts.statusWriteIntervalMs ?? 5000;
  const checkIds = opts.healthchecks.map((c) => c.id);
  let status = opts.status ?? initialStatus(opts.cluster, { lastUpgradeVersion: opts.lastUpgradeVersion });
  // Transitions worth showing at once (a node starts or is back, the gate holds or opens) are still written at most
  // once per `forcedSpacing`, with a trailing write of the newest status: with 50 nodes in flight they come in
  // bursts, and every write snapshots the whole status (1,000 machines → thousands of copies of ~300 KB otherwise).
  const forcedSpacing = Math.min(FORCED_WRITE_SPACING_MS, writeEvery);
  let lastWrite = -Infinity;
  let dirty = false;
  let trailing = false;
  let finished = false;
  let mirrorWarned = false;

  const mirror = async (force: boolean, final = false) => {
    const since = clock.now() - lastWrite;
    if (!final && since < (force ? forcedSpacing : writeEvery)) {
      dirty = true;
      if (force && !trailing) {
        trailing = true;
        void clock.sleep(forcedSpacing - since).then(() => {
          trailing = false;
          if (dirty && !finished) void mirror(true);
        });
      }
      return;
    }
    lastWrite = clock.now();
    dirty = false;
    try {
      await kube.writeStatus(opts.cluster, status);
    } catch (e) {
      if (!mirrorWarned) opts.onProgress?.(msg.progressPrefix(opts.cluster) + msg.mirrorWriteFailed(errorText(e)));
      mirrorWarned = true;
    }
  };
  const emit = async (event: StatusEvent, forceWrite = false, final = false) => {
    status = reduce(status, event);
    const line = progressLine(event, status);
    if (line !== undefined) opts.onProgress?.(line);
    opts.onStatus?.(status);
    await mirror(forceWrite, final);
  };
  const now = () => clock.now();

  const lease: Lease = await kube.acquireLease({
    cluster: opts.cluster,
    holder: opts.holder,
    ...(opts.leaseDurationSeconds !== undefined ? { durationSeconds: opts.leaseDurationSeconds } : {}),
  });
  // Aborted by the caller or when the lease is lost: stop before the next node.
  const stop = anySignal([opts.signal, lease.lost]);
  const stopReason = (beforeNode?: string): string => {
    if (lease.lost.aborted && !opts.signal?.aborted) return msg.reasonLeaseLost(opts.cluster);
    const done = status.machines.filter((m) => m.state === "done" || m.state === "skipped").length;
    return msg.reasonCancelled(beforeNode, done, status.machines.length);
  };
  const checkStop = (beforeNode?: string) => {
    if (stop.aborted) throw new Stop(stopReason(beforeNode));
  };
  // Reading the Nodes is retried for a while (an API server restart must not end a rollout); it is read-only.
  const listWithRetry = async (): Promise<Machine[]> => {
    const deadline = now() + LIST_RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await kube.listMachines();
      } catch (e) {
        if (now() >= deadline || stop.aborted) throw e;
        await clock.sleep(Math.min(5000, 250 * 2 ** attempt), stop);
      }
    }
  };
  // Single flight: the nodes of a parallel wave poll for Ready at the same time; they share one LIST in flight
  // instead of each listing every Node of the cluster (50 concurrent LISTs of 1,000 Nodes otherwise).
  let listing: Promise<Machine[]> | undefined;
  const listMachines = (): Promise<Machine[]> =>
    (listing ??= listWithRetry().finally(() => {
      listing = undefined;
    }));

  // Read before this run's first write replaces it: which nodes a previous run left in flight.
  const previous = opts.status ?? ((await kube.readStatus(opts.cluster).catch(() => undefined)) as UpgradeStatus | undefined);

  try {
    let machines = await listMachines();
    await finishInterrupted(machines, previous);
    const mode = detectMode(machines, opts.targetVersion, opts.lastUpgradeVersion);
    const forced = mode === "reverting" ? "reverting" : "upgrading";
    const planFor = (ms: Machine[]): Plan =>
      planRollout({
        machines: ms,
        targetVersion: opts.targetVersion,
        ...(opts.strategy ? { strategy: opts.strategy } : {}),
        healthchecks: checkIds,
        ...(opts.lastUpgradeVersion !== undefined ? { lastUpgradeVersion: opts.lastUpgradeVersion } : {}),
        mode: forced,
      });
    await emit({ type: "RunStarted", at: now(), plan: planFor(machines) }, true);

    const attempted = new Set<string>();
    let waveNo = 0;
    for (;;) {
      machines = await listMachines();
      const plan = planFor(machines);
      const wave = plan.waves[0];
      if (!wave) break;
      const repeat = wave.machines.find((m) => attempted.has(m.name));
      if (repeat) {
        throw new Stop(msg.reasonNodeWrongVersion(repeat.name, repeat.from, plan.target));
      }
      checkStop(wave.machines[0].name);
      waveNo++;
      let next = wave;
      if (forced === "upgrading") {
        const holdStart = now();
        await waitClusterReady(holdStart, wave.machines[0].name);
        await passGate(waveNo, holdStart, wave.machines[0].name);
        checkStop(wave.machines[0].name);
        // The hold may have lasted long (a node that was rebooting when the run started is back by now, someone may
        // have upgraded a node by hand): upgrade what the live cluster says is next, not what it said before the gate.
        machines = await listMachines();
        const fresh = planFor(machines).waves[0];
        if (!fresh) continue;
        if (fresh.machines.some((m) => attempted.has(m.name))) continue; // reported by the repeat check above
        next = fresh;
      }
      await emit({ type: "WaveStarted", at: now(), wave: waveNo });
      await upgradeWave(next, machines, attempted);
      await emit({ type: "WaveDone", at: now(), wave: waveNo }, true);
    }
    await emit({ type: "RunFinished", at: now() }, true, true);
    return status;
  } catch (e) {
    const reason = e instanceof Stop ? e.message : errorText(e);
    await emit({ type: "RunFailed", at: now(), reason }, true, true);
    // The thrown message is the whole reason (what failed, where, what to do); status.error is Omni's single-line,
    // 256-byte form of it, which would cut off the advice.
    throw new RolloutError(reason, status);
  } finally {
    try {
      await kube.sweepRunners();
    } catch {
      // best effort, like Omni's sweep
    }
    finished = true;
    if (dirty) await mirror(true, true);
    try {
      await lease.release();
    } catch {
      // the lease expires on its own
    }
  }

  /**
   * A previous run that was killed (or failed) while a node was in flight may have left that node cordoned by its
   * drain although the node has since booted the version it was upgraded to; the next run would skip it as done and
   * leave it unschedulable for good. Finish that upgrade like Omni's finalise step: uncordon it. Only nodes the
   * mirrored status shows in flight are touched, so a node an administrator cordoned stays cordoned.
   */
  async function finishInterrupted(live: Machine[], prev: UpgradeStatus | undefined): Promise<void> {
    const inFlight = (prev?.machines ?? []).filter((m) => m.state === "upgrading" || m.state === "failed");
    for (const was of inFlight) {
      const m = live.find((x) => x.name === was.name);
      if (!m || !m.cordoned || !m.ready || !sameVersion(m.talosVersion, was.to)) continue;
      await kube.uncordon(m.name);
      opts.onProgress?.(msg.progressPrefix(opts.cluster) + msg.progressFinishedInterrupted(m.name, was.to));
    }
  }

  async function waitClusterReady(holdStart: number, nextNode: string): Promise<void> {
    let waiting = false;
    for (;;) {
      const notReady = (await listMachines()).filter((m) => !m.ready).map((m) => m.name).sort();
      if (notReady.length === 0) {
        if (waiting) await emit({ type: "ClusterReady", at: now() });
        return;
      }
      if (!waiting) await emit({ type: "WaitingForReady", at: now(), notReady });
      waiting = true;
      if (now() - holdStart >= opts.holdTimeoutMs) throw new Stop(msg.reasonNotReadyTimeout(opts.holdTimeoutMs, notReady));
      await clock.sleep(Math.min(readyPollMs, Math.max(0, holdStart + opts.holdTimeoutMs - now())), stop);
      checkStop(nextNode);
    }
  }

  async function passGate(waveNo: number, holdStart: number, nextNode: string): Promise<void> {
    if (opts.healthchecks.length === 0) return;
    for (let attempt = 1; ; attempt++) {
      await emit({ type: "GateStarted", at: now(), wave: waveNo, attempt, checks: checkIds });
      const results: CheckResult[] = await Promise.all(
        opts.healthchecks.map(async (check): Promise<CheckResult> => {
          // An error running the check (API server unreachable, Job rejected) holds the gate like a failing check and
          // shows in the step; it is retried at the interval and bounded by holdTimeout (Omni retries such errors too,
          // and never opens the gate on one).
          const outcome: CheckOutcome = await kube.runCheck(check, { signal: stop })
            .catch((e): CheckOutcome => ({ state: "failed", reason: errorText(e) }));
          await emit({ type: "CheckFinished", at: now(), id: check.id, outcome });
          return { id: check.id, intervalMs: check.intervalMs, outcome };
        }),
      );
      checkStop(nextNode);
      const verdict = evaluateGate(results);
      if (verdict.open) {
        await emit({ type: "GatePassed", at: now(), wave: waveNo, attempt }, true);
        return;
      }
      const remaining = holdStart + opts.holdTimeoutMs - now();
      if (remaining <= 0) {
        const heldBy = verdict.entries.map((e) => msg.healthcheckContribution(e.id, e.detail)).join("; ");
        throw new Stop(msg.reasonHoldTimeout(opts.holdTimeoutMs, waveNo, status.waves, heldBy));
      }
      // Retry after the shortest interval of the failing checks; the last attempt happens at the hold deadline.
      const retry = Math.min(verdict.retryInMs!, remaining);
      await emit({ type: "GateHeld", at: now(), wave: waveNo, attempt, retryInMs: retry }, true);
      await clock.sleep(retry, stop);
      checkStop(nextNode);
    }
  }

  async function upgradeWave(wave: Wave, live: Machine[], attempted: Set<string>): Promise<void> {
    const failures: string[] = [];
    await Promise.all(
      wave.machines.map(async (planned) => {
        const machine = live.find((m) => m.name === planned.name)!;
        if (stop.aborted || failures.length) return; // cancel before the next node
        attempted.add(machine.name);
        try {
          await upgradeOne(machine, planned.to);
        } catch (e) {
          failures.push(e instanceof Error ? e.message : String(e));
        }
      }),
    );
    if (failures.length) throw new Stop(failures[0]);
    // A cancel is noticed at the top of the loop, naming the next node (or not at all when nothing is left).
  }

  async function upgradeOne(machine: Machine, target: string): Promise<void> {
    const started = now();
    await emit({ type: "NodeStarted", at: started, node: machine.name }, true);
    // Only the node timeout aborts an upgrade in flight; cancellation and a lost lease stop before the next node.
    const nodeCtl = new AbortController();
    const nodeSignal = nodeCtl.signal;
    let timedOut = false;
    const timer = clock.sleep(opts.nodeTimeoutMs, nodeCtl.signal).then(() => {
      if (!nodeCtl.signal.aborted) {
        timedOut = true;
        nodeCtl.abort();
      }
    });
    const fail = async (reason: string): Promise<never> => {
      await emit({ type: "NodeFailed", at: now(), node: machine.name, reason }, true);
      throw new Error(reason);
    };
    // What the node was doing when the node timeout hit (the adapter only sees its signal abort).
    let lastStep: NodeUpgradeStep | undefined;
    let lastStepAt = started;
    try {
      const result = await talos.upgradeNode(machine.address, {
        image: opts.installerImage(machine, target),
        targetVersion: target,
        nodeTimeoutMs: opts.nodeTimeoutMs,
        signal: nodeSignal,
        beforeReboot: () => kube.drain(machine.name, { timeoutMs: opts.drainTimeoutMs ?? opts.nodeTimeoutMs, signal: nodeSignal }),
        onStep: (step, detail) => {
          lastStep = step;
          lastStepAt = now();
          void emit({ type: "NodeStep", at: now(), node: machine.name, step, ...(detail !== undefined ? { detail } : {}) });
        },
      });
      if (!sameVersion(result.toVersion, target)) {
        await fail(msg.reasonNodeWrongVersion(machine.name, result.toVersion, target));
      }
      await kube.uncordon(machine.name);
      lastStep = "back";
      lastStepAt = now();
      // Talos has confirmed the new boot and version; now the Kubernetes Node must be Ready on it. Right after a
      // reboot the Node object can still carry its pre-reboot status (Ready, old osImage) until the kubelet reports
      // again, so an old version on a Ready Node is waited out, and only reported if it persists until nodeTimeout.
      for (;;) {
        const live = kube.readMachine ? await kube.readMachine(machine.name) : (await listMachines()).find((m) => m.name === machine.name);
        const onTarget = live?.talosVersion === undefined || sameVersion(live.talosVersion, target);
        if (live?.ready && onTarget) break;
        if (timedOut || now() - started >= opts.nodeTimeoutMs) {
          await fail(live?.ready && !onTarget
            ? msg.reasonNodeWrongVersion(machine.name, live.talosVersion, target)
            : msg.reasonNotReadyAfterUpgrade(machine.name, opts.nodeTimeoutMs));
        }
        await clock.sleep(readyPollMs, nodeCtl.signal);
      }
      await emit({ type: "NodeBack", at: now(), node: machine.name, version: target }, true);
    } catch (e) {
      if (status.machines.find((m) => m.name === machine.name)?.state === "failed") throw e;
      const detail = errorText(e);
      await fail(
        timedOut
          ? msg.reasonNodeTimeout(machine.name, target, opts.nodeTimeoutMs, msg.nodeTimeoutLastStep(lastStep, now() - lastStepAt))
          : msg.reasonNodeFailed(machine.name, detail),
      );
    } finally {
      nodeCtl.abort();
      await timer;
    }
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** An AbortSignal aborted when any of the given signals aborts. */
function anySignal(signals: ReadonlyArray<AbortSignal | undefined>): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return AbortSignal.any(present);
}
