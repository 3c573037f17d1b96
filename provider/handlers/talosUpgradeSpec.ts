// A TalosUpgrade's properties, parsed once into types: what `check` accepted, what `create`/`update` run, and what old
// state of any release since 0.1.0 holds. `rolloutKey` is the canonical form of everything a rollout depends on, so
// `diff` shows an update only when the version, image, strategy, timeouts, machines or the checks' content change —
// never for another spelling of the same input ("1h" vs "60m", "1.13.2" vs "v1.13.2", an omitted default).
import { z } from "zod";
import type { RolloutStrategy } from "../rollout/plan";
import type { HealthcheckJob } from "../rollout/ports";
import { installerImage, targetVersion } from "../talos/image";
import { CONFIG_HASH_ANNOTATION } from "../template/compose";
import { parseDuration } from "../template/duration";
import { canonical } from "./common";
import { gateKey, parseGateInputs, type GateInputs } from "./gates";

export const DEFAULT_HOLD_TIMEOUT = "60m";
export const DEFAULT_NODE_TIMEOUT = "15m";
const DEFAULT_INTERVAL = "30s";

const optionalString = z.string().nullish().transform((v) => v || undefined);

/** One gate check as the SDK passes it: the composed runner Job of a Healthcheck. */
const healthcheckProps = z.object({
  id: z.string(),
  job: z.record(z.string(), z.unknown()),
  interval: optionalString,
  configHash: z.string().nullish(),
});

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
  version: z.string(),
  installerImage: optionalString,
  schematic: optionalString,
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
  /** Node names the Cluster selects; empty = every Node. */
  machineNames: string[];
  /** Version every node must report afterwards, e.g. "v1.13.2". */
  version: string;
  image: string;
  healthchecks: HealthcheckJob[];
  strategy: RolloutStrategy;
  holdTimeoutMs: number;
  nodeTimeoutMs: number;
  /** Condition gates, soak, maintenance windows, node hooks and the volume-detach bound (handlers/gates.ts). */
  gates: GateInputs;
}

/** The installer image and the version nodes must report afterwards. */
export function target(p: Pick<TalosUpgradeProps, "version" | "installerImage" | "schematic">): { image: string; version: string } {
  const image = p.installerImage
    ?? installerImage({ version: p.version, schematic: p.schematic, platform: p.schematic ? "metal" : undefined });
  return { image, version: targetVersion(image, p.version) };
}

/** Parses validated properties (throws a zod error naming the field when they are not). */
export function parseTalosUpgrade(props: unknown): TalosUpgradeSpec {
  const p = talosUpgradeProps.parse(props);
  const gates = parseGateInputs(props as Record<string, unknown>);
  if (gates.failures.length > 0) throw new Error(gates.failures.map((f) => f.reason).join("; "));
  const { image, version } = target(p);
  const s = p.strategy ?? {};
  return {
    clusterName: p.clusterName,
    kubeconfig: p.kubeconfig,
    talosconfig: p.talosconfig,
    ...(p.owner ? { owner: p.owner } : {}),
    ...(p.resourceUrn ? { urn: p.resourceUrn } : {}),
    machineNames: [...(p.machineNames ?? [])].sort(),
    version,
    image,
    healthchecks: (p.healthchecks ?? []).map((h) => {
      const job = h.job as Record<string, any>;
      return {
        id: h.id,
        jobName: job.metadata?.name,
        namespace: job.metadata?.namespace ?? "default",
        job,
        configHash: h.configHash ?? "",
        intervalMs: parseDuration(h.interval ?? DEFAULT_INTERVAL),
      };
    }),
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

/**
 * Everything a rollout depends on, canonical: two specs with the same key roll the cluster the same way. A check is
 * its id, retry interval and Job content (the config-hash annotation hashes the manifest's text, which differs
 * between a YAML string and an object of the same Job, so it is left out).
 */
export function rolloutKey(s: TalosUpgradeSpec): string {
  return canonical({
    clusterName: s.clusterName,
    machineNames: s.machineNames,
    version: s.version,
    image: s.image,
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
