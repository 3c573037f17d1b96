// The gate-shaping inputs of a TalosUpgrade beyond Omni's healthchecks — condition gates, soak time, maintenance
// windows, beforeNode/afterNode hooks, the volume-detach bound — parsed once: `check` reports every failure naming its
// field (`conditions[0].expression`, `maintenanceWindows[1]`, `hooks.beforeNode.job`, ...), and the rollout takes the
// parsed values from the same function.
import * as fs from "node:fs";
import { compileCondition } from "../conditions";
import { MaintenanceSchedule, parseMaintenanceWindows } from "../schedule";
import { validateNodeHook, type NodeHook } from "../template/hooks";
import { canonical, CheckFailure, hasUnknown, Props, UNKNOWN } from "./common";
import { checkDuration } from "./inputs";
import * as msg from "./messages";

import type { ConditionGate } from "../rollout/conditions";
export type { ConditionGate };

export interface GateInputs {
  conditions: ConditionGate[];
  /** After a node is back and Ready: wait at least this long, and until every gate passes (0 = no soak). */
  soakMs: number;
  /** Unrestricted when no windows are given. */
  schedule: MaintenanceSchedule;
  hooks: { beforeNode?: NodeHook; afterNode?: NodeHook };
  /** Bound of the wait for the node's VolumeAttachments after the drain (0 = do not wait). */
  volumeDetachTimeoutMs: number;
}

export const GATE_KEYS = ["conditions", "conditionIds", "soakTime", "maintenanceWindows", "hooks", "volumeDetachTimeout"] as const;
export const DEFAULT_VOLUME_DETACH = "5m";

/** The top-level property a field path belongs to (`conditions[0].expression` → `conditions`). */
const property = (field: string) => field.split(/[.[]/)[0];

function parseConditions(v: unknown, failures: CheckFailure[]): ConditionGate[] {
  if (v === undefined || v === null || v === UNKNOWN) return [];
  if (!Array.isArray(v)) {
    failures.push({ property: "conditions", reason: msg.conditionsInvalid(0) });
    return [];
  }
  const out: ConditionGate[] = [];
  v.forEach((c: Props, i) => {
    if ((c as unknown) === UNKNOWN || hasUnknown(c)) return;
    if (!c || typeof c.id !== "string" || !c.target || typeof c.expression !== "string") {
      failures.push({ property: "conditions", reason: msg.conditionsInvalid(i) });
      return;
    }
    const spec = Object.fromEntries(["target", "expression", "message", "allowEmpty"].filter((k) => c[k] !== undefined && c[k] !== null).map((k) => [k, c[k]]));
    const r = compileCondition(spec, `conditions[${i}]`);
    for (const f of r.failures) failures.push({ property: "conditions", reason: msg.fieldFailure(f.field, f.message) });
    if (r.compiled) out.push({ id: c.id, compiled: r.compiled });
  });
  return out;
}

function parseHooks(v: unknown, cluster: string, failures: CheckFailure[]): GateInputs["hooks"] {
  if (v === undefined || v === null || v === UNKNOWN || hasUnknown(v)) return {};
  if (typeof v !== "object" || Array.isArray(v)) {
    failures.push({ property: "hooks", reason: msg.hooksInvalid(v) });
    return {};
  }
  const out: GateInputs["hooks"] = {};
  for (const [k, h] of Object.entries(v as Props)) {
    if (h === undefined || h === null) continue;
    if (k !== "beforeNode" && k !== "afterNode") {
      failures.push({ property: "hooks", reason: msg.hooksUnknownKey(k) });
      continue;
    }
    const r = validateNodeHook(h, {
      cluster, baseDir: process.cwd(), readFile: (f) => fs.readFileSync(f), realPath: (f) => fs.realpathSync(f),
    }, `hooks.${k}`);
    for (const f of r.failures) failures.push({ property: "hooks", reason: msg.fieldFailure(f.field, f.message) });
    if (r.hook) out[k] = r.hook;
  }
  return out;
}

/** Parses the gate inputs of TalosUpgrade props; `failures` is empty when every given value is valid. */
export function parseGateInputs(p: Props): { inputs: GateInputs; failures: CheckFailure[] } {
  const failures: CheckFailure[] = [];
  const cluster = typeof p.clusterName === "string" && p.clusterName !== UNKNOWN ? p.clusterName : "cluster";
  const conditions = parseConditions(p.conditions, failures);
  const soakMs = checkDuration("soakTime", p.soakTime, failures, { ms: 0, text: "0s" }) ?? 0;
  let schedule = new MaintenanceSchedule([]);
  if (p.maintenanceWindows !== UNKNOWN && !hasUnknown(p.maintenanceWindows)) {
    const r = parseMaintenanceWindows(p.maintenanceWindows);
    for (const f of r.failures) failures.push({ property: property(f.field), reason: msg.fieldFailure(f.field, f.message) });
    if (r.schedule) schedule = r.schedule;
  }
  const hooks = parseHooks(p.hooks, cluster, failures);
  const volumeDetachTimeoutMs = checkDuration("volumeDetachTimeout", p.volumeDetachTimeout ?? DEFAULT_VOLUME_DETACH, failures, { ms: 0, text: "0s" }) ?? 0;
  return { inputs: { conditions, soakMs, schedule, hooks, volumeDetachTimeoutMs }, failures };
}

/** Plan lines for the gates beyond the healthchecks: the maintenance window, soak, hooks, volume detach. */
export function gatePlanLines(g: GateInputs, now: Date): string[] {
  const lines: string[] = [];
  const window = g.schedule.planLine(now);
  if (window) lines.push(window);
  if (g.soakMs > 0) lines.push(msg.planSoak(g.soakMs));
  if (g.hooks.beforeNode) lines.push(msg.planHook("beforeNode", g.hooks.beforeNode.base.id));
  if (g.hooks.afterNode) lines.push(msg.planHook("afterNode", g.hooks.afterNode.base.id));
  return lines;
}

/**
 * The canonical form of the gate inputs for a TalosUpgrade's rollout key: what gates the rollout, not how it is spelled
 * (durations, window spellings, key order, a hook's YAML string vs object, unset vs empty).
 */
export function gateKey(g: GateInputs, jobContent: (job: Record<string, unknown>) => unknown): string {
  const hook = (h: NodeHook | undefined) => h && { id: h.base.id, timeoutMs: h.timeoutMs, job: jobContent(h.base.job) };
  return canonical({
    conditions: g.conditions
      .map((c) => ({ id: c.id, spec: c.compiled.spec }))
      .sort((a, b) => a.id.localeCompare(b.id)),
    soakMs: g.soakMs,
    windows: g.schedule.key,
    hooks: { beforeNode: hook(g.hooks.beforeNode) ?? null, afterNode: hook(g.hooks.afterNode) ?? null },
    volumeDetachTimeoutMs: g.volumeDetachTimeoutMs,
  });
}
