// Pure rollout planning: which machines are upgraded, in which order, in which waves, and which healthchecks gate
// each wave. PURE: no I/O. Deterministic for the same input.
//
// Rules (Omni §3.4, §3.5, §3.9, extended for a sequential provider):
// - Control planes first, strictly one at a time, before any worker.
// - Workers grouped per role (one group, parallelism `workerParallelism`, default 1) or per machine set
//   (parallelism from `machineSetParallelism[set]`, else `workerParallelism`, else 1); sets in name order.
// - Within a group: names listed in `order` first, in that order; then the rest sorted by name.
// - quota = parallelism − notReady (cluster-wide not-ready machines, Omni's rule), except when reverting; a group whose
//   quota is ≤ 0 still goes one machine per wave instead of waiting (unlike Omni: at 1,000 nodes one dead node would
//   hold the whole rollout until holdTimeout; every wave is still gated).
// - A machine that is itself not ready is planned last in its group; the run sets it aside (does not upgrade it, the
//   plan and status say why) if it is still not ready when its turn comes. Set-aside machines are listed, not planned.
// - Machines already at the target are skipped. Every wave is gated by all healthchecks, except when reverting.

import type { Role } from "./ports";
import * as msg from "./messages";
import { isValidVersion, normalizeVersion, sameVersion } from "../version";

export type RolloutMode = "upgrading" | "reverting" | "done";

/** What planning needs of a machine (a `Machine` from ports.ts fits). */
export interface PlanMachine {
  name: string;
  role: Role;
  /** Running Talos version; undefined if unknown (then the machine is planned, never skipped). */
  talosVersion?: string;
  ready: boolean;
  machineSet: string;
}

export interface RolloutStrategy {
  /** Machines per worker wave (default 1). Control planes are always one at a time. */
  workerParallelism?: number;
  /** Machines per wave for the named worker machine sets; implies grouping workers by machine set. */
  machineSetParallelism?: Record<string, number>;
  /** Group worker waves per role (default) or per machine set (default when `machineSetParallelism` is given). */
  groupWorkersBy?: "role" | "machineSet";
  /** Node names to upgrade first, in this order (within their role / machine set); the rest follow by name. */
  order?: readonly string[];
}

export interface PlanInput {
  machines: readonly PlanMachine[];
  targetVersion: string;
  strategy?: RolloutStrategy;
  /** Healthcheck ids, in evaluation order; they gate every wave unless reverting. */
  healthchecks?: readonly string[];
  /** Version the whole cluster last converged to (status.lastUpgradeVersion); drives revert detection. */
  lastUpgradeVersion?: string;
  /** Force the mode instead of detecting it with `detectMode`. */
  mode?: "upgrading" | "reverting";
  /** Machines the run set aside (not ready when their turn came): listed in `setAside`, not planned. */
  setAside?: readonly string[];
}

export interface PlannedMachine {
  name: string;
  role: Role;
  machineSet: string;
  /** Running version, undefined if unknown. */
  from?: string;
  to: string;
  ready: boolean;
}

export interface Wave {
  /** 1-based position in the plan ("wave 2/4"). */
  index: number;
  role: Role;
  /** Set when workers are grouped per machine set. */
  machineSet?: string;
  machines: PlannedMachine[];
  /** Healthcheck ids that all must pass right before this wave starts; empty when reverting. */
  gatedBy: string[];
}

export interface SkippedMachine {
  name: string;
  role: Role;
  machineSet: string;
  version: string;
}

export interface PlanGroup {
  role: Role;
  machineSet?: string;
  parallelism: number;
  /** parallelism − notReady (not when reverting); ≤ 0 means the group waits for the cluster to be ready. */
  quota: number;
  /** Machines per wave actually planned: max(1, quota). */
  batchSize: number;
}

export interface Plan {
  /** Normalised target ("v1.13.2"). */
  target: string;
  mode: RolloutMode;
  lastUpgradeVersion?: string;
  waves: Wave[];
  skipped: SkippedMachine[];
  /** All machines of the cluster (Omni's `total`). */
  total: number;
  /** Machines still to upgrade (sum over waves). */
  pending: number;
  /** Names of not-ready machines, sorted. */
  notReady: string[];
  groups: PlanGroup[];
  /** Some group's quota is ≤ 0 (it goes one machine at a time). */
  waitingForReady: boolean;
  /** Not-ready machines that still need the upgrade: planned last in their group. */
  notReadyPending: string[];
  /** Machines set aside by the run (not ready when their turn came), sorted. */
  setAside: string[];
  healthchecks: string[];
}

/** Invalid planning input (bad version, parallelism, order); the message says what and how to fix it. */
export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PlanError";
  }
}

/**
 * The version the whole cluster runs when every machine reports the same one; undefined for a mixed or unknown
 * cluster. A first run records it as the last converged version, so setting the version back after a failed first run
 * is a revert (ungated), as in Omni.
 */
export function convergedVersion(machines: readonly Pick<PlanMachine, "talosVersion">[]): string | undefined {
  const first = machines[0]?.talosVersion;
  if (first === undefined || !isValidVersion(first)) return undefined;
  return machines.every((m) => sameVersion(m.talosVersion, first)) ? normalizeVersion(first) : undefined;
}

/**
 * Omni §3.4: every machine at the target → "done"; else the target equals the last converged version → "reverting"
 * (rolling back is never gated and ignores not-ready machines in the quota); else "upgrading".
 */
export function detectMode(
  machines: readonly Pick<PlanMachine, "talosVersion">[],
  target: string,
  lastUpgradeVersion?: string,
): RolloutMode {
  if (machines.every((m) => sameVersion(m.talosVersion, target))) return "done";
  if (lastUpgradeVersion !== undefined && lastUpgradeVersion !== "" && sameVersion(target, lastUpgradeVersion)) {
    return "reverting";
  }
  return "upgrading";
}

function checkParallelism(value: number | undefined, field: string): number {
  if (value === undefined) return 1;
  if (!Number.isInteger(value) || value < 1) throw new PlanError(msg.invalidParallelism(field, value));
  return value;
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The strategy checked: parallelism per group, how workers are grouped, and the order within a group. */
interface CheckedStrategy {
  workerParallelism: number;
  setParallelism: Map<string, number>;
  groupBySet: boolean;
  /** Within a group: names listed in `order` first, in that order; then the rest by name. */
  ordered: (a: PlanMachine, b: PlanMachine) => number;
}

/** Every machine's name, refusing a name listed twice. */
function machineNames(machines: readonly PlanMachine[]): Set<string> {
  const names = new Set<string>();
  for (const m of machines) {
    if (names.has(m.name)) throw new PlanError(msg.duplicateMachine(m.name));
    names.add(m.name);
  }
  return names;
}

function checkStrategy(strategy: RolloutStrategy, names: ReadonlySet<string>): CheckedStrategy {
  const workerParallelism = checkParallelism(strategy.workerParallelism, "workerParallelism");
  const setParallelism = new Map<string, number>();
  for (const [set, p] of Object.entries(strategy.machineSetParallelism ?? {})) {
    setParallelism.set(set, checkParallelism(p, `machineSetParallelism["${set}"]`));
  }
  const groupBySet = (strategy.groupWorkersBy ?? (strategy.machineSetParallelism ? "machineSet" : "role")) === "machineSet";

  const order = new Map<string, number>();
  (strategy.order ?? []).forEach((name, i) => {
    if (order.has(name)) throw new PlanError(msg.duplicateOrderEntry(name));
    if (!names.has(name)) throw new PlanError(msg.unknownOrderEntry(name, [...names].sort()));
    order.set(name, i);
  });
  const ordered = (a: PlanMachine, b: PlanMachine): number => {
    const ia = order.get(a.name), ib = order.get(b.name);
    if (ia !== undefined && ib !== undefined) return ia - ib;
    if (ia !== undefined) return -1;
    if (ib !== undefined) return 1;
    return byName(a, b);
  };
  return { workerParallelism, setParallelism, groupBySet, ordered };
}

/** Machines by name, sorted out: set aside by the run, skipped (at the target), or still to upgrade. */
function sortOut(machines: readonly PlanMachine[], target: string, setAsideByRun: readonly string[]) {
  const skipped: SkippedMachine[] = [];
  const todo: PlanMachine[] = [];
  const asideNames = new Set(setAsideByRun);
  const setAside: string[] = [];
  for (const m of [...machines].sort(byName)) {
    if (asideNames.has(m.name) && !sameVersion(m.talosVersion, target)) {
      setAside.push(m.name);
    } else if (sameVersion(m.talosVersion, target)) {
      skipped.push({ name: m.name, role: m.role, machineSet: m.machineSet, version: m.talosVersion! });
    } else {
      todo.push(m);
    }
  }
  return { skipped, todo, setAside };
}

interface Group {
  role: Role;
  machineSet?: string;
  parallelism: number;
  machines: PlanMachine[];
}

/** The group step: control planes (one group, one at a time), then workers per role or per machine set (by name). */
function groupsInRolloutOrder(todo: readonly PlanMachine[], s: CheckedStrategy): Group[] {
  const groups: Group[] = [];
  const cps = todo.filter((m) => m.role === "controlplane");
  if (cps.length) groups.push({ role: "controlplane", parallelism: 1, machines: cps });
  const workers = todo.filter((m) => m.role !== "controlplane");
  if (workers.length && !s.groupBySet) {
    groups.push({ role: "worker", parallelism: s.workerParallelism, machines: workers });
  } else if (workers.length) {
    const sets = [...new Set(workers.map((m) => m.machineSet))].sort();
    for (const set of sets) {
      groups.push({
        role: "worker",
        machineSet: set,
        parallelism: s.setParallelism.get(set) ?? s.workerParallelism,
        machines: workers.filter((m) => m.machineSet === set),
      });
    }
  }
  return groups;
}

/**
 * The batch step: each group's quota (parallelism − `reduceBy`, the cluster's not-ready machines unless reverting) and
 * its waves of max(1, quota) machines, ready ones in order first, then the not-ready ones; every wave gated by
 * `gatedBy`.
 */
function batchIntoWaves(groupsIn: readonly Group[], reduceBy: number, ordered: CheckedStrategy["ordered"], gatedBy: readonly string[], target: string) {
  const waves: Wave[] = [];
  const groups: PlanGroup[] = [];
  for (const g of groupsIn) {
    const quota = g.parallelism - reduceBy;
    const batchSize = Math.max(1, quota);
    groups.push({
      role: g.role,
      ...(g.machineSet !== undefined ? { machineSet: g.machineSet } : {}),
      parallelism: g.parallelism,
      quota,
      batchSize,
    });
    // Not-ready machines last: by their turn they may be ready again; if not, the run sets them aside.
    const list = [...g.machines.filter((m) => m.ready).sort(ordered), ...g.machines.filter((m) => !m.ready).sort(ordered)];
    for (let i = 0; i < list.length; i += batchSize) {
      waves.push({
        index: waves.length + 1,
        role: g.role,
        ...(g.machineSet !== undefined ? { machineSet: g.machineSet } : {}),
        machines: list.slice(i, i + batchSize).map((m) => ({
          name: m.name,
          role: m.role,
          machineSet: m.machineSet,
          ...(m.talosVersion !== undefined ? { from: m.talosVersion } : {}),
          to: target,
          ready: m.ready,
        })),
        gatedBy: [...gatedBy],
      });
    }
  }
  return { waves, groups };
}

export function planRollout(input: PlanInput): Plan {
  if (!isValidVersion(input.targetVersion)) throw new PlanError(msg.invalidVersion("target version", input.targetVersion));
  const target = normalizeVersion(input.targetVersion);
  const strategy = checkStrategy(input.strategy ?? {}, machineNames(input.machines));

  const mode: RolloutMode =
    input.mode ?? detectMode(input.machines, target, input.lastUpgradeVersion);
  const healthchecks = [...(input.healthchecks ?? [])];
  const notReady = input.machines.filter((m) => !m.ready).map((m) => m.name).sort();
  const reduceBy = mode === "reverting" ? 0 : notReady.length;

  const { skipped, todo, setAside } = sortOut(input.machines, target, input.setAside ?? []);
  const gatedBy = mode === "upgrading" ? healthchecks : [];
  const { waves, groups } = batchIntoWaves(groupsInRolloutOrder(todo, strategy), reduceBy, strategy.ordered, gatedBy, target);

  return {
    target,
    mode: todo.length === 0 ? "done" : mode,
    ...(input.lastUpgradeVersion ? { lastUpgradeVersion: input.lastUpgradeVersion } : {}),
    waves,
    skipped,
    total: input.machines.length,
    pending: todo.length,
    notReady,
    groups,
    waitingForReady: groups.some((g) => g.quota <= 0),
    notReadyPending: todo.filter((m) => !m.ready).map((m) => m.name),
    setAside,
    healthchecks,
  };
}

/** Human lines for `talos-gate plan` and the Pulumi preview diff. */
export function describePlan(plan: Plan): string[] {
  const lines: string[] = [msg.planHeadline(plan)];
  const quotaReduced = plan.groups.some((g) => g.quota < g.parallelism);
  if (plan.notReadyPending.length || quotaReduced) lines.push(msg.planNotReady(plan.notReady, plan.notReadyPending, quotaReduced));
  if (plan.setAside.length) lines.push(msg.planSetAside(plan.setAside));
  for (const w of plan.waves) lines.push(msg.planWaveLine(w, plan.waves.length, plan.mode));
  for (const s of plan.skipped) lines.push(msg.planSkippedLine(s));
  return lines;
}
