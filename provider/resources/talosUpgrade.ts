// The TalosUpgrade resource's model: ONE zod schema is what `check` refuses (each failure naming its property, in the
// inputs' order), the spec the handlers run (from inputs, or from state of any release since 0.1.0), `rolloutKey` (the
// canonical form the diff compares: a change only when the version, image, strategy, timeouts, machines, gates or the
// checks' content change — never for another spelling of the same input: "1h" vs "60m", "1.13.2" vs "v1.13.2", an
// omitted default) and INPUT_KEYS. Adding an input: a field here, the rollout option it drives, a test.
// PURE: files (a check's or a hook's `file`) are read only through the injected FileReader.
import { z } from "zod";
import { compileCondition } from "../conditions";
import type { ConditionGate } from "../rollout/conditions";
import type { RolloutStrategy } from "../rollout/plan";
import type { HealthcheckJob } from "../rollout/ports";
import { MaintenanceSchedule, parseMaintenanceWindows } from "../schedule";
import { checkFactoryHost, installerImage, targetVersion, type InstallerChoice } from "../talos/image";
import { CONFIG_HASH_ANNOTATION, type ComposedHealthcheckJob } from "../template/compose";
import { parseDuration } from "../template/duration";
import { composeHealthcheckInput } from "../template/healthcheckInput";
import { validateNodeHook, type NodeHook } from "../template/hooks";
import { compareVersions, isValidVersion, normalizeVersion } from "../version";
import { machineOverride, setFields, type MachineOverride } from "./cluster";
import type { DrainMode, EtcdQuorumLoss } from "../rollout/ports";
import { DEFAULT_DRAIN, DEFAULT_HOLD_TIMEOUT, DEFAULT_NODE_TIMEOUT, DEFAULT_VOLUME_DETACH, DRAIN_MODES, ETCD_QUORUM_LOSS } from "./defaults";
import { clusterName, clusterNameProblem, goDuration } from "./fields";
import * as msg from "./messages";
import {
  canonical, checkFailures, fail, hasUnknown, optionalString, programFiles, withAcrossFields, UNKNOWN, type CheckFailure, type FileReader,
} from "./model";

export type { ConditionGate };

export { DEFAULT_HOLD_TIMEOUT, DEFAULT_NODE_TIMEOUT, DEFAULT_VOLUME_DETACH };
const DEFAULT_INTERVAL = "30s";

/** One gate check as the SDK passes it now: the Healthcheck's own inputs (known at preview), composed here. */
const checkInput = z.object({
  cluster: z.string(),
  name: optionalString,
  idOverride: optionalString,
  job: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown()))]).nullish(),
  file: optionalString,
  interval: optionalString,
});
export type GateCheckInput = z.input<typeof checkInput>;

/** One gate check as state written by 0.1.0 holds it: the composed runner Job (a Healthcheck's outputs). */
const composedCheck = z.object({
  id: z.string(),
  job: z.record(z.string(), z.unknown()),
  interval: optionalString,
  configHash: z.string().nullish(),
});

/** A gate check whose inputs do not compose (its Healthcheck reports the details at preview). */
export class InvalidCheck extends Error {
  constructor(readonly index: number, detail: string) {
    super(`healthchecks[${index}]: ${detail}`);
    this.name = "InvalidCheck";
  }
}

/** Composes a check from its inputs. */
export function composeCheck(h: z.output<typeof checkInput>, index: number, files: FileReader): ComposedHealthcheckJob {
  const { cluster, ...input } = h;
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined && v !== null));
  const r = composeHealthcheckInput(given, { cluster, ...files });
  if (!r.ok) throw new InvalidCheck(index, r.failures.map((f) => `${f.path}: ${f.message}`).join("; "));
  return r.composed;
}

function fromComposed(h: z.output<typeof composedCheck>): HealthcheckJob {
  const job = h.job as { metadata?: { name?: string; namespace?: string } };
  return {
    id: h.id,
    jobName: job.metadata?.name as string,
    namespace: job.metadata?.namespace ?? "default",
    job: h.job,
    configHash: h.configHash ?? "",
    intervalMs: parseDuration(h.interval ?? DEFAULT_INTERVAL),
  };
}

/** One gate check, either form; failures name `healthchecks[i]`. */
function gateCheck(ctx: z.RefinementCtx, h: unknown, i: number, files: FileReader): HealthcheckJob | undefined {
  const given = h as { cluster?: unknown; id?: unknown; job?: unknown } | null;
  if (typeof given?.cluster === "string") {
    const input = checkInput.safeParse(h);
    try {
      if (input.success) return composeCheck(input.data, i, files);
    } catch (err) {
      if (!(err instanceof InvalidCheck)) throw err;
    }
    fail(ctx, msg.healthcheckInvalidInputs(i), [i]);
    return undefined;
  }
  const composed = composedCheck.safeParse(h);
  if (composed.success) return fromComposed(composed.data);
  fail(ctx, msg.healthchecksInvalid(i), [i]);
  return undefined;
}

function healthchecks(files: FileReader) {
  return z.array(z.unknown()).nullish().transform((list, ctx): HealthcheckJob[] => {
    const checks = (list ?? []).map((h, i) => (h === UNKNOWN ? undefined : gateCheck(ctx, h, i, files)));
    return checks.every((c): c is HealthcheckJob => c !== undefined) ? checks : z.NEVER;
  });
}

/** Machines per wave: a whole number, at least 1. */
const parallelism = (field: string) => z.custom<number>((v) => Number.isInteger(v) && (v as number) >= 1, {
  error: (iss) => msg.strategyInvalid(`${field} must be a whole number >= 1, got ${JSON.stringify(iss.input)}`),
});

const strategy = z.object({
  workerParallelism: parallelism("workerParallelism").optional(),
  machineSetParallelism: z.record(z.string(), z.unknown()).optional().transform((sets, ctx): Record<string, number> | undefined => {
    for (const [set, n] of Object.entries(sets ?? {})) {
      const r = parallelism(`machineSetParallelism["${set}"]`).safeParse(n);
      if (!r.success) fail(ctx, r.error.issues[0].message, [set]);
    }
    return sets as Record<string, number> | undefined;
  }),
  order: z.custom<string[]>((v) => Array.isArray(v) && v.every((n) => typeof n === "string"), {
    error: msg.orderNotAList(),
  }).optional(),
}).nullish().transform((s): RolloutStrategy => ({
  ...(s?.workerParallelism ? { workerParallelism: s.workerParallelism } : {}),
  ...(s?.machineSetParallelism ? { machineSetParallelism: s.machineSetParallelism } : {}),
  ...(s?.order ? { order: s.order } : {}),
}));

/** What the SDK's `UpgradeStrategyArgs` must give (checked at compile time: tests/unit/sdk/model-types.test.ts). */
export type StrategyInput = z.input<typeof strategy>;

/** Condition gates (a Condition's gateCondition); failures name the field, e.g. `conditions[0].expression`. */
const conditions = z.unknown().optional().transform((v, ctx): ConditionGate[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    fail(ctx, msg.conditionsInvalid(0));
    return z.NEVER;
  }
  const out: ConditionGate[] = [];
  v.forEach((c: Record<string, unknown> | null, i) => {
    if ((c as unknown) === UNKNOWN || hasUnknown(c)) return;
    if (!c || typeof c.id !== "string" || !c.target || typeof c.expression !== "string") {
      fail(ctx, msg.conditionsInvalid(i), [i]);
      return;
    }
    const spec = Object.fromEntries(["target", "expression", "message", "allowEmpty"].filter((k) => c[k] !== undefined && c[k] !== null).map((k) => [k, c[k]]));
    const r = compileCondition(spec, `conditions[${i}]`);
    for (const f of r.failures) fail(ctx, msg.fieldFailure(f.field, f.message), [i]);
    if (r.compiled) out.push({ id: c.id, compiled: r.compiled });
  });
  return out;
});

/** Maintenance windows; failures name the window, e.g. `maintenanceWindows[1].cron`. */
const maintenanceWindows = z.unknown().optional().transform((v, ctx): MaintenanceSchedule => {
  const r = parseMaintenanceWindows(v);
  for (const f of r.failures) fail(ctx, msg.fieldFailure(f.field, f.message), [], f.field.split(/[.[]/)[0]);
  return r.schedule ?? z.NEVER;
});

export type NodeHooks = { beforeNode?: NodeHook; afterNode?: NodeHook };

/**
 * The hooks composed for `cluster` (a hook's id is `cluster-<cluster>-<name>`), and the failures naming their field,
 * e.g. `hooks.beforeNode.job`. A value not known yet is checked at apply.
 */
function composeHooks(v: unknown, cluster: string, files: FileReader): { hooks: NodeHooks; failures: string[] } {
  const hooks: NodeHooks = {};
  const failures: string[] = [];
  if (v === undefined || v === null || hasUnknown(v)) return { hooks, failures };
  if (typeof v !== "object" || Array.isArray(v)) return { hooks, failures: [msg.hooksInvalid(v)] };
  for (const [k, h] of Object.entries(v)) {
    if (h === undefined || h === null) continue;
    if (k !== "beforeNode" && k !== "afterNode") {
      failures.push(msg.hooksUnknownKey(k));
      continue;
    }
    const r = validateNodeHook(h, { cluster, ...files }, `hooks.${k}`);
    failures.push(...r.failures.map((f) => msg.fieldFailure(f.field, f.message)));
    if (r.hook) hooks[k] = r.hook;
  }
  return { hooks, failures };
}

/** Omitted (state of earlier releases too): the default. */
const drain = z.enum(DRAIN_MODES, { error: (iss) => msg.drainInvalid(iss.input) }).nullish().transform((v): DrainMode => v ?? DEFAULT_DRAIN);

/** Omitted (state of earlier releases too): "refuse". */
const etcdQuorumLoss = z.enum(ETCD_QUORUM_LOSS, { error: (iss) => msg.etcdQuorumLossInvalid(iss.input) }).nullish()
  .transform((v): EtcdQuorumLoss => v ?? "refuse");

const version = z.string({ error: (iss) => msg.versionInvalid(iss.input) })
  .refine(isValidVersion, { error: (iss) => msg.versionInvalid(iss.input) });

/**
 * Intermediate versions rolled before `version`, in order, each a full gated rollout; checked against `version` across
 * fields. Normalised ("1.12.11" → "v1.12.11"); omitted = [] (a direct upgrade, as before the input existed).
 */
const upgradePath = z.unknown().optional().transform((v, ctx): string[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    fail(ctx, msg.pathInvalid(v));
    return z.NEVER;
  }
  const out: string[] = [];
  v.forEach((step: unknown, i) => {
    if (step === UNKNOWN) return;
    if (typeof step !== "string" || !isValidVersion(step)) return fail(ctx, msg.pathStepInvalid(i, step), [i]);
    const prev = out[out.length - 1];
    if (prev !== undefined && compareVersions(prev, step) >= 0) return fail(ctx, msg.pathNotAscending(i, normalizeVersion(step), prev), [i]);
    out.push(normalizeVersion(step));
  });
  return out;
});

/** The gates' fields, in this order (KubernetesUpgrade's too): the checks, the conditions, soak and windows. */
export function gateFields(files: FileReader) {
  return {
    healthchecks: healthchecks(files),
    /** The checks' ids as derived from their inputs (the preview plan names them before they exist). */
    healthcheckIds: z.array(z.string()).nullish(),
    conditions,
    conditionIds: z.array(z.string()).nullish(),
    soakTime: goDuration("soakTime", { min: { ms: 0, text: "0s" } }),
    maintenanceWindows,
  };
}

/** The fields every rollout resource carries for its run: credentials, identity, the run's bounds. */
export function runFields() {
  return {
    kubeconfig: z.string(),
    talosconfig: z.string(),
    /** Lease holder base: `<project>/<stack>/<resource>`, stable across runs of the stack. */
    owner: optionalString,
    /** The resource's URN (diagnostics land on its row). */
    resourceUrn: optionalString,
    /**
     * The resource's `customTimeouts` (create, update) as the SDK read them from its options: the dynamic-provider host
     * never passes the engine's timeout on (issue 22.8). Each bounds a whole run; 0 = none.
     */
    customTimeouts: z.object({
      create: goDuration("customTimeouts.create", { min: { ms: 1000, text: "1s" } }),
      update: goDuration("customTimeouts.update", { min: { ms: 1000, text: "1s" } }),
    }).nullish(),
  };
}

/** The TalosUpgrade's properties, field by field, in the order `check` lists failures. */
function fields(files: FileReader) {
  return z.object({
    clusterName: clusterName(),
    version,
    path: upgradePath,
    installerImage: optionalString,
    schematic: optionalString,
    imageFactoryHost: optionalString,
    holdTimeout: goDuration("holdTimeout", { min: { ms: 1000, text: "1s" }, default: DEFAULT_HOLD_TIMEOUT }),
    nodeTimeout: goDuration("nodeTimeout", { min: { ms: 1000, text: "1s" }, default: DEFAULT_NODE_TIMEOUT }),
    strategy,
    drain,
    etcdQuorumLoss,
    ...gateFields(files),
    /** Composed with the cluster's name (`composeHooks`), checked across fields. */
    hooks: z.unknown().optional(),
    volumeDetachTimeout: goDuration("volumeDetachTimeout", { min: { ms: 0, text: "0s" }, default: DEFAULT_VOLUME_DETACH }),
    ...runFields(),
    /** The Cluster's machine overrides (since 0.2.0; 0.1.0 state has only machineNames). */
    machines: z.array(machineOverride).nullish(),
    machineNames: z.array(z.string()).nullish(),
  });
}

type Fields = z.output<ReturnType<typeof fields>>;

/** Every property of a TalosUpgrade the provider reads (inputs, and the plan ids the SDK derives). */
export const INPUT_KEYS = Object.keys(fields(programFiles()).shape) as (keyof Fields)[];

/** Inputs a rollout depends on: while one is unknown (preview of a computed value) the diff must say "changed". */
export const ROLLOUT_INPUTS = INPUT_KEYS.filter((k) => k !== "owner" && k !== "resourceUrn" && k !== "healthcheckIds" && k !== "customTimeouts");

/** Inputs the preview plan reads: ids derived from the gates' inputs, never their outputs. */
export const PLAN_INPUTS = [
  "kubeconfig", "version", "path", "installerImage", "schematic", "imageFactoryHost", "healthcheckIds", "strategy", "machineNames",
  "machines", "conditionIds", "maintenanceWindows", "soakTime", "hooks", "etcdQuorumLoss",
] as const satisfies readonly (keyof Fields)[];

/**
 * The installer choice and the version nodes must report afterwards (an explicit installer image's tag must agree with
 * `version`; a schematic must be an Image Factory id). Throws a TalosError naming what is wrong.
 */
export function target(p: { version: string; installerImage?: string; schematic?: string; imageFactoryHost?: string }): { installer: InstallerChoice; version: string } {
  const installer: InstallerChoice = {
    ...(p.installerImage ? { installerImage: p.installerImage } : {}),
    ...(!p.installerImage && p.schematic ? { schematic: p.schematic } : {}),
    ...(!p.installerImage && p.imageFactoryHost ? { factoryHost: checkFactoryHost(p.imageFactoryHost) } : {}),
  };
  // Validated with the rule the run applies: the schematic's form, the image's tag against the version.
  const sample = installerImage({ version: p.version, ...(installer.schematic ? { schematic: installer.schematic } : {}) });
  return { installer, version: targetVersion(installer.installerImage ?? sample, p.version) };
}

/**
 * The installer inputs against the version, once the cluster name and version are valid (as releases before did),
 * and the hooks, composed for the cluster: checks across fields, so they skip what is not known yet themselves.
 */
function acrossFields(files: FileReader) {
  return (raw: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const image = [raw.version, raw.installerImage, raw.schematic, raw.imageFactoryHost];
    const nameOk = raw.clusterName === undefined || raw.clusterName === UNKNOWN || !clusterNameProblem("clusterName", raw.clusterName);
    const versionOk = raw.version === UNKNOWN || (typeof raw.version === "string" && isValidVersion(raw.version));
    if (!hasUnknown(image) && nameOk && versionOk) {
      try {
        target(raw as Parameters<typeof target>[0]);
      } catch (err) {
        const reason = (err as Error).message;
        const property = raw.installerImage ? "installerImage" : raw.imageFactoryHost && /Image Factory host/.test(reason) ? "imageFactoryHost" : "schematic";
        fail(ctx, msg.imageInvalid(reason), [property]);
      }
    }
    const steps: unknown[] = Array.isArray(raw.path) ? raw.path : [];
    const last = steps[steps.length - 1];
    if (versionOk && raw.version !== UNKNOWN && typeof last === "string" && isValidVersion(last) && compareVersions(last, raw.version as string) >= 0) {
      fail(ctx, msg.pathNotBelowVersion(steps.length - 1, normalizeVersion(last), normalizeVersion(raw.version as string)), ["path", steps.length - 1]);
    }
    const cluster = typeof raw.clusterName === "string" && raw.clusterName !== UNKNOWN ? raw.clusterName : "cluster";
    for (const reason of composeHooks(raw.hooks, cluster, files).failures) fail(ctx, reason, ["hooks"]);
  };
}

/** The fields, then the checks across them, on the properties as given (a field's failure hides no other check). */
function model(files: FileReader, check: boolean) {
  // A missing cluster name or credentials passes check, as every release did (the SDK always sets them).
  const byField = check ? fields(files).partial({ clusterName: true, kubeconfig: true, talosconfig: true }) : fields(files);
  return withAcrossFields(byField, acrossFields(files));
}

export interface TalosUpgradeSpec {
  clusterName: string;
  kubeconfig: string;
  talosconfig: string;
  /** Lease holder base: `<project>/<stack>/<resource>`, stable across runs of the stack. */
  owner?: string;
  /** The resource's URN (diagnostics land on its row). */
  urn?: string;
  /** The machines the Cluster names, with its overrides; empty = every Node as its labels say. */
  machines: MachineOverride[];
  /** Version every node must report afterwards, e.g. "v1.13.2". */
  version: string;
  /** Versions rolled before `version`, in order, each a full gated rollout ([] = straight to `version`). */
  path: string[];
  /**
   * What the user chose for the installer (an image for every node, or a schematic for every node); unset = each
   * node's own platform and schematic, read from it right before its upgrade (Omni's rule).
   */
  installer: InstallerChoice;
  healthchecks: HealthcheckJob[];
  strategy: RolloutStrategy;
  holdTimeoutMs: number;
  nodeTimeoutMs: number;
  /** Whether a node is drained before its reboot: always, never, or unless no other node could take its pods. */
  drain: DrainMode;
  /** "allow": a control plane may go down although etcd loses quorum for its reboot (2 control planes). */
  etcdQuorumLoss: EtcdQuorumLoss;
  /** Condition gates, soak, maintenance windows, node hooks and the volume-detach bound. */
  gates: GateInputs;
  /** Bounds of a whole run from the resource's customTimeouts (0 = none). */
  runTimeouts: { createMs: number; updateMs: number };
}

export interface GateInputs {
  conditions: ConditionGate[];
  /** After a node is back and Ready: wait at least this long, and until every gate passes (0 = no soak). */
  soakMs: number;
  /** Unrestricted when no windows are given. */
  schedule: MaintenanceSchedule;
  hooks: NodeHooks;
  /** Bound of the wait for the node's VolumeAttachments after the drain (0 = do not wait). */
  volumeDetachTimeoutMs: number;
}

function toSpec(p: Fields, files: FileReader): TalosUpgradeSpec {
  const { installer, version: target_ } = target(p);
  return {
    clusterName: p.clusterName,
    kubeconfig: p.kubeconfig,
    talosconfig: p.talosconfig,
    ...(p.owner ? { owner: p.owner } : {}),
    ...(p.resourceUrn ? { urn: p.resourceUrn } : {}),
    machines: (p.machines ?? (p.machineNames ?? []).map((name) => ({ name }))).map(setFields).sort((a, b) => a.name.localeCompare(b.name)),
    version: target_,
    path: p.path,
    installer,
    healthchecks: p.healthchecks,
    strategy: p.strategy,
    holdTimeoutMs: p.holdTimeout,
    nodeTimeoutMs: p.nodeTimeout,
    drain: p.drain,
    etcdQuorumLoss: p.etcdQuorumLoss,
    gates: {
      conditions: p.conditions,
      soakMs: p.soakTime,
      schedule: p.maintenanceWindows,
      hooks: composeHooks(p.hooks, p.clusterName, files).hooks,
      volumeDetachTimeoutMs: p.volumeDetachTimeout,
    },
    runTimeouts: { createMs: p.customTimeouts?.create ?? 0, updateMs: p.customTimeouts?.update ?? 0 },
  };
}

/** `check`: every failure of the inputs, named by property, in the inputs' order (unknown values wait for apply). */
export function checkTalosUpgrade(news: Record<string, unknown>, files: FileReader = programFiles()): CheckFailure[] {
  return checkFailures(model(files, true), news, INPUT_KEYS);
}

/** Parses validated properties (throws a zod error naming the field when they are not). */
export function parseTalosUpgrade(props: unknown, files: FileReader = programFiles()): TalosUpgradeSpec {
  return toSpec(model(files, false).parse(props) as Fields, files);
}

/**
 * Everything a rollout depends on, canonical: two specs with the same key roll the cluster the same way. A check is
 * its id, retry interval and Job content (the config-hash annotation hashes the manifest's text, which differs
 * between a YAML string and an object of the same Job, so it is left out).
 */
export function rolloutKey(s: TalosUpgradeSpec): string {
  return canonical({
    clusterName: s.clusterName,
    machines: s.machines,
    version: s.version,
    // Only when given: state written before the input existed keeps its key, so it previews as no change.
    ...(s.path.length ? { path: s.path } : {}),
    installer: s.installer,
    holdTimeoutMs: s.holdTimeoutMs,
    nodeTimeoutMs: s.nodeTimeoutMs,
    drain: s.drain,
    etcdQuorumLoss: s.etcdQuorumLoss,
    strategy: {
      workerParallelism: s.strategy.workerParallelism ?? 1,
      machineSetParallelism: s.strategy.machineSetParallelism ?? {},
      order: s.strategy.order ?? [],
    },
    healthchecks: s.healthchecks
      .map((h) => ({ id: h.id, intervalMs: h.intervalMs, job: jobContent(h.job) }))
      .sort((a, b) => a.id.localeCompare(b.id)),
    gates: gateKey(s.gates),
  });
}

/**
 * The canonical form of the gate inputs: what gates the rollout, not how it is spelled (durations, window spellings,
 * key order, a hook's YAML string vs object, unset vs empty).
 */
function gateKey(g: GateInputs): string {
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

/** A composed runner Job without the annotation that hashes the manifest's spelling. */
export function jobContent(job: Record<string, unknown>): unknown {
  const meta = (job.metadata ?? {}) as { annotations?: Record<string, unknown> };
  const { [CONFIG_HASH_ANNOTATION]: _hash, ...annotations } = meta.annotations ?? {};
  return { ...job, metadata: { ...meta, annotations } };
}

/** Whether only the credentials differ (a rotation: state must take them, no rollout runs). */
export function credentialsChanged(a: TalosUpgradeSpec, b: TalosUpgradeSpec): boolean {
  return a.kubeconfig !== b.kubeconfig || a.talosconfig !== b.talosconfig;
}
