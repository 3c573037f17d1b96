// A TalosUpgrade's properties, parsed once into types: what `check` accepted, what `create`/`update` run, and what old
// state of any release since 0.1.0 holds. `rolloutKey` is the canonical form of everything a rollout depends on, so
// `diff` shows an update only when the version, image, strategy, timeouts, machines or the checks' content change —
// never for another spelling of the same input ("1h" vs "60m", "1.13.2" vs "v1.13.2", an omitted default).
import { z } from "zod";
import type { RolloutStrategy } from "../rollout/plan";
import type { HealthcheckJob } from "../rollout/ports";
import { checkFactoryHost, installerImage, targetVersion, type InstallerChoice } from "../talos/image";
import * as fs from "node:fs";
import { CONFIG_HASH_ANNOTATION, type ComposedHealthcheckJob } from "../template/compose";
import { composeHealthcheckInput } from "../template/healthcheckInput";
import { parseDuration } from "../template/duration";
import { canonical } from "./common";
import { machineOverride, type MachineOverride } from "./clusterSpec";
import { gateKey, parseGateInputs, type GateInputs } from "./gates";

export const DEFAULT_HOLD_TIMEOUT = "60m";
export const DEFAULT_NODE_TIMEOUT = "15m";
const DEFAULT_INTERVAL = "30s";

const optionalString = z.string().nullish().transform((v) => v || undefined);

/** One gate check as state written by 0.1.0 holds it: the composed runner Job (a Healthcheck's outputs). */
const composedCheck = z.object({
  id: z.string(),
  job: z.record(z.string(), z.unknown()),
  interval: optionalString,
  configHash: z.string().nullish(),
});

/** One gate check as the SDK passes it now: the Healthcheck's own inputs (known at preview), composed here. */
const checkInput = z.object({
  cluster: z.string(),
  name: optionalString,
  idOverride: optionalString,
  job: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown()))]).nullish(),
  file: optionalString,
  interval: optionalString,
});

const healthcheckProps = z.union([composedCheck, checkInput]);

const strategyProps = z.object({
  workerParallelism: z.number().int().min(1).nullish(),
  machineSetParallelism: z.record(z.string(), z.number().int().min(1)).nullish(),
  order: z.array(z.string()).nullish(),
}).nullish();

const talosUpgradeProps = z.object({
  clusterName: z.string(),
  kubeconfig: z.string(),
  talosconfig: z.string(),
  owner: optionalString,
  resourceUrn: optionalString,
  machineNames: z.array(z.string()).nullish(),
  /** The Cluster's machine overrides (since 0.2.0; 0.1.0 state has only machineNames). */
  machines: z.array(machineOverride).nullish(),
  version: z.string(),
  installerImage: optionalString,
  schematic: optionalString,
  imageFactoryHost: optionalString,
  healthchecks: z.array(healthcheckProps).nullish(),
  strategy: strategyProps,
  holdTimeout: optionalString,
  nodeTimeout: optionalString,
});

export type TalosUpgradeProps = z.infer<typeof talosUpgradeProps>;

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
  /**
   * What the user chose for the installer (an image for every node, or a schematic for every node); unset = each
   * node's own platform and schematic, read from it right before its upgrade (Omni's rule).
   */
  installer: InstallerChoice;
  healthchecks: HealthcheckJob[];
  strategy: RolloutStrategy;
  holdTimeoutMs: number;
  nodeTimeoutMs: number;
  /** Condition gates, soak, maintenance windows, node hooks and the volume-detach bound (handlers/gates.ts). */
  gates: GateInputs;
}

/**
 * The installer choice and the version nodes must report afterwards (an explicit installer image's tag must agree with
 * `version`; a schematic must be an Image Factory id). Throws a TalosError naming what is wrong.
 */
export function target(p: Pick<TalosUpgradeProps, "version" | "installerImage" | "schematic" | "imageFactoryHost">): { installer: InstallerChoice; version: string } {
  const installer: InstallerChoice = {
    ...(p.installerImage ? { installerImage: p.installerImage } : {}),
    ...(!p.installerImage && p.schematic ? { schematic: p.schematic } : {}),
    ...(!p.installerImage && p.imageFactoryHost ? { factoryHost: checkFactoryHost(p.imageFactoryHost) } : {}),
  };
  // Validated with the rule the run applies: the schematic's form, the image's tag against the version.
  const sample = installerImage({ version: p.version, ...(installer.schematic ? { schematic: installer.schematic } : {}) });
  return { installer, version: targetVersion(installer.installerImage ?? sample, p.version) };
}

/** Parses validated properties (throws a zod error naming the field when they are not). */
export function parseTalosUpgrade(props: unknown): TalosUpgradeSpec {
  const p = talosUpgradeProps.parse(props);
  const gates = parseGateInputs(props as Record<string, unknown>);
  if (gates.failures.length > 0) throw new Error(gates.failures.map((f) => f.reason).join("; "));
  const { installer, version } = target(p);
  const s = p.strategy ?? {};
  return {
    clusterName: p.clusterName,
    kubeconfig: p.kubeconfig,
    talosconfig: p.talosconfig,
    ...(p.owner ? { owner: p.owner } : {}),
    ...(p.resourceUrn ? { urn: p.resourceUrn } : {}),
    machines: (p.machines ?? (p.machineNames ?? []).map((name) => ({ name })))
      .map((m) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)) as unknown as MachineOverride)
      .sort((a, b) => a.name.localeCompare(b.name)),
    version,
    installer,
    healthchecks: (p.healthchecks ?? []).map((h, i) => ("id" in h ? fromComposed(h) : composeCheck(h, i))),
    strategy: {
      ...(s.workerParallelism ? { workerParallelism: s.workerParallelism } : {}),
      ...(s.machineSetParallelism ? { machineSetParallelism: s.machineSetParallelism } : {}),
      ...(s.order ? { order: s.order } : {}),
    },
    holdTimeoutMs: parseDuration(p.holdTimeout ?? DEFAULT_HOLD_TIMEOUT),
    nodeTimeoutMs: parseDuration(p.nodeTimeout ?? DEFAULT_NODE_TIMEOUT),
    gates: gates.inputs,
  };
}

function fromComposed(h: z.infer<typeof composedCheck>): HealthcheckJob {
  const job = h.job as Record<string, any>;
  return {
    id: h.id,
    jobName: job.metadata?.name,
    namespace: job.metadata?.namespace ?? "default",
    job,
    configHash: h.configHash ?? "",
    intervalMs: parseDuration(h.interval ?? DEFAULT_INTERVAL),
  };
}

/** Composes a check from its inputs; `file` resolves against the program directory (the provider's working dir). */
export function composeCheck(h: z.infer<typeof checkInput>, index: number): ComposedHealthcheckJob {
  const { cluster, ...input } = h;
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined && v !== null));
  const r = composeHealthcheckInput(given, {
    cluster, baseDir: process.cwd(), readFile: (f) => fs.readFileSync(f), realPath: (f) => fs.realpathSync(f),
  });
  if (!r.ok) throw new InvalidCheck(index, r.failures.map((f) => `${f.path}: ${f.message}`).join("; "));
  return r.composed;
}

/** A gate check whose inputs do not compose (its Healthcheck reports the details at preview). */
export class InvalidCheck extends Error {
  constructor(readonly index: number, detail: string) {
    super(`healthchecks[${index}]: ${detail}`);
    this.name = "InvalidCheck";
  }
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
    installer: s.installer,
    holdTimeoutMs: s.holdTimeoutMs,
    nodeTimeoutMs: s.nodeTimeoutMs,
    strategy: {
      workerParallelism: s.strategy.workerParallelism ?? 1,
      machineSetParallelism: s.strategy.machineSetParallelism ?? {},
      order: s.strategy.order ?? [],
    },
    healthchecks: s.healthchecks
      .map((h) => ({ id: h.id, intervalMs: h.intervalMs, job: jobContent(h.job) }))
      .sort((a, b) => a.id.localeCompare(b.id)),
    gates: gateKey(s.gates, jobContent),
  });
}

/** A composed runner Job without the annotation that hashes the manifest's spelling. */
export function jobContent(job: Record<string, unknown>): unknown {
  const meta = (job.metadata ?? {}) as Record<string, any>;
  const { [CONFIG_HASH_ANNOTATION]: _hash, ...annotations } = (meta.annotations ?? {}) as Record<string, unknown>;
  return { ...job, metadata: { ...meta, annotations } };
}

/** Whether only the credentials differ (a rotation: state must take them, no rollout runs). */
export function credentialsChanged(a: TalosUpgradeSpec, b: TalosUpgradeSpec): boolean {
  return a.kubeconfig !== b.kubeconfig || a.talosconfig !== b.talosconfig;
}
