// The KubernetesUpgrade resource's model (issue 24.3), in the one-model-per-kind shape: ONE zod schema is what `check`
// refuses, the spec the handler runs and `rolloutKey` (what a diff compares: a change only when the version, timeouts,
// machines or gates change, never for another spelling of the same input). Its gates are TalosUpgrade's, parsed by
// the same fields (talosUpgrade.ts). PURE: a check's `file` is read only through the injected FileReader.
import { z } from "zod";
import type { HealthcheckJob } from "../rollout/ports";
import type { MaintenanceSchedule } from "../schedule";
import { isValidVersion, normalizeVersion } from "../version";
import { machineOverride, setFields } from "./cluster";
import { DEFAULT_HOLD_TIMEOUT, DEFAULT_NODE_TIMEOUT } from "./defaults";
import { clusterName, goDuration } from "./fields";
import * as msg from "./messages";
import { canonical, checkFailures, optionalString, programFiles, withAcrossFields, type CheckFailure, type FileReader } from "./model";
import { gateFields, jobContent, runFields, type ConditionGate, type TalosUpgradeSpec } from "./talosUpgrade";

const version = z.string({ error: (iss) => msg.kubernetesVersionInvalid(iss.input) })
  .refine(isValidVersion, { error: (iss) => msg.kubernetesVersionInvalid(iss.input) });

/** The KubernetesUpgrade's properties, field by field, in the order `check` lists failures. */
function fields(files: FileReader) {
  return z.object({
    clusterName: clusterName(),
    version,
    holdTimeout: goDuration("holdTimeout", { min: { ms: 1000, text: "1s" }, default: DEFAULT_HOLD_TIMEOUT }),
    nodeTimeout: goDuration("nodeTimeout", { min: { ms: 1000, text: "1s" }, default: DEFAULT_NODE_TIMEOUT }),
    ...gateFields(files),
    ...runFields(),
    machines: z.array(machineOverride).nullish(),
    /** The version of the TalosUpgrade this one runs after (`after`): the Talos range preview checks against. */
    talosVersion: optionalString,
  });
}

type Fields = z.output<ReturnType<typeof fields>>;

export const INPUT_KEYS = Object.keys(fields(programFiles()).shape) as (keyof Fields)[];

/** Inputs a rollout depends on: while one is unknown the diff must say "changed" (talosVersion only shapes preview's check). */
export const ROLLOUT_INPUTS = INPUT_KEYS.filter((k) => k !== "owner" && k !== "resourceUrn" && k !== "healthcheckIds" && k !== "customTimeouts" && k !== "talosVersion");

/** Inputs the preview plan reads. */
export const PLAN_INPUTS = ["kubeconfig", "talosconfig", "version", "healthcheckIds", "conditionIds", "machines", "maintenanceWindows", "soakTime", "talosVersion"] as const satisfies readonly (keyof Fields)[];

function model(files: FileReader, check: boolean) {
  // A missing cluster name or credentials passes check (the SDK always sets them), as TalosUpgrade's.
  const byField = check ? fields(files).partial({ clusterName: true, kubeconfig: true, talosconfig: true }) : fields(files);
  return withAcrossFields(byField, () => undefined);
}

/** The cluster, credentials and identity as TalosUpgrade's (the same fields, the same meaning). */
export interface KubernetesUpgradeSpec extends Pick<TalosUpgradeSpec, "clusterName" | "kubeconfig" | "talosconfig" | "owner" | "urn" | "machines"> {
  /** Kubernetes every component must run afterwards, e.g. "v1.36.1". */
  version: string;
  healthchecks: HealthcheckJob[];
  conditions: ConditionGate[];
  holdTimeoutMs: number;
  /** Bound of one unit: a control plane's static pods, kube-proxy's patch, one kubelet. */
  nodeTimeoutMs: number;
  soakMs: number;
  schedule: MaintenanceSchedule;
  runTimeouts: { createMs: number; updateMs: number };
  /** The Talos the nodes will run by then (the TalosUpgrade this one runs after), when given and a version. */
  talosVersion?: string;
}

function toSpec(p: Fields): KubernetesUpgradeSpec {
  return {
    clusterName: p.clusterName,
    kubeconfig: p.kubeconfig,
    talosconfig: p.talosconfig,
    ...(p.owner ? { owner: p.owner } : {}),
    ...(p.resourceUrn ? { urn: p.resourceUrn } : {}),
    machines: (p.machines ?? []).map(setFields).sort((a, b) => a.name.localeCompare(b.name)),
    version: normalizeVersion(p.version),
    healthchecks: p.healthchecks,
    conditions: p.conditions,
    holdTimeoutMs: p.holdTimeout,
    nodeTimeoutMs: p.nodeTimeout,
    soakMs: p.soakTime,
    schedule: p.maintenanceWindows,
    runTimeouts: { createMs: p.customTimeouts?.create ?? 0, updateMs: p.customTimeouts?.update ?? 0 },
    ...(p.talosVersion && isValidVersion(p.talosVersion) ? { talosVersion: normalizeVersion(p.talosVersion) } : {}),
  };
}

/** `check`: every failure of the inputs, named by property, in the inputs' order (unknown values wait for apply). */
export function checkKubernetesUpgrade(news: Record<string, unknown>, files: FileReader = programFiles()): CheckFailure[] {
  return checkFailures(model(files, true), news, INPUT_KEYS);
}

/** Parses validated properties (throws a zod error naming the field when they are not). */
export function parseKubernetesUpgrade(props: unknown, files: FileReader = programFiles()): KubernetesUpgradeSpec {
  return toSpec(model(files, false).parse(props) as Fields);
}

/** Everything a rollout depends on, canonical: two specs with the same key roll the cluster the same way. */
export function kubernetesRolloutKey(s: KubernetesUpgradeSpec): string {
  return canonical({
    clusterName: s.clusterName,
    machines: s.machines,
    version: s.version,
    holdTimeoutMs: s.holdTimeoutMs,
    nodeTimeoutMs: s.nodeTimeoutMs,
    healthchecks: s.healthchecks
      .map((h) => ({ id: h.id, intervalMs: h.intervalMs, job: jobContent(h.job) }))
      .sort((a, b) => a.id.localeCompare(b.id)),
    conditions: s.conditions.map((c) => ({ id: c.id, spec: c.compiled.spec })).sort((a, b) => a.id.localeCompare(b.id)),
    soakMs: s.soakMs,
    windows: s.schedule.key,
  });
}

/** Whether only the credentials differ (a rotation: state takes them, no rollout runs). */
export function kubernetesCredentialsChanged(a: KubernetesUpgradeSpec, b: KubernetesUpgradeSpec): boolean {
  return a.kubeconfig !== b.kubeconfig || a.talosconfig !== b.talosconfig;
}
