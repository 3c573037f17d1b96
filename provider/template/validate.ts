// Loading (strict decode) and validation of Omni cluster templates with Omni's rules, messages and aggregation,
// plus talos-gate's stricter healthcheck rules. Produces the normalized model (model.ts) or all errors.
// This file is the dispatch: each document kind (and each part of one) is validated in its own file under
// documents/, as Omni's client/pkg/template/internal/models has one file per model (siderolabs/omni b1ea5df).
import type { z } from "zod";
import * as M from "./messages";
import { DEFAULT_LIMITS, YamlStreamError, parseYamlStream, type YamlLimits } from "./yamlnodes";
import { UNKNOWN_FIELD_MARK, healthcheckSchema, plainToNode, project, type RawCluster, type RawHealthcheck, type RawMachine, type RawMachineSet } from "./schema";
import { MultiError, TemplateValidationError, flatten, type TemplateError } from "./errors";
import type { FileOptions } from "./files";
import type { ClusterTemplate, Healthcheck, MachineSet } from "./model";
import { DocContext, formatPath, type Seg } from "./documents/context";
import { loadDocument, loadFailure, type LoadError, type Loaded } from "./documents/load";
import { validateCluster } from "./documents/cluster";
import { validateControlPlane } from "./documents/controlplane";
import { validateWorkers } from "./documents/workers";
import { validateMachine } from "./documents/machine";
import { validateOneHealthcheck } from "./documents/kubernetesHealthcheck";
import { crossDocument, type Collected } from "./documents/list";

export { formatPath, inlineText } from "./documents/context";
export { DEFAULT_INTERVAL_MS, MIN_INTERVAL_MS, JOB_NAME_PREFIX, healthcheckId } from "./documents/kubernetesHealthcheck";

export interface ParseOptions extends FileOptions {
  limits?: Partial<YamlLimits>;
}

export type ParseResult = { ok: true; template: ClusterTemplate } | { ok: false; error: TemplateValidationError };

// ---- public entry points ----

/**
 * Parses and validates a multi-document Omni cluster template. Never throws for bad input: returns the normalized
 * model, or a TemplateValidationError with every problem (load-stage errors of all documents, else all validation
 * errors in Omni's aggregated format).
 */
export function parseTemplate(input: string | Uint8Array, opts: ParseOptions = {}): ParseResult {
  const limits: YamlLimits = { ...DEFAULT_LIMITS, ...(opts.limits ?? {}) };
  let stream;
  try {
    stream = parseYamlStream(input, limits);
  } catch (err) {
    if (!(err instanceof YamlStreamError)) throw err;
    const e: TemplateError = { document: "template", path: "", message: err.message };
    if (err.pos) {
      e.line = err.pos.line;
      e.column = err.pos.col;
    }
    return { ok: false, error: new TemplateValidationError(M.load.prefix + err.message, [e]) };
  }
  const loaded: Loaded[] = [];
  const loadErrors: LoadError[] = [];
  for (const doc of stream.docs) {
    const r = loadDocument(doc, stream.lines);
    if (r.error) loadErrors.push(r.error);
    else loaded.push(r.loaded!);
  }
  if (loadErrors.length > 0) return { ok: false, error: loadFailure(loadErrors) };

  const top = new MultiError();
  const c: Collected = { controlPlanes: [], workers: [], machines: [], clusters: 0 };
  for (const d of loaded) {
    switch (d.kind) {
      case "Cluster": {
        c.clusters++;
        const r = validateCluster(d.ctx, d.value as RawCluster, opts);
        top.add(r.node);
        if (r.model) c.cluster = r.model;
        break;
      }
      case "ControlPlane":
      case "Workers": {
        const doc = d.value as RawMachineSet;
        const r = d.kind === "ControlPlane" ? validateControlPlane(d.ctx, doc, opts) : validateWorkers(d.ctx, doc, opts);
        top.add(r.node);
        const entry = { doc, model: r.model as MachineSet | undefined };
        (d.kind === "ControlPlane" ? c.controlPlanes : c.workers).push(entry);
        break;
      }
      case "Machine": {
        const doc = d.value as RawMachine;
        const r = validateMachine(d.ctx, doc, opts);
        top.add(r.node);
        c.machines.push({ doc, model: r.model });
        break;
      }
    }
  }
  for (const e of crossDocument(c, { document: "template", path: "" })) top.add(e);
  const tree = top.node();
  if (tree) return { ok: false, error: TemplateValidationError.fromTree(tree) };

  const { cluster, manifests, healthchecks } = c.cluster!;
  const setId = (s: MachineSet, role: "controlplane" | "worker") =>
    role === "controlplane" ? `${cluster.name}-control-planes` : `${cluster.name}-${s.name || "workers"}`;
  const cp = c.controlPlanes[0]!.model!;
  return {
    ok: true,
    template: {
      cluster,
      manifests,
      healthchecks,
      controlPlane: { ...cp, id: setId(cp, "controlplane") },
      workers: c.workers.map((w) => ({ ...w.model!, id: setId(w.model!, "worker") })),
      machines: c.machines.map((m) => m.model!),
    },
  };
}

/** parseTemplate that throws the TemplateValidationError. */
export function loadTemplate(input: string | Uint8Array, opts: ParseOptions = {}): ClusterTemplate {
  const r = parseTemplate(input, opts);
  if (!r.ok) throw r.error;
  return r.template;
}

/** One healthcheck as the Pulumi layer receives it. */
export interface HealthcheckInput {
  name?: string;
  idOverride?: string;
  job?: string | Record<string, unknown> | Record<string, unknown>[];
  file?: string;
  interval?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface CheckFailure {
  /** Field path, e.g. `interval`, `job`, `labels["omni.sidero.dev/x"]` (empty for the whole healthcheck). */
  path: string;
  message: string;
}

export type HealthcheckCheck = { ok: true; healthcheck: Healthcheck } | { ok: false; failures: CheckFailure[] };

/**
 * Validates one healthcheck given as an object (the Pulumi `check`), with exactly the template rules and messages
 * (field types, name/idOverride, job xor file, file access, reserved prefixes, interval, Job manifest, Job name).
 */
export function validateHealthcheck(input: unknown, opts: ParseOptions & { cluster: string }): HealthcheckCheck {
  const root = plainToNode(input);
  const ctx = new DocContext("healthcheck", root);
  const res = (healthcheckSchema as z.ZodType).safeParse(project(root));
  if (!res.success) {
    const failures: CheckFailure[] = [];
    for (const iss of res.error.issues) {
      const path = iss.path.filter((s): s is Seg => typeof s !== "symbol");
      if (iss.code === "unrecognized_keys" && iss.message.startsWith(UNKNOWN_FIELD_MARK)) {
        const goType = iss.message.slice(UNKNOWN_FIELD_MARK.length);
        for (const k of iss.keys) failures.push({ path: formatPath([...path, k]), message: M.construct.fieldNotFound(k, goType) });
      } else failures.push({ path: formatPath(path), message: iss.message });
    }
    return { ok: false, failures };
  }
  const hc = (res.data ?? {}) as RawHealthcheck;
  const r = validateOneHealthcheck(ctx, hc, opts.cluster, [], opts);
  if (!r.model) {
    return { ok: false, failures: flatten(r.list.node()).map((e) => ({ path: e.path, message: e.message })) };
  }
  return { ok: true, healthcheck: r.model };
}
