// The rollout loop over the two ports. Level-based: every wave starts from the live cluster (machines are re-read and
// re-planned), so an interrupted run resumes with the first node not at the target and never upgrades a node twice.
// The named parts: hold.ts (the gate before each wave), node.ts (one node's upgrade), resume.ts (what an interrupted
// run left), cleanup.ts (the end of every run), context.ts (status, stop signal, live machines). Everything the user
// sees is built by the pure core (plan, gate, status, messages).

import type { DrainMode, EtcdQuorumLoss, HealthcheckJob, KubeApi, Lease, Machine, TalosApi } from "./ports";
import type { MaintenanceSchedule } from "../schedule";
import { deadline, systemClock, type Clock } from "./clock";
import { cleanUp } from "./cleanup";
import { ConditionWatch, type ConditionGate } from "./conditions";
import { runNodeHook, type NodeHooks } from "./hooks";
import { soak } from "./soak";
import { RunContext, Stop, errorText } from "./context";
import { holdGate } from "./hold";
import { upgradeNode } from "./node";
import { convergedVersion, detectMode, planRollout, type Plan, type RolloutStrategy, type Wave } from "./plan";
import { releaseOwnCordons } from "./resume";
import { checkWindow, WaitForWindow } from "./window";
import { initialStatus, type StatusEvent, type UpgradeStatus } from "./status";
import * as msg from "./messages";
import { sameVersion } from "../version";

export { systemClock, type Clock } from "./clock";

export interface RunOptions {
  cluster: string;
  /** Lease holder identity (e.g. "pulumi/<stack>/<urn>@<host>"). */
  holder: string;
  targetVersion: string;
  /**
   * Installer image for a machine, e.g. `ghcr.io/siderolabs/installer:v1.13.2` — asked right before its upgrade, so it
   * can be derived from the node's own platform and schematic (Omni's rule).
   */
  installerImage: (machine: Machine, targetVersion: string) => string | Promise<string>;
  healthchecks: readonly HealthcheckJob[];
  strategy?: RolloutStrategy;
  /** The version the cluster last converged to (drives revert detection). */
  lastUpgradeVersion?: string;
  /** Longest a wave may wait for readiness plus passing healthchecks (a running check is cut short at it). */
  holdTimeoutMs: number;
  /** Longest one node may take from start of its upgrade until Ready on the target. */
  nodeTimeoutMs: number;
  /**
   * Before a node's reboot: "always" drains it (today's behaviour), "never" only cordons it, "auto" (default) drains it
   * unless no other node could take its pods.
   */
  drain?: DrainMode;
  /**
   * "allow": a control plane may go down although etcd loses quorum for its reboot (2 control planes), every other
   * etcd rule kept; default "refuse".
   */
  etcdQuorumLoss?: EtcdQuorumLoss;
  /** Drain budget per node (default: nodeTimeoutMs). */
  drainTimeoutMs?: number;
  /** Poll interval while waiting for Ready (default 2 s). */
  readyPollMs?: number;
  /** Minimum spacing of status mirror writes (default 5 s); the final status is always written. */
  statusWriteIntervalMs?: number;
  leaseDurationSeconds?: number;
  /** A Lease the caller already holds (a path's steps run under one): used as is, and not released at the end. */
  lease?: Lease;
  /** Cancels before the next node (its reason, an Error or a string, is shown); nodes already in flight finish. */
  signal?: AbortSignal;
  clock?: Clock;
  /** The status to continue from (e.g. read back from the mirror); default: a fresh idle status. */
  status?: UpgradeStatus;
  onStatus?: (status: UpgradeStatus) => void;
  /**
   * Progress lines: a transition's line when `onEvent` is not given (onEvent carries it otherwise), and the lines no
   * transition carries (a path step starting, a leftover cordon lifted) always.
   */
  onProgress?: (line: string) => void;
  /** Every transition with the status after it and its progress line (undefined for silent ones). */
  onEvent?: (event: StatusEvent, status: UpgradeStatus, line: string | undefined) => void;
  /** Where problems the run survives are reported (mirror writes, sweeps, lease release); default onProgress. */
  onWarning?: (line: string) => void;
  /** Watch-driven CEL conditions; all must hold, with the healthchecks, before each wave (evaluated on watch events). */
  conditions?: readonly ConditionGate[];
  /** After a wave's nodes are back and Ready: at least this long with every condition holding before the next wave. */
  soakMs?: number;
  /** No node starts outside these windows; at a closed one the run ends Waiting, saying when the next one opens. */
  schedule?: MaintenanceSchedule;
  /** Jobs run before each node goes down and after it is back (also when it failed). */
  hooks?: NodeHooks;
  /** After the drain (>= 1.13 path): bound of the wait for the node's VolumeAttachments to detach; 0 = no wait. */
  volumeDetachTimeoutMs?: number;
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

/** The cluster's rollout Lease for `opts.holder`: refused while another holder has it (one rollout per cluster). */
export function acquireRolloutLease(kube: KubeApi, opts: Pick<RunOptions, "cluster" | "holder" | "leaseDurationSeconds">): Promise<Lease> {
  return kube.acquireLease({
    cluster: opts.cluster,
    holder: opts.holder,
    ...(opts.leaseDurationSeconds !== undefined ? { durationSeconds: opts.leaseDurationSeconds } : {}),
  });
}

export async function runRollout(kube: KubeApi, talos: TalosApi, opts: RunOptions): Promise<UpgradeStatus> {
  const clock = opts.clock ?? systemClock;
  const lease = opts.lease ?? await acquireRolloutLease(kube, opts);
  const ctx = new RunContext(kube, talos, opts, clock, lease,
    opts.status ?? initialStatus(opts.cluster, { lastUpgradeVersion: opts.lastUpgradeVersion }));
  // Read before this run's first write replaces it: which nodes a previous run left in flight.
  const previous = opts.status ?? ((await kube.readStatus(opts.cluster).catch(() => undefined)) as UpgradeStatus | undefined);
  // One watch per condition for the whole run: the gate and the soak read the current verdicts at once.
  const conditions = opts.conditions?.length ? new ConditionWatch(kube, opts.conditions) : undefined;
  return runToTheEnd(ctx, () => rollWaves(ctx, previous, conditions), conditions, opts.lease === undefined);
}

/**
 * Runs `roll` and ends the run as every rollout ends (the Kubernetes one too): Done, Waiting at a closed window, or
 * Failed with a RolloutError; then cleans up (runner Jobs, own cordons, the last status, the Lease unless the caller's).
 */
export async function runToTheEnd(
  ctx: RunContext, roll: () => Promise<void>, conditions: ConditionWatch | undefined, releaseLease: boolean,
): Promise<UpgradeStatus> {
  try {
    await roll();
    await ctx.emit({ type: "RunFinished", at: ctx.now() }, true, true);
    return ctx.status;
  } catch (e) {
    if (e instanceof WaitForWindow) {
      await ctx.emit({ type: "RunWaiting", at: ctx.now(), reason: e.message }, true, true);
      return ctx.status;
    }
    const reason = e instanceof Stop ? e.message : errorText(e);
    await ctx.emit({ type: "RunFailed", at: ctx.now(), reason }, true, true);
    // The thrown message is the whole reason (what failed, where, what to do); status.error is Omni's single-line,
    // 256-byte form of it, which would cut off the advice.
    throw new RolloutError(reason, ctx.status);
  } finally {
    conditions?.stop();
    await cleanUp(ctx, { releaseLease });
  }
}

/** The hold cleared `held` (its control plane, or workers); `next` may only go when it is the same kind of wave. */
function sameWaveKind(held: Wave, next: Wave): boolean {
  const cp = (w: Wave) => w.machines.find((m) => m.role === "controlplane")?.name;
  return cp(held) === cp(next);
}

/**
 * Nodes a previous run left armed (installed, not rebooted: status `armed`) that still run another version: shown
 * armed again in this run's status. An upgrade finishes them in order like any node not on the target; what is left
 * armed with another version than the target when the waves are done is disarmed (issue 18.4).
 */
async function stillArmed(ctx: RunContext, previous: UpgradeStatus | undefined, live: readonly Machine[]): Promise<Map<string, string>> {
  const armed = new Map<string, string>();
  for (const m of previous?.machines ?? []) {
    const node = live.find((x) => x.name === m.name);
    if (!m.armed || !node || sameVersion(node.talosVersion, m.armed)) continue;
    armed.set(m.name, m.armed);
    await ctx.emit({ type: "NodeArmed", at: ctx.now(), node: m.name, version: m.armed });
  }
  return armed;
}

/**
 * Installs the version it runs again on every node still armed with another version (a revert, or a run that found
 * the cluster done), without rebooting it: its next reboot, planned or not, boots what it runs. A node the run upgraded
 * meanwhile is no longer armed. Bounded per node by nodeTimeout; a failure fails the run naming the node.
 */
async function disarm(ctx: RunContext, armed: ReadonlyMap<string, string>): Promise<void> {
  for (const [name, version] of armed) {
    if (ctx.status.machines.find((m) => m.name === name)?.armed === undefined) continue; // upgraded by this run
    const node = await ctx.machine(name);
    if (!node || !sameVersion(node.talosVersion, ctx.opts.targetVersion) || sameVersion(version, ctx.opts.targetVersion)) continue;
    const bound = deadline(ctx.clock, ctx.now() + ctx.opts.nodeTimeoutMs, [ctx.stop]);
    try {
      const image = await ctx.opts.installerImage(node, ctx.opts.targetVersion);
      await ctx.talos.reinstall(node.address, { image, timeoutMs: ctx.opts.nodeTimeoutMs, signal: bound.signal });
    } catch (e) {
      throw new Stop(msg.reasonCannotDisarm(name, version, errorText(e)));
    } finally {
      bound.dispose();
    }
    await ctx.emit({ type: "NodeDisarmed", at: ctx.now(), node: name, version: ctx.opts.targetVersion }, true);
  }
}

/** How long Talos is given to say which version a not-Ready node runs. */
const CONFIRM_PROBE_MS = 5000;

/**
 * The machines, each not-Ready one that shows the target with its version confirmed by Talos. A Node that is not Ready
 * still shows what its kubelet last reported: a node a failed run took down to boot another version, and that never
 * came back, looks converged while it may come back on that other version (found by scripts/trials/never-worse.ts: a
 * revert reported Done with a worker still down on its way to the new version). Unconfirmed, its version is unknown:
 * it is planned, set aside when its turn comes, and named in the reason the run ends with. `unconfirmed` keeps the
 * nodes Talos could not answer for, so each is asked once per run.
 */
async function confirmNotReady(ctx: RunContext, machines: Machine[], unconfirmed: Set<string>): Promise<Machine[]> {
  const toConfirm = (m: Machine) => !m.ready && m.talosVersion !== undefined && sameVersion(m.talosVersion, ctx.opts.targetVersion);
  // Usually none (read twice per wave, 1,000 machines at 1,000 nodes): the list as it is, without a promise per machine.
  if (!machines.some(toConfirm)) return machines;
  return Promise.all(machines.map(async (m) => {
    if (!toConfirm(m)) return m;
    if (!unconfirmed.has(m.name)) {
      try {
        return { ...m, talosVersion: await ctx.talos.version(m.address, { signal: AbortSignal.timeout(CONFIRM_PROBE_MS) }) };
      } catch {
        unconfirmed.add(m.name);
      }
    }
    return { ...m, talosVersion: undefined };
  }));
}

/**
 * Plans from the live cluster before every wave, holds at the gate (upgrades only), upgrades the wave. Machines that
 * are not ready when their turn comes are set aside, so one dead node slows the rollout instead of freezing it; the
 * run then ends unconverged, naming them.
 */
async function rollWaves(ctx: RunContext, previous: UpgradeStatus | undefined, conditions: ConditionWatch | undefined): Promise<void> {
  const { opts } = ctx;
  const unconfirmed = new Set<string>();
  const live = async () => confirmNotReady(ctx, await ctx.machines(), unconfirmed);
  let machines = await live();
  await releaseOwnCordons(ctx, machines, "leftover");
  // A first run records the version the cluster converged to, so setting the version back after it failed part way
  // is a revert (ungated), never an upgrade held by the very checks that fail.
  const lastUpgradeVersion = opts.lastUpgradeVersion || convergedVersion(machines);
  const mode = detectMode(machines, opts.targetVersion, lastUpgradeVersion);
  const forced = mode === "reverting" ? "reverting" : "upgrading";
  const setAside = new Set<string>();
  const planFor = (ms: Machine[]): Plan =>
    planRollout({
      machines: ms,
      targetVersion: opts.targetVersion,
      ...(opts.strategy ? { strategy: opts.strategy } : {}),
      healthchecks: [...opts.healthchecks.map((c) => c.id), ...(opts.conditions ?? []).map((c) => c.id)],
      ...(lastUpgradeVersion !== undefined ? { lastUpgradeVersion } : {}),
      mode: forced,
      setAside: [...setAside],
    });
  // Nodes an interrupted run left mid-upgrade: waited for (bounded) before the next wave, never set aside.
  const inFlight = new Set((previous?.machines ?? []).filter((m) => m.state === "upgrading").map((m) => m.name));
  await ctx.emit({ type: "RunStarted", at: ctx.now(), plan: planFor(machines) }, true);
  const armed = await stillArmed(ctx, previous, machines);

  const attempted = new Set<string>();
  let lastBackAt: number | undefined;
  for (let waveNo = 1; ; waveNo++) {
    machines = await live();
    const plan = planFor(machines);
    const wave = plan.waves[0];
    if (!wave) break;
    const repeat = wave.machines.find((m) => attempted.has(m.name));
    // A node this run brought back that is down again shows no version (confirmNotReady): it went down, it did not
    // come back on another version.
    if (repeat) {
      throw new Stop(!repeat.ready && repeat.from === undefined
        ? msg.reasonNodeDownAgain(repeat.name, plan.target)
        : msg.reasonNodeWrongVersion(repeat.name, repeat.from, plan.target));
    }
    ctx.checkStop(wave.machines[0].name);
    const upgrading = forced === "upgrading";
    if (upgrading) {
      // Windows pace upgrades only: a revert (like Omni's, ungated) must always be possible.
      checkWindow(ctx);
      if (lastBackAt !== undefined) await soak(ctx, conditions, wave.machines[0].name, lastBackAt);
    }
    // The wave's installer images are read from its nodes while the gate runs (issue 23): known when the nodes start.
    ctx.prepared.start(wave.machines.flatMap((p) => {
      const m = machines.find((x) => x.name === p.name);
      return m?.ready ? [{ machine: m, target: p.to }] : [];
    }));
    // A revert skips the user's gates, never the safety rules: nodes in flight Ready, the other control planes Ready,
    // etcd's consent before a control plane (issue 18.1: a revert once took a second control plane down).
    await holdGate(ctx, waveNo, wave, inFlight, conditions, { userGates: upgrading });
    // The hold may have lasted long (a node that was rebooting when the run started is back by now, someone may
    // have upgraded a node by hand): upgrade what the live cluster says is next, not what it said before the gate.
    machines = await live();
    const next = planFor(machines).waves[0];
    if (!next || next.machines.some((m) => attempted.has(m.name))) continue; // re-planned at the top (a repeat is reported there)
    if (!sameWaveKind(wave, next)) continue; // a control plane the hold did not clear: held for at the top
    if (upgrading) checkWindow(ctx); // the window may have closed while the gate held
    await ctx.emit({ type: "WaveStarted", at: ctx.now(), wave: waveNo });
    await upgradeWave(ctx, next, machines, attempted, setAside);
    lastBackAt = ctx.now();
    await ctx.emit({ type: "WaveDone", at: ctx.now(), wave: waveNo }, true);
  }
  await disarm(ctx, armed);
  if (setAside.size) {
    const done = ctx.status.machines.filter((m) => m.state === "done" || m.state === "skipped").length;
    throw new Stop(msg.reasonSetAside([...setAside].sort(), done, ctx.status.machines.length));
  }
}

/**
 * Upgrades the wave's nodes in parallel; a failure or a stop keeps the nodes not yet started untouched. A node that
 * is not ready when its turn comes is set aside (a dead node is not upgraded, and does not hold the others).
 */
async function upgradeWave(ctx: RunContext, wave: Wave, live: Machine[], attempted: Set<string>, setAside: Set<string>): Promise<void> {
  const failures: string[] = [];
  await Promise.all(
    wave.machines.map(async (planned) => {
      const machine = live.find((m) => m.name === planned.name)!;
      if (ctx.stop.aborted || failures.length) return; // stop before the next node
      if (!machine.ready) {
        setAside.add(machine.name);
        await ctx.emit({ type: "NodeSetAside", at: ctx.now(), node: machine.name }, true);
        return;
      }
      attempted.add(machine.name);
      let outcome: "upgraded" | "failed" = "upgraded";
      try {
        await runNodeHook(ctx, "beforeNode", machine);
        await upgradeNode(ctx, machine, planned.to);
      } catch (e) {
        outcome = "failed";
        failures.push(errorText(e));
      }
      // Also after a failure (of the node or of beforeNode): the cluster must not stay in maintenance mode.
      try {
        await runNodeHook(ctx, "afterNode", machine, outcome);
      } catch (e) {
        failures.push(errorText(e));
      }
    }),
  );
  if (failures.length) throw new Stop(failures[0]);
  // A stop is noticed at the top of the loop, naming the next node (or not at all when nothing is left).
}
