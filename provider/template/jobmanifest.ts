// Parsing and checking of a healthcheck Job manifest and of supporting manifests (talos-gate's stricter rules:
// Omni only checks these server-side or not at all).
import { parseYamlStream, toJS, YamlStreamError, type YamlLimits, DEFAULT_LIMITS } from "./yamlnodes";
import { healthcheck as hmsg, manifest as mmsg } from "./messages";

export type JsonObject = Record<string, unknown>;

function isObj(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Parses a multi-document YAML text into its non-empty documents (plain JS), or throws an Error with the reason. */
export function parseObjects(text: string, limits: YamlLimits = DEFAULT_LIMITS): unknown[] {
  let stream;
  try {
    stream = parseYamlStream(text, limits);
  } catch (err) {
    if (err instanceof YamlStreamError) throw new Error(err.message.replace(/^error decoding template: /, ""));
    throw err;
  }
  const out: unknown[] = [];
  for (const d of stream.docs) {
    if (d.constructErrors.length > 0) throw new Error(`yaml: ${d.constructErrors.map((e) => `line ${e.pos.line}: ${e.message}`).join("; ")}`);
    if (d.root === undefined || (d.root.kind === "scalar" && d.root.tag === "!!null")) continue;
    out.push(toJS(d.root));
  }
  return out;
}

/** Checks a Job manifest text; returns the Job object or the messages (already naming the healthcheck). */
export function checkJobManifest(id: string, text: string, limits?: YamlLimits): { job?: JsonObject; errors: string[] } {
  let docs: unknown[];
  try {
    docs = parseObjects(text, limits);
  } catch (err) {
    return { errors: [hmsg.invalidJob(id, (err as Error).message)] };
  }
  if (docs.length !== 1) return { errors: [hmsg.invalidJob(id, hmsg.jobOneDocument(docs.length))] };
  const job = docs[0];
  if (!isObj(job)) return { errors: [hmsg.invalidJob(id, hmsg.jobNotObject)] };
  const errors: string[] = [];
  const kind = typeof job.kind === "string" ? job.kind : job.kind === undefined ? undefined : String(job.kind);
  const apiVersion = typeof job.apiVersion === "string" ? job.apiVersion : job.apiVersion === undefined ? undefined : String(job.apiVersion);
  if (kind !== "Job") errors.push(hmsg.jobKind(id, kind));
  if (apiVersion !== "batch/v1") errors.push(hmsg.jobApiVersion(id, apiVersion));
  const typeErr = (field: string, type: string) => errors.push(hmsg.invalidJob(id, hmsg.jobFieldType(field, type)));
  const checkStringMap = (v: unknown, field: string) => {
    if (v === undefined || v === null) return;
    if (!isObj(v) || Object.values(v).some((x) => typeof x !== "string")) typeErr(field, "a map of strings");
  };
  const meta = job.metadata;
  if (meta !== undefined && meta !== null) {
    if (!isObj(meta)) typeErr("metadata", "a mapping");
    else {
      if (meta.namespace !== undefined && meta.namespace !== null && typeof meta.namespace !== "string") typeErr("metadata.namespace", "a string");
      checkStringMap(meta.labels, "metadata.labels");
      checkStringMap(meta.annotations, "metadata.annotations");
    }
  }
  const spec = job.spec;
  let containers: unknown;
  if (spec !== undefined && spec !== null && !isObj(spec)) typeErr("spec", "a mapping");
  else if (isObj(spec)) {
    const tpl = spec.template;
    if (tpl !== undefined && tpl !== null && !isObj(tpl)) typeErr("spec.template", "a mapping");
    else if (isObj(tpl)) {
      const tmeta = tpl.metadata;
      if (tmeta !== undefined && tmeta !== null && !isObj(tmeta)) typeErr("spec.template.metadata", "a mapping");
      else if (isObj(tmeta)) checkStringMap(tmeta.labels, "spec.template.metadata.labels");
      const pspec = tpl.spec;
      if (pspec !== undefined && pspec !== null && !isObj(pspec)) typeErr("spec.template.spec", "a mapping");
      else if (isObj(pspec)) containers = pspec.containers;
    }
  }
  if (containers !== undefined && containers !== null && !Array.isArray(containers)) typeErr("spec.template.spec.containers", "a list");
  else if (!Array.isArray(containers) || containers.length === 0) errors.push(hmsg.jobNoContainers(id));
  else
    containers.forEach((c, i) => {
      if (!isObj(c)) typeErr(`spec.template.spec.containers[${i}]`, "a mapping");
      else if (c.terminationMessagePolicy !== undefined && c.terminationMessagePolicy !== null && typeof c.terminationMessagePolicy !== "string") {
        typeErr(`spec.template.spec.containers[${i}].terminationMessagePolicy`, "a string");
      }
    });
  return errors.length > 0 ? { errors } : { job, errors };
}

/** Parses supporting manifests into Kubernetes objects; returns objects or messages naming the manifest. */
export function checkManifestObjects(name: string, text: string, limits?: YamlLimits): { objects?: JsonObject[]; errors: string[] } {
  let docs: unknown[];
  try {
    docs = parseObjects(text, limits);
  } catch (err) {
    return { errors: [mmsg.invalid(name, (err as Error).message)] };
  }
  const errors: string[] = [];
  const objects: JsonObject[] = [];
  docs.forEach((d, i) => {
    if (!isObj(d)) return errors.push(mmsg.invalid(name, mmsg.documentNotObject(i + 1)));
    for (const field of ["apiVersion", "kind"]) {
      if (typeof d[field] !== "string" || d[field] === "") errors.push(mmsg.invalid(name, mmsg.documentMissing(i + 1, field)));
    }
    const meta = d.metadata;
    if (!isObj(meta) || typeof meta.name !== "string" || meta.name === "") errors.push(mmsg.invalid(name, mmsg.documentMissing(i + 1, "metadata.name")));
    objects.push(d);
  });
  return errors.length > 0 ? { errors } : { objects, errors };
}
