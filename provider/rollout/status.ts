// The upgrade status as a pure reducer over typed events (timestamps come with the events), plus one progress line
// per transition. PURE: no clock, no I/O. The shape mirrors Omni's TalosUpgradeStatusSpec (phase, status, step, error,
// lastUpgradeVersion, currentUpgradeVersion) and adds per-machine and per-healthcheck state and a bounded history.

import type { NodeUpgradeStep, Role, CheckOutcome } from "./ports";
import type { Plan, RolloutMode } from "./plan";
import * as msg from "./messages";
import { outcomeDetail } from "./gate";
import { recordTimeline } from "./timeline";
import { countMachines, machineNamed, replaceMachine } from "./machineList";

/** `Waiting`: an upgrade stopped at a closed maintenance window; the next run inside a window continues it. */
export type Phase = "Upgrading" | "Done" | "Reverting" | "Failed" | "Waiting";
/** `skipped`: already on the target; `set-aside`: not ready when its turn came, not upgraded by this run. */
export type MachineRunState = "pending" | "upgrading" | "done" | "failed" | "skipped" | "set-aside";
export type CheckState = "RUNNING" | "FAILED" | "PASSED";
export type GateState = "idle" | "checking" | "held" | "waiting-for-ready" | "soaking";

export interface MachineStatus {
  name: string;
  role: Role;
  machineSet?: string;
  /** Version before the upgrade; undefined if unknown. */
  from?: string;
  to: string;
  state: MachineRunState;
  /** Wave the machine belongs to (1-based); undefined for skipped machines. */
  wave?: number;
  /** Last reported step of its upgrade. */
  step?: NodeUpgradeStep;
  /** Version reported when it came back. */
  version?: string;
  started?: string;
  finished?: string;
  durationMs?: number;
  /** Failure reason, single line, truncated. */
  error?: string;
  /**
   * The version installed on the node's disk that it has not booted yet (an upgrade failed after the install): it
   * boots at the node's next reboot, ungated. A later run finishes it, or a revert disarms it (issue 18.4).
   */
  armed?: string;
  /** When each phase of its upgrade began, compactly (provider/rollout/timeline.ts); for `talos-gate report`. */
  marks?: string;
  /** What this upgrade costs beyond the node itself (it was not drained: what goes down with it); shown in the step. */
  note?: string;
}

export interface HealthcheckStatus {
  id: string;
  state: CheckState;
  /** Evaluations started in this run. */
  attempts: number;
  /** What the check contributes to the step ("waiting to complete" or the failure text, truncated); "" if passed. */
  detail: string;
  /** Last failure reason, single line, truncated; kept while the check re-runs, cleared when it passes. */
  lastReason?: string;
  /** Start of the last evaluation (ISO 8601). */
  lastRun?: string;
  /** The spans in which it held the gate, compactly (provider/rollout/timeline.ts); for `talos-gate report`. */
  holds?: string;
}

export interface HistoryEntry {
  at: string;
  event: StatusEvent["type"];
  line: string;
}

export interface UpgradeStatus {
  cluster: string;
  phase: Phase;
  /** Omni's status: "updating machines 2/5", "reverting update 1/3", "updating", "" when Done. */
  status: string;
  /** Omni's step: "current machine: x", "waiting for healthchecks to pass: ...", ... ; "" when Done. */
  step: string;
  /** Why the run failed (phase Failed), single line, truncated; "" otherwise. */
  error: string;
  /** The version the whole cluster last converged to; updated only when the phase becomes Done. */
  lastUpgradeVersion: string;
  /** The target while an upgrade is in flight; "" in Done and Reverting (as Omni). */
  currentUpgradeVersion: string;
  /** Target of the current (or last) run. */
  target: string;
  mode: RolloutMode;
  /** Current wave (1-based), 0 before the first. */
  wave: number;
  waves: number;
  gate: GateState;
  gateAttempt: number;
  heldSince?: string;
  nextRetryAt?: string;
  /** While soaking: when the next node may go at the earliest, and why the soak restarted (if it did). */
  soakUntil?: string;
  soakReason?: string;
  machines: MachineStatus[];
  healthchecks: HealthcheckStatus[];
  startedAt?: string;
  updatedAt?: string;
  finishedAt?: string;
  /** The last `historyLimit` transitions, oldest first. */
  history: HistoryEntry[];
  historyLimit: number;
}

/** A machine's row in the status a TalosUpgrade outputs ("" and 0 where the run has no value yet). */
export interface OutputMachine {
  name: string;
  role: Role;
  from: string;
  to: string;
  state: MachineRunState;
  started: string;
  finished: string;
  durationMs: number;
}

/** A check's row in the status a TalosUpgrade outputs. */
export interface OutputCheck {
  id: string;
  state: CheckState;
  attempts: number;
  lastReason: string;
  lastRun: string;
}

/**
 * The status a TalosUpgrade outputs into Pulumi state, in Omni's words (like `omnictl get talosupgradestatus`); the
 * bounded event history stays in the cluster's status ConfigMap. The SDK's `TalosUpgradeStatus` is checked against it.
 */
export type OutputStatus = Pick<UpgradeStatus, "phase" | "status" | "step" | "error" | "lastUpgradeVersion" | "currentUpgradeVersion"> & {
  machines: OutputMachine[];
  healthchecks: OutputCheck[];
};

export function outputStatus(s: UpgradeStatus): OutputStatus {
  return {
    phase: s.phase, status: s.status, step: s.step, error: s.error,
    lastUpgradeVersion: s.lastUpgradeVersion, currentUpgradeVersion: s.currentUpgradeVersion,
    machines: s.machines.map((m) => ({
      name: m.name, role: m.role, from: m.from ?? "", to: m.to, state: m.state,
      started: m.started ?? "", finished: m.finished ?? "", durationMs: m.durationMs ?? 0,
    })),
    healthchecks: s.healthchecks.map((h) => ({
      id: h.id, state: h.state, attempts: h.attempts, lastReason: h.lastReason ?? "", lastRun: h.lastRun ?? "",
    })),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Events. `at` is epoch milliseconds, supplied by the caller's clock.

export type StatusEvent =
  | { type: "RunStarted"; at: number; plan: Plan }
  | { type: "WaitingForReady"; at: number; notReady: string[] }
  | { type: "ClusterReady"; at: number }
  | { type: "GateStarted"; at: number; wave: number; attempt: number; checks: string[] }
  | { type: "CheckFinished"; at: number; id: string; outcome: CheckOutcome }
  | { type: "GateHeld"; at: number; wave: number; attempt: number; retryInMs: number }
  | { type: "GatePassed"; at: number; wave: number; attempt: number }
  | { type: "WaveStarted"; at: number; wave: number }
  | { type: "NodeStarted"; at: number; node: string }
  | { type: "NodeStep"; at: number; node: string; step: NodeUpgradeStep; detail?: string }
  | { type: "NodeBack"; at: number; node: string; version: string }
  | { type: "NodeFailed"; at: number; node: string; reason: string }
  | { type: "NodeSetAside"; at: number; node: string }
  | { type: "NodeArmed"; at: number; node: string; version: string }
  /** The node reboots without a drain; `note` says what goes down with it (issue 25). */
  | { type: "NodeNotDrained"; at: number; node: string; note: string }
  | { type: "NodeDisarmed"; at: number; node: string; version: string }
  | { type: "WaveDone"; at: number; wave: number }
  | { type: "SoakStarted"; at: number; soakMs: number; untilAt: number }
  | { type: "SoakRestarted"; at: number; reason: string }
  | { type: "SoakDone"; at: number }
  | { type: "HookStarted"; at: number; node: string; phase: string; id: string }
  | { type: "HookFinished"; at: number; node: string; phase: string; id: string; error?: string }
  | { type: "RunFinished"; at: number }
  | { type: "RunFailed"; at: number; reason: string }
  | { type: "RunWaiting"; at: number; reason: string };

export const DEFAULT_HISTORY_LIMIT = 50;

/** A KubernetesUpgrade's status key: its own beside the TalosUpgrade's (the cluster's name), so neither reads the other's. */
export const KUBERNETES_STATUS_SUFFIX = ".kubernetes";
export const kubernetesStatusKey = (cluster: string): string => `${cluster}${KUBERNETES_STATUS_SUFFIX}`;

export function initialStatus(
  cluster: string,
  opts: { lastUpgradeVersion?: string; historyLimit?: number } = {},
): UpgradeStatus {
  return {
    cluster,
    phase: "Done",
    status: "",
    step: "",
    error: "",
    lastUpgradeVersion: opts.lastUpgradeVersion ?? "",
    currentUpgradeVersion: "",
    target: opts.lastUpgradeVersion ?? "",
    mode: "done",
    wave: 0,
    waves: 0,
    gate: "idle",
    gateAttempt: 0,
    machines: [],
    healthchecks: [],
    history: [],
    historyLimit: Math.max(0, Math.floor(opts.historyLimit ?? DEFAULT_HISTORY_LIMIT)),
  };
}

const iso = (at: number): string => new Date(at).toISOString();

/** Machines still to converge (Omni's pendingMachines): pending, in flight or failed. */
export function pendingCount(s: Pick<UpgradeStatus, "machines">): number {
  return countMachines(s.machines, (m) => m.state === "pending" || m.state === "upgrading" || m.state === "failed" || m.state === "set-aside");
}

function statusLine(s: UpgradeStatus): string {
  const total = s.machines.length;
  const pending = pendingCount(s);
  const current = msg.currentMachineNumber(total, pending);
  return s.mode === "reverting" ? msg.statusReverting(current, total) : msg.statusUpdating(current, total, pending);
}

function machineStep(s: UpgradeStatus): string {
  // A failed machine stays "current" (Omni keeps the upgrade lock of a machine whose upgrade failed).
  const current: MachineStatus[] = [];
  for (const m of s.machines) if (m.state === "upgrading" || m.state === "failed") current.push(m);
  if (!current.length) return msg.STEP_NO_MACHINES_UPGRADING;
  const notes = current.filter((m) => m.state === "upgrading" && m.note).map((m) => m.note!);
  return [msg.stepCurrentMachines(current.map((m) => m.name)), ...notes].join("; ");
}

function checksStep(s: UpgradeStatus): string | undefined {
  const entries = s.healthchecks.filter((h) => h.state !== "PASSED").map((h) => ({ id: h.id, detail: h.detail }));
  return entries.length ? msg.healthcheckStep(entries) : undefined;
}

/** Recompute `status` and `step` from the machines, the gate and the phase. */
function derive(s: UpgradeStatus): UpgradeStatus {
  if (s.phase === "Done") return { ...s, status: "", step: "" };
  if (s.phase === "Failed") return s; // frozen at the moment of failure
  if (s.phase === "Waiting") return { ...s, status: statusLine(s) }; // the step says what it waits for
  let step: string;
  if (s.gate === "waiting-for-ready") step = msg.STEP_WAITING_FOR_READY;
  else if (s.gate === "soaking") step = msg.stepSoaking(s.soakUntil ?? "", s.soakReason);
  else if (s.gate === "checking" || s.gate === "held") step = checksStep(s) ?? machineStep(s);
  else step = machineStep(s);
  return { ...s, status: statusLine(s), step };
}

function updateMachine(s: UpgradeStatus, node: string, f: (m: MachineStatus) => MachineStatus): UpgradeStatus {
  return { ...s, machines: replaceMachine(s.machines, node, f) };
}

function upsertCheck(s: UpgradeStatus, id: string, f: (h: HealthcheckStatus) => HealthcheckStatus): UpgradeStatus {
  const existing = s.healthchecks.find((h) => h.id === id);
  if (existing) return { ...s, healthchecks: s.healthchecks.map((h) => (h.id === id ? f(h) : h)) };
  const fresh: HealthcheckStatus = { id, state: "RUNNING", attempts: 0, detail: msg.CHECK_WAITING_TO_COMPLETE };
  return { ...s, healthchecks: [...s.healthchecks, f(fresh)] };
}

function withoutHold(s: UpgradeStatus): UpgradeStatus {
  const { heldSince: _h, nextRetryAt: _n, soakUntil: _u, soakReason: _r, ...rest } = s;
  return rest;
}

function apply(s: UpgradeStatus, e: StatusEvent): UpgradeStatus {
  switch (e.type) {
    case "RunStarted": {
      const p = e.plan;
      const machines: MachineStatus[] = [
        ...p.waves.flatMap((w) =>
          w.machines.map((m): MachineStatus => ({
            name: m.name,
            role: m.role,
            machineSet: m.machineSet,
            ...(m.from !== undefined ? { from: m.from } : {}),
            to: m.to,
            state: "pending",
            wave: w.index,
          })),
        ),
        ...p.skipped.map((m): MachineStatus => ({
          name: m.name,
          role: m.role,
          machineSet: m.machineSet,
          from: m.version,
          to: p.target,
          state: "skipped",
        })),
      ];
      const keep = new Set(p.healthchecks);
      const healthchecks = s.healthchecks.filter((h) => keep.has(h.id)).map((h) => ({ ...h, attempts: 0 }));
      const phase: Phase = p.mode === "done" ? "Done" : p.mode === "reverting" ? "Reverting" : "Upgrading";
      const { finishedAt: _f, ...prev } = withoutHold(s);
      return {
        ...prev,
        phase,
        error: "",
        target: p.target,
        mode: p.mode,
        lastUpgradeVersion: p.mode === "done" ? p.target : (p.lastUpgradeVersion ?? s.lastUpgradeVersion),
        currentUpgradeVersion: p.mode === "upgrading" ? p.target : "",
        wave: 0,
        waves: p.waves.length,
        gate: "idle",
        gateAttempt: 0,
        machines,
        healthchecks,
        startedAt: iso(e.at),
        ...(p.mode === "done" ? { finishedAt: iso(e.at) } : {}),
      };
    }
    case "WaitingForReady":
      return { ...s, gate: "waiting-for-ready" };
    case "ClusterReady":
      return { ...s, gate: "idle" };
    case "GateStarted": {
      let next: UpgradeStatus = { ...s, gate: "checking", gateAttempt: e.attempt, wave: e.wave };
      for (const id of e.checks) {
        next = upsertCheck(next, id, (h) => ({
          ...h,
          state: "RUNNING",
          attempts: h.attempts + 1,
          detail: msg.CHECK_WAITING_TO_COMPLETE,
          lastRun: iso(e.at),
        }));
      }
      return next;
    }
    case "CheckFinished":
      return upsertCheck(s, e.id, (h) => {
        const o = e.outcome;
        if (o.state === "passed") {
          const { lastReason: _r, ...rest } = h;
          return { ...rest, state: "PASSED", detail: "" };
        }
        const detail = msg.truncateReason(outcomeDetail(o));
        if (o.state === "failed") {
          return { ...h, state: "FAILED", detail, lastReason: msg.truncateReason(msg.singleLine(o.reason)) };
        }
        return { ...h, state: "RUNNING", detail };
      });
    case "GateHeld":
      return {
        ...s,
        gate: "held",
        wave: e.wave,
        gateAttempt: e.attempt,
        heldSince: s.heldSince ?? iso(e.at),
        nextRetryAt: iso(e.at + e.retryInMs),
      };
    case "GatePassed":
      return { ...withoutHold(s), gate: "idle", wave: e.wave, gateAttempt: e.attempt };
    case "WaveStarted":
      return { ...s, wave: e.wave };
    case "NodeStarted":
      return updateMachine({ ...withoutHold(s), gate: "idle" }, e.node, (m) => {
        const { finished: _f, durationMs: _d, error: _e, step: _s, note: _n, ...rest } = m;
        return { ...rest, state: "upgrading", started: iso(e.at) };
      });
    case "NodeStep":
      return updateMachine(s, e.node, (m) => ({ ...m, step: e.step }));
    case "NodeBack":
      return updateMachine(s, e.node, ({ armed: _a, ...m }) => ({
        ...m,
        state: "done",
        step: "back",
        version: e.version,
        finished: iso(e.at),
        ...(m.started !== undefined ? { durationMs: e.at - Date.parse(m.started) } : {}),
      }));
    case "NodeFailed":
      return updateMachine(s, e.node, (m) => ({
        ...m,
        state: "failed",
        error: msg.truncateReason(msg.singleLine(e.reason)),
        finished: iso(e.at),
        ...(m.started !== undefined ? { durationMs: e.at - Date.parse(m.started) } : {}),
      }));
    case "NodeSetAside":
      return updateMachine(s, e.node, (m) => ({ ...m, state: "set-aside" }));
    case "NodeArmed":
      return updateMachine(s, e.node, (m) => ({ ...m, armed: e.version }));
    case "NodeDisarmed":
      return updateMachine(s, e.node, ({ armed: _a, ...m }) => m);
    case "NodeNotDrained":
      return updateMachine(s, e.node, (m) => ({ ...m, note: e.note }));
    case "WaveDone":
      return { ...s, wave: e.wave };
    case "SoakStarted":
      return { ...withoutHold(s), gate: "soaking", soakUntil: iso(e.untilAt) };
    case "SoakRestarted":
      return { ...s, gate: "soaking", soakReason: e.reason };
    case "SoakDone":
      return { ...withoutHold(s), gate: "idle" };
    case "HookStarted":
    case "HookFinished":
      return s;
    case "RunFinished":
      return {
        ...withoutHold(s),
        phase: "Done",
        error: "",
        gate: "idle",
        lastUpgradeVersion: s.target,
        currentUpgradeVersion: "",
        mode: "done",
        finishedAt: iso(e.at),
      };
    case "RunWaiting":
      return { ...withoutHold(s), phase: "Waiting", gate: "idle", step: e.reason, error: "", finishedAt: iso(e.at) };
    case "RunFailed":
      return {
        ...withoutHold(s),
        phase: "Failed",
        // Nothing is evaluated any more; step keeps what held it, as Omni keeps the last step.
        gate: "idle",
        error: msg.truncateReason(msg.singleLine(e.reason)),
        finishedAt: iso(e.at),
      };
  }
}

/** Applies one event and records its progress line in the bounded history. Never mutates `status`. */
export function reduce(status: UpgradeStatus, event: StatusEvent): UpgradeStatus {
  const next = derive({ ...recordTimeline(apply(status, event), event), updatedAt: iso(event.at) });
  const line = transitionLine(event, next);
  if (line === undefined || next.historyLimit === 0) return next;
  const history = [...next.history, { at: iso(event.at), event: event.type, line }];
  return { ...next, history: history.slice(Math.max(0, history.length - next.historyLimit)) };
}

/** Folds a sequence of events. */
export function reduceAll(status: UpgradeStatus, events: Iterable<StatusEvent>): UpgradeStatus {
  let s = status;
  for (const e of events) s = reduce(s, e);
  return s;
}

/** The line for a transition without the cluster prefix; `status` is the status after the event. */
export function transitionLine(e: StatusEvent, s: UpgradeStatus): string | undefined {
  switch (e.type) {
    case "RunStarted":
      return msg.progressRunStarted(e.plan.mode, e.plan.pending, e.plan.total, e.plan.target, e.plan.waves.length);
    case "WaitingForReady":
      return msg.progressWaitingForReady(e.notReady);
    case "ClusterReady":
      return msg.PROGRESS_CLUSTER_READY;
    case "GateStarted":
      return msg.progressGateStarted(e.wave, s.waves, e.checks.length, e.attempt);
    case "CheckFinished":
      return e.outcome.state === "passed" ? msg.progressCheckPassed(e.id) : undefined;
    case "GateHeld": {
      const entries = s.healthchecks.filter((h) => h.state !== "PASSED").map((h) => ({ id: h.id, detail: h.detail }));
      return msg.progressGateHeld(entries, e.attempt, e.retryInMs);
    }
    case "GatePassed":
      return msg.progressGatePassed(s.healthchecks.filter((h) => h.state === "PASSED").length, e.attempt);
    case "WaveStarted": {
      const names = s.machines.filter((m) => m.wave === e.wave).map((m) => m.name);
      const first = s.machines.find((m) => m.wave === e.wave);
      const label = first ? first.role : "";
      return msg.progressWaveStarted(e.wave, s.waves, names, label);
    }
    case "NodeStarted": {
      const m = machineNamed(s.machines, e.node);
      const n = countMachines(s.machines, (x) => x.state !== "pending");
      return msg.progressNodeStarted(e.node, m?.from, m?.to ?? s.target, n, s.machines.length);
    }
    case "NodeStep":
      return e.step === "back" ? undefined : msg.progressNodeStep(e.node, e.step, e.detail);
    case "NodeBack": {
      const m = machineNamed(s.machines, e.node);
      return msg.progressNodeBack(e.node, e.version, m?.durationMs);
    }
    case "NodeFailed":
      return msg.progressNodeFailed(e.node, e.reason);
    case "NodeSetAside":
      return msg.progressNodeSetAside(e.node);
    case "NodeArmed":
      return msg.progressNodeArmed(e.node, e.version);
    case "NodeDisarmed":
      return msg.progressNodeDisarmed(e.node, e.version);
    case "NodeNotDrained":
      return undefined; // the warning on the resource's row says it (drain.ts)
    case "WaveDone":
      return msg.progressWaveDone(e.wave, s.waves);
    case "SoakStarted":
      return msg.progressSoakStarted(e.soakMs, iso(e.untilAt));
    case "SoakRestarted":
      return msg.progressSoakRestarted(e.reason);
    case "SoakDone":
      return msg.PROGRESS_SOAK_DONE;
    case "HookStarted":
      return msg.progressHookStarted(e.phase, e.id, e.node);
    case "HookFinished":
      return msg.progressHookFinished(e.phase, e.id, e.node, e.error);
    case "RunFinished":
      return msg.progressRunFinished(
        s.machines.length,
        s.target,
        s.startedAt !== undefined ? e.at - Date.parse(s.startedAt) : undefined,
      );
    case "RunFailed":
      return msg.progressRunFailed(e.reason);
    case "RunWaiting":
      return e.reason;
  }
}

/** One concise, prefixed line per transition ("[talos-gate/prod] wave 2/4 done"); undefined for silent events. */
export function progressLine(event: StatusEvent, status: UpgradeStatus): string | undefined {
  const line = transitionLine(event, status);
  return line === undefined ? undefined : msg.progressPrefix(status.cluster) + line;
}
