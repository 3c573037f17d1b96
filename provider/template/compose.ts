// Composition of a healthcheck's runner Job (DESIGN.md "Job identity", Omni's ComposeHealthCheckJob with our names):
// deterministic name talos-gate-<id>, label on the Job and its pod template, config-hash annotation of the manifest
// text, namespace default "default", terminationMessagePolicy FallbackToLogsOnError on containers that set none.
// Everything else in the manifest is the user's and is kept.
import { createHash } from "node:crypto";
import { checkJobManifest, type JsonObject } from "./jobmanifest";
import { TemplateValidationError } from "./errors";
import { dnsLabelErrors } from "./formats";
import * as M from "./messages";
import { DEFAULT_INTERVAL_MS, JOB_NAME_PREFIX, healthcheckId } from "./validate";
import type { Healthcheck } from "./model";

export const RUNNER_LABEL_KEY = "app.kubernetes.io/name";
export const RUNNER_LABEL_VALUE = "talos-gate-healthcheck";
export const CONFIG_HASH_ANNOTATION = "talos-gate.dev/config-hash";
export const DEFAULT_NAMESPACE = "default";
export const TERMINATION_MESSAGE_POLICY = "FallbackToLogsOnError";

/** A composed runner Job, ready to submit (the rollout's port calls it `HealthcheckJob`). */
export interface ComposedHealthcheckJob {
  /** Healthcheck id: `idOverride` or `cluster-<cluster>-<name>`. */
  id: string;
  /** `talos-gate-<id>`. */
  jobName: string;
  namespace: string;
  /** The complete batch/v1 Job object to create. */
  job: Record<string, unknown>;
  /** sha256 hex of the user's manifest text; also in the `talos-gate.dev/config-hash` annotation. */
  configHash: string;
  /** Retry interval of a failing check, in milliseconds (default 30 s). */
  intervalMs: number;
}

/** Lowercase hex SHA-256 of the manifest text. */
export function configHash(manifest: string): string {
  return createHash("sha256").update(manifest, "utf8").digest("hex");
}

function obj(parent: JsonObject, key: string): JsonObject {
  const v = parent[key];
  if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as JsonObject;
  const fresh: JsonObject = {};
  parent[key] = fresh;
  return fresh;
}

type ComposeInput = Pick<Healthcheck, "manifest"> & Partial<Pick<Healthcheck, "id" | "name" | "idOverride" | "intervalMs">>;

/**
 * Builds the runner Job of a validated healthcheck. The id is `idOverride`, else `cluster-<clusterName>-<name>`
 * (or `hc.id` when no cluster name is given). Throws TemplateValidationError if the manifest is not a usable Job.
 */
export function composeHealthcheck(hc: ComposeInput, clusterName?: string): ComposedHealthcheckJob {
  const id = hc.idOverride || clusterName === undefined ? (hc.idOverride || hc.id || "") : healthcheckId(hc, clusterName);
  const jobName = JOB_NAME_PREFIX + id;
  const checked = checkJobManifest(hc.idOverride || hc.name || id, hc.manifest);
  const errors = [...checked.errors];
  const dns = dnsLabelErrors(jobName, M.dns.maxLength, M.dns.label);
  if (dns.length > 0) errors.push(M.healthcheck.runnerName(id, jobName, dns));
  const parsed = checked.job;
  if (errors.length > 0 || !parsed) {
    throw new TemplateValidationError(
      M.multiErrorText(errors),
      errors.map((message) => ({ document: "healthcheck", path: "job", message })),
    );
  }
  const job = structuredClone(parsed) as JsonObject;
  const meta = obj(job, "metadata");
  meta.name = jobName;
  delete meta.generateName;
  if (typeof meta.namespace !== "string" || meta.namespace === "") meta.namespace = DEFAULT_NAMESPACE;
  const hash = configHash(hc.manifest);
  obj(meta, "labels")[RUNNER_LABEL_KEY] = RUNNER_LABEL_VALUE;
  obj(meta, "annotations")[CONFIG_HASH_ANNOTATION] = hash;
  const spec = obj(job, "spec");
  const template = obj(spec, "template");
  obj(obj(template, "metadata"), "labels")[RUNNER_LABEL_KEY] = RUNNER_LABEL_VALUE;
  const podSpec = obj(template, "spec");
  const containers = Array.isArray(podSpec.containers) ? (podSpec.containers as JsonObject[]) : [];
  for (const c of containers) {
    if (typeof c.terminationMessagePolicy !== "string" || c.terminationMessagePolicy === "") {
      c.terminationMessagePolicy = TERMINATION_MESSAGE_POLICY;
    }
  }
  return {
    id,
    jobName,
    namespace: meta.namespace as string,
    job,
    configHash: hash,
    intervalMs: hc.intervalMs !== undefined && hc.intervalMs > 0 ? hc.intervalMs : DEFAULT_INTERVAL_MS,
  };
}
