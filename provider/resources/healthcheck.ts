// The Healthcheck resource's model: one zod schema is what `check` refuses (the cluster name, and every template rule
// of the check, each naming its field), the composed runner Job its outputs hold, and `checkKey`, what its diff
// compares: the id, Job content, retry interval, labels and annotations, so another spelling of the same check (a YAML
// string or an object, a file with the same Job, "1m" or "60s", an omitted default) is no change.
// PURE: a `file` is read only through the injected FileReader.
import { z } from "zod";
import { formatDuration, parseDuration } from "../template/duration";
import { composeHealthcheckInput } from "../template/healthcheckInput";
import { clusterName } from "./fields";
import { canonical, checkFailures, fail, hasUnknown, optionalString, programFiles, UNKNOWN, withAcrossFields, type CheckFailure, type FileReader } from "./model";
import { jobContent } from "./talosUpgrade";

/** What the check runs: the inputs the template's rules read (composeHealthcheckInput validates each). */
export const SPEC_KEYS = ["name", "idOverride", "job", "file", "interval", "labels", "annotations"] as const;

const fields = z.object({
  /** Reported as `cluster`, the SDK's name of it. */
  clusterName: clusterName("cluster"),
  kubeconfig: optionalString,
  resourceUrn: optionalString,
  ...Object.fromEntries(SPEC_KEYS.map((k) => [k, z.unknown().optional()])) as Record<(typeof SPEC_KEYS)[number], z.ZodOptional<z.ZodUnknown>>,
});

/** The Healthcheck's inputs the provider reads. */
export const INPUT_KEYS = Object.keys(fields.shape) as (keyof typeof fields.shape)[];

/** The inputs that define the check (given ones only). */
export function specOf(p: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(SPEC_KEYS.filter((k) => p[k] !== undefined && p[k] !== null).map((k) => [k, p[k]]));
}

/** Validates and composes; failures name the top-level input (`job` for the manifest's own fields). */
export function composeInputs(p: Record<string, unknown>, files: FileReader) {
  const cluster = typeof p.clusterName === "string" && p.clusterName !== UNKNOWN ? p.clusterName : "cluster";
  return composeHealthcheckInput(specOf(p), { cluster, ...files });
}

/** The template's rules across the check's inputs, once every one of them is known. */
function acrossFields(files: FileReader) {
  return (raw: Record<string, unknown>, ctx: z.RefinementCtx) => {
    if (hasUnknown(specOf(raw))) return;
    const r = composeInputs(raw, files);
    if (!r.ok) for (const f of r.failures) fail(ctx, f.message, [f.path.split(/[.[]/)[0] || "job"]);
  };
}

export function checkHealthcheck(news: Record<string, unknown>, files: FileReader = programFiles()): CheckFailure[] {
  // A missing cluster name passes check, as every release did (the SDK always sets it).
  return checkFailures(withAcrossFields(fields.partial({ clusterName: true }), acrossFields(files)), news);
}

/** The inputs with the composed check added: the resource's outputs (throws naming each failure). */
export function healthcheckOutputs(p: Record<string, unknown>, files: FileReader = programFiles()): HealthcheckOutputs {
  const r = composeInputs(p, files);
  if (!r.ok) throw new Error(r.failures.map((f) => `${f.path.split(/[.[]/)[0] || "job"}: ${f.message}`).join("; "));
  const c = r.composed;
  return {
    ...p,
    checkId: c.id, jobName: c.jobName, namespace: c.namespace, configHash: c.configHash,
    interval: formatDuration(c.intervalMs), composedJob: c.job,
  };
}

export interface HealthcheckOutputs extends Record<string, unknown> {
  checkId: string;
  jobName: string;
  namespace: string;
  configHash: string;
  /** The retry interval, normalized (Go duration). */
  interval: string;
  composedJob: Record<string, unknown>;
}

/** The outputs a Healthcheck adds to its inputs (state of every release since 0.1.0 has them). */
export const healthcheckState = z.object({
  clusterName: z.string(),
  kubeconfig: z.string().nullish(),
  checkId: z.string(),
  interval: z.string(),
  composedJob: z.record(z.string(), z.unknown()),
  labels: z.record(z.string(), z.string()).nullish(),
  annotations: z.record(z.string(), z.string()).nullish(),
});
export type HealthcheckState = z.output<typeof healthcheckState>;

/** What the check does, canonical: equal for every spelling of the same check. */
export function checkKey(o: HealthcheckState): string {
  return canonical({
    clusterName: o.clusterName,
    id: o.checkId,
    intervalMs: parseDuration(o.interval),
    job: jobContent(o.composedJob),
    labels: o.labels ?? {},
    annotations: o.annotations ?? {},
  });
}
