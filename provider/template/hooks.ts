// beforeNode / afterNode hooks: a Job run once per node around its upgrade (e.g. set Ceph `noout` before, clear it
// after). A hook is written like a healthcheck (name or idOverride, job or file) and composed with the same runner
// identity (talos-gate-<id>, runner label, config hash, FallbackToLogsOnError), then made per node:
//   - name `talos-gate-<id>-<10 hex of sha256(phase, node)>`, so the hooks of a batch's nodes run side by side and a
//     leftover Job of one node can never count for another;
//   - config hash over the base hash, phase, node, role and outcome, for the same reason;
//   - env on every container and init container: TALOS_GATE_CLUSTER, TALOS_GATE_NODE, TALOS_GATE_NODE_ROLE,
//     TALOS_GATE_PHASE (beforeNode | afterNode) and, for afterNode, TALOS_GATE_NODE_OUTCOME (upgraded | failed);
//   - label talos-gate.dev/hook-phase and annotation talos-gate.dev/node (node names may exceed a label value's 63).
// PURE: files are read through the injected FileOptions.
import { createHash } from "node:crypto";
import { composeHealthcheck, CONFIG_HASH_ANNOTATION, type ComposedHealthcheckJob } from "./compose";
import { MAX_TIMER_MS, MAX_TIMER_TEXT, parseDuration } from "./duration";
import type { JsonObject } from "./jobmanifest";
import * as M from "./messages";
import { validateHealthcheck, type ParseOptions } from "./validate";

export const HOOK_PHASES = ["beforeNode", "afterNode"] as const;
export type HookPhase = (typeof HOOK_PHASES)[number];

export const HOOK_PHASE_LABEL = "talos-gate.dev/hook-phase";
export const HOOK_NODE_ANNOTATION = "talos-gate.dev/node";
export const HOOK_ENV = {
  cluster: "TALOS_GATE_CLUSTER",
  node: "TALOS_GATE_NODE",
  role: "TALOS_GATE_NODE_ROLE",
  phase: "TALOS_GATE_PHASE",
  outcome: "TALOS_GATE_NODE_OUTCOME",
} as const;
const RESERVED_ENV: readonly string[] = Object.values(HOOK_ENV);

/** `-` + 10 hex characters appended to the runner Job name per phase and node. */
const SUFFIX_LENGTH = 11;
const MAX_JOB_NAME = 63;
export const DEFAULT_HOOK_TIMEOUT_MS = 10 * 60_000;

/** A validated hook: the composed base Job (no node yet) and how long one run may take. */
export interface NodeHook {
  base: ComposedHealthcheckJob;
  /** Bound of one hook run (Job created → Complete or Failed); default 10 m. */
  timeoutMs: number;
}

export interface HookNode {
  /** Kubernetes Node name. */
  name: string;
  role: "controlplane" | "worker";
}

export interface NodeHookContext {
  phase: HookPhase;
  cluster: string;
  node: HookNode;
  /** afterNode only: whether the node's upgrade succeeded (afterNode also runs when it failed). */
  outcome?: "upgraded" | "failed";
}

export interface HookFailure {
  /** e.g. `hooks.beforeNode.job`. */
  field: string;
  message: string;
}

const HOOK_KEYS = ["name", "idOverride", "job", "file", "timeout"];

function containersOf(job: Record<string, unknown>): JsonObject[] {
  const podSpec = ((job.spec as JsonObject | undefined)?.template as JsonObject | undefined)?.spec as JsonObject | undefined;
  return ["initContainers", "containers"].flatMap((k) => (Array.isArray(podSpec?.[k]) ? (podSpec![k] as JsonObject[]) : []));
}

/**
 * Validates a hook input (`{ name | idOverride, job | file, timeout? }`) at check time and composes its base Job.
 * `field` names it in failures, e.g. `hooks.beforeNode`.
 */
export function validateNodeHook(input: unknown, opts: ParseOptions & { cluster: string }, field: string):
  { hook: NodeHook; failures: [] } | { hook?: undefined; failures: HookFailure[] } {
  if (!input || typeof input !== "object" || Array.isArray(input)) return { failures: [{ field, message: M.hook.notObject(input) }] };
  const failures: HookFailure[] = [];
  const { timeout, ...rest } = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined));
  for (const k of Object.keys(rest)) {
    if (k === "interval") failures.push({ field: `${field}.interval`, message: M.hook.noInterval });
    else if (!HOOK_KEYS.includes(k)) failures.push({ field, message: M.hook.unknownKey(k) });
  }
  let timeoutMs = DEFAULT_HOOK_TIMEOUT_MS;
  if (timeout !== undefined) {
    try {
      if (typeof timeout !== "string") throw new Error("not a string");
      timeoutMs = parseDuration(timeout);
      if (timeoutMs < 1000) failures.push({ field: `${field}.timeout`, message: M.hook.timeoutTooShort });
      if (timeoutMs > MAX_TIMER_MS) failures.push({ field: `${field}.timeout`, message: M.hook.timeoutTooLong(MAX_TIMER_TEXT) });
    } catch (err) {
      failures.push({ field: `${field}.timeout`, message: M.hook.timeoutInvalid(timeout, (err as Error).message) });
    }
  }
  if (failures.length > 0) return { failures };
  const r = validateHealthcheck(rest, opts);
  if (!r.ok) return { failures: r.failures.map((f) => ({ field: f.path ? `${field}.${f.path}` : field, message: f.message })) };
  let base: ComposedHealthcheckJob;
  try {
    base = composeHealthcheck(r.healthcheck, opts.cluster);
  } catch (err) {
    return { failures: [{ field: `${field}.job`, message: (err as Error).message }] };
  }
  if (base.jobName.length > MAX_JOB_NAME - SUFFIX_LENGTH) {
    failures.push({ field, message: M.hook.nameTooLong(base.jobName, MAX_JOB_NAME - SUFFIX_LENGTH) });
  }
  for (const c of containersOf(base.job)) {
    for (const e of Array.isArray(c.env) ? (c.env as JsonObject[]) : []) {
      if (typeof e?.name === "string" && RESERVED_ENV.includes(e.name)) {
        failures.push({ field: `${field}.job`, message: M.hook.reservedEnv(String(c.name), e.name) });
      }
    }
  }
  return failures.length > 0 ? { failures } : { hook: { base, timeoutMs }, failures: [] };
}

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

/** The hook's runner Job for one node and phase (deterministic: the same inputs give the same Job). */
export function composeNodeHook(hook: NodeHook | ComposedHealthcheckJob, ctx: NodeHookContext): ComposedHealthcheckJob {
  const base = "base" in hook ? hook.base : hook;
  const job = structuredClone(base.job) as JsonObject;
  const jobName = `${base.jobName}-${sha256(`${ctx.phase}\n${ctx.node.name}`).slice(0, SUFFIX_LENGTH - 1)}`;
  const outcome = ctx.phase === "afterNode" ? (ctx.outcome ?? "upgraded") : undefined;
  const configHash = sha256([base.configHash, ctx.phase, ctx.cluster, ctx.node.name, ctx.node.role, outcome ?? ""].join("\n"));
  const meta = job.metadata as JsonObject;
  meta.name = jobName;
  meta.labels = { ...(meta.labels as JsonObject), [HOOK_PHASE_LABEL]: ctx.phase };
  meta.annotations = { ...(meta.annotations as JsonObject), [CONFIG_HASH_ANNOTATION]: configHash, [HOOK_NODE_ANNOTATION]: ctx.node.name };
  const tmeta = ((job.spec as JsonObject).template as JsonObject).metadata as JsonObject;
  tmeta.labels = { ...(tmeta.labels as JsonObject), [HOOK_PHASE_LABEL]: ctx.phase };
  const env = [
    { name: HOOK_ENV.cluster, value: ctx.cluster },
    { name: HOOK_ENV.node, value: ctx.node.name },
    { name: HOOK_ENV.role, value: ctx.node.role },
    { name: HOOK_ENV.phase, value: ctx.phase },
    ...(outcome ? [{ name: HOOK_ENV.outcome, value: outcome }] : []),
  ];
  for (const c of containersOf(job)) {
    const own = (Array.isArray(c.env) ? (c.env as JsonObject[]) : []).filter((e) => !RESERVED_ENV.includes(String(e?.name)));
    c.env = [...own, ...env];
  }
  return { ...base, id: `${base.id}/${ctx.node.name}`, jobName, job, configHash };
}
