// Loading (strict decode) and validation of Omni cluster templates with Omni's rules, messages and aggregation,
// plus talos-gate's stricter healthcheck rules. Produces the normalized model (model.ts) or all errors.
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from "./duration";
import { stringify } from "yaml";
import type { z } from "zod";
import * as M from "./messages";
import { goQuote } from "./goquote";
import { runnerId } from "./ids";
import {
  DEFAULT_LIMITS, YamlStreamError, nodeKindNumber, parseYamlStream, toJS,
  type LineIndex, type Pos, type YamlLimits, type YDoc, type YNode,
} from "./yamlnodes";
import {
  KIND_SCHEMAS, UNKNOWN_FIELD_MARK, healthcheckSchema, plainToNode, project,
  type Descriptors, type InlineContent, type KnownKind, type RawCluster, type RawHealthcheck, type RawMachine,
  type RawMachineSet, type RawManifest, type RawPatch, type RawStrategy,
} from "./schema";
import { MultiError, TemplateValidationError, flatten, join, leaf, type ErrNode, type TemplateError, type Where } from "./errors";
import { readIncluded, type FileOptions } from "./files";
import { checkJobManifest, checkManifestObjects, parseObjects } from "./jobmanifest";
import { compareSemver, dnsLabelErrors, parseSemverTolerant, uuidError } from "./formats";
import type { ClusterTemplate, ContentSource, Healthcheck, MachineDoc, MachineSet, Manifest, Patch, Strategy } from "./model";

export const DEFAULT_INTERVAL_MS = 30_000;
export const MIN_INTERVAL_MS = 5_000;
export const JOB_NAME_PREFIX = "talos-gate-";

export interface ParseOptions extends FileOptions {
  limits?: Partial<YamlLimits>;
}

export type ParseResult = { ok: true; template: ClusterTemplate } | { ok: false; error: TemplateValidationError };

type Seg = string | number;

// ---- paths and positions ----

export function formatPath(path: readonly Seg[]): string {
  let out = "";
  for (const s of path) {
    if (typeof s === "number") out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(s)) out += out === "" ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

/** Position of the node at `path` (for a missing key, its parent); `key` gives the key's own position. */
function locate(root: YNode | undefined, path: readonly Seg[], key?: string): Pos | undefined {
  let n: YNode | undefined = root;
  let pos = root?.pos;
  for (const s of path) {
    if (n === undefined) break;
    if (n.kind === "map" && typeof s === "string") {
      const e = n.entries.find((x) => x.key === s);
      if (!e) break;
      pos = e.value.kind === "scalar" ? e.value.pos : e.keyPos;
      n = e.value;
    } else if (n.kind === "seq" && typeof s === "number") {
      n = n.items[s];
      if (n) pos = n.pos;
    } else break;
  }
  if (key !== undefined && n?.kind === "map") {
    const e = n.entries.find((x) => x.key === key);
    if (e) pos = e.keyPos;
  }
  return pos && pos.line > 0 ? pos : undefined;
}

class DocContext {
  constructor(
    readonly document: string,
    readonly root: YNode | undefined,
  ) {}
  where(path: readonly Seg[], key?: string): Where {
    const pos = locate(this.root, path, key);
    const w: Where = { document: this.document, path: formatPath(key === undefined ? path : [...path, key]) };
    if (pos) {
      w.line = pos.line;
      w.column = pos.col;
    }
    return w;
  }
  leaf(text: string, path: readonly Seg[], key?: string): ErrNode {
    return leaf(text, this.where(path, key));
  }
}

// ---- shared rules ----

function checkDescriptors(ctx: DocContext, d: Descriptors, base: readonly Seg[]): ErrNode[] {
  const out: ErrNode[] = [];
  for (const [field, build] of [["labels", M.descriptors.reservedLabel], ["annotations", M.descriptors.reservedAnnotation]] as const) {
    for (const key of Object.keys(d[field] ?? {})) {
      const prefix = M.RESERVED_PREFIXES.find((p) => key.startsWith(p));
      if (prefix) out.push(ctx.leaf(build(key, prefix), [...base, field], key));
    }
  }
  return out;
}

function yamlText(value: unknown): string {
  return stringify(value, { sortMapEntries: true, lineWidth: 0 });
}

/** The manifest text of inline content: verbatim string, or the mapping(s) re-encoded (sorted keys, as Omni). */
export function inlineText(c: InlineContent): string {
  switch (c.form) {
    case "string":
      return c.text;
    case "mapping":
      return yamlText(toJS(c.node));
    case "sequence":
      return c.nodes.map((n) => yamlText(toJS(n))).join("---\n");
  }
}

function labelsOf(d: Descriptors): { labels: Record<string, string>; annotations: Record<string, string> } {
  return { labels: { ...(d.labels ?? {}) }, annotations: { ...(d.annotations ?? {}) } };
}

// ---- patches ----

function validatePatch(ctx: DocContext, p: RawPatch, base: readonly Seg[], files: ParseOptions): { node?: ErrNode; model?: Patch } {
  const name = p.name || p.file || "";
  const list = new MultiError();
  for (const e of checkDescriptors(ctx, p, base)) list.add(e);
  let content: string | undefined;
  if (p.file && p.inline) list.add(ctx.leaf(M.patch.exclusive, base));
  else if (!p.file && !p.inline) list.add(ctx.leaf(M.patch.required, base));
  if (p.file) {
    const r = readIncluded(p.file, files, "openat");
    if (!r.ok) list.add(ctx.leaf(M.patch.failedToAccess(p.file, r.error), [...base, "file"]));
    else {
      content = r.text;
      const err = patchContentError(r.text);
      if (err) list.add(ctx.leaf(M.patch.invalidYaml(p.file, err), [...base, "file"]));
    }
  } else if (p.inline) {
    if (!p.name && !p.idOverride) list.add(ctx.leaf(M.patch.nameRequired, base));
    content = inlineText(p.inline);
    const err = patchContentError(content);
    if (err) list.add(ctx.leaf(M.patch.invalidInlineYaml(name, err), [...base, "inline"]));
  }
  if (!list.empty) return { node: list.wrapped(M.patch.wrap(name)) };
  const model: Patch = { name, content: content ?? "", ...labelsOf(p) };
  if (p.idOverride) model.idOverride = p.idOverride;
  if (p.file) model.file = p.file;
  return { model };
}

function patchContentError(text: string): string | undefined {
  try {
    const docs = parseObjects(text);
    if (docs.length === 0) return "config not found";
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

function validatePatches(ctx: DocContext, patches: RawPatch[] | undefined, base: readonly Seg[], files: ParseOptions, list: MultiError): Patch[] {
  const out: Patch[] = [];
  (patches ?? []).forEach((p, i) => {
    const r = validatePatch(ctx, p, [...base, i], files);
    list.add(r.node);
    if (r.model) out.push(r.model);
  });
  return out;
}

// ---- manifests ----

function validateManifests(ctx: DocContext, cluster: string, manifests: RawManifest[], files: ParseOptions): { node?: ErrNode; models: Manifest[] } {
  const entries: (ErrNode | undefined)[] = [];
  const seen = new Set<string>();
  const models: Manifest[] = [];
  manifests.forEach((m, i) => {
    const base = ["kubernetes", "manifests", i];
    const name = m.name || m.file || "";
    const errs: ErrNode[] = [];
    if (!m.name && !m.file) errs.push(ctx.leaf(M.manifest.nameEmpty, base));
    if (!m.mode) errs.push(ctx.leaf(M.manifest.modeNotSet(name), base));
    if (m.file && m.inline) errs.push(ctx.leaf(M.manifest.exclusive, base));
    else if (!m.file && !m.inline) errs.push(ctx.leaf(M.manifest.required, base));
    const desc = new MultiError();
    for (const e of checkDescriptors(ctx, m, base)) desc.add(e);
    const d = desc.wrapped(M.manifest.descriptorsWrap(name));
    if (d) errs.push(d);
    let text: string | undefined;
    let source: ContentSource | undefined;
    if (m.file && !m.inline) {
      const r = readIncluded(m.file, files, "statat");
      if (!r.ok) errs.push(ctx.leaf(M.manifest.failedToAccess(m.file, r.error), [...base, "file"]));
      else {
        text = r.text;
        source = { type: "file", file: m.file, path: r.absPath };
      }
    } else if (m.inline && !m.file) {
      text = inlineText(m.inline);
      source = { type: "inline", form: m.inline.form };
    }
    let objects: Record<string, unknown>[] | undefined;
    if (text !== undefined && name !== "") {
      const r = checkManifestObjects(name, text);
      for (const e of r.errors) errs.push(ctx.leaf(e, [...base, m.file ? "file" : "inline"]));
      objects = r.objects;
    }
    if (errs.length > 0) {
      entries.push(join(errs));
      return;
    }
    if (seen.has(name)) {
      entries.push(ctx.leaf(M.manifest.duplicate(name), base));
      return;
    }
    seen.add(name);
    models.push({
      name,
      id: `${String(200 + i).padStart(3, "0")}-${runnerId(cluster, name)}`,
      mode: m.mode!,
      source: source!,
      text: text!,
      objects: objects ?? [],
      ...labelsOf(m),
    });
  });
  return { node: join(entries), models };
}

// ---- healthchecks ----

/** Healthcheck id as Omni derives it: `idOverride`, else `cluster-<cluster>-<name>`. */
export function healthcheckId(hc: { name?: string; idOverride?: string }, cluster: string): string {
  return hc.idOverride ? hc.idOverride : runnerId(cluster, hc.name ?? "");
}

function validateOneHealthcheck(
  ctx: DocContext, hc: RawHealthcheck, cluster: string, base: readonly Seg[], files: ParseOptions,
): { list: MultiError; model?: Healthcheck } {
  const list = new MultiError();
  const ident = hc.idOverride || hc.name || "";
  if (!hc.name && !hc.idOverride) list.add(ctx.leaf(M.healthcheck.nameRequired, base));
  if (hc.job && hc.file) list.add(ctx.leaf(M.healthcheck.exclusive(ident), base));
  else if (!hc.job && !hc.file) list.add(ctx.leaf(M.healthcheck.required(ident), base));
  let text: string | undefined;
  let source: ContentSource | undefined;
  let contentPath: Seg[] = [...base];
  if (hc.file && !hc.job) {
    contentPath = [...base, "file"];
    const r = readIncluded(hc.file, files, "statat");
    if (!r.ok) list.add(ctx.leaf(M.healthcheck.failedToAccess(ident, hc.file, r.error), contentPath));
    else {
      text = r.text;
      source = { type: "file", file: hc.file, path: r.absPath };
    }
  } else if (hc.job && !hc.file) {
    contentPath = [...base, "job"];
    try {
      text = inlineText(hc.job);
      source = { type: "inline", form: hc.job.form };
    } catch (err) {
      list.add(ctx.leaf(M.healthcheck.invalidJob(ident, (err as Error).message), contentPath));
    }
  }
  for (const e of checkDescriptors(ctx, hc, base)) list.add(e);
  // Omni's server-side interval rule, checked here.
  const intervalMs = hc.interval?.ms ?? 0;
  if (intervalMs > 0 && intervalMs < MIN_INTERVAL_MS) list.add(ctx.leaf(M.healthcheck.intervalMin(ident), [...base, "interval"]));
  if (intervalMs > MAX_TIMER_MS) list.add(ctx.leaf(M.healthcheck.intervalMax(ident, MAX_TIMER_TEXT), [...base, "interval"]));
  // talos-gate: the manifest must be a usable Job, and the runner Job name a DNS label.
  if (text !== undefined) {
    for (const e of checkJobManifest(ident, text).errors) list.add(ctx.leaf(e, contentPath));
  }
  const id = healthcheckId(hc, cluster);
  if (hc.name || hc.idOverride) {
    const jobName = JOB_NAME_PREFIX + id;
    const errs = dnsLabelErrors(jobName, M.dns.maxLength, M.dns.label);
    if (errs.length > 0) list.add(ctx.leaf(M.healthcheck.runnerName(id, jobName, errs), [...base, hc.idOverride ? "idOverride" : "name"]));
  }
  if (!list.empty) return { list };
  const model: Healthcheck = {
    id,
    jobName: JOB_NAME_PREFIX + id,
    manifest: text!,
    source: source!,
    intervalMs: intervalMs > 0 ? intervalMs : DEFAULT_INTERVAL_MS,
    ...labelsOf(hc),
  };
  if (hc.name) model.name = hc.name;
  if (hc.idOverride) model.idOverride = hc.idOverride;
  if (hc.interval) model.interval = hc.interval.text;
  return { list, model };
}

function validateHealthchecks(ctx: DocContext, cluster: string, hcs: RawHealthcheck[], files: ParseOptions): { node?: ErrNode; models: Healthcheck[] } {
  const entries: (ErrNode | undefined)[] = [];
  const keys = new Set<string>();
  const ids = new Set<string>();
  const models: Healthcheck[] = [];
  hcs.forEach((hc, i) => {
    const base = ["kubernetes", "healthchecks", i];
    const r = validateOneHealthcheck(ctx, hc, cluster, base, files);
    if (!r.model) {
      entries.push(r.list.node());
      return;
    }
    const key = hc.idOverride || hc.name || "";
    if (key !== "" && keys.has(key)) {
      entries.push(ctx.leaf(M.healthcheck.duplicate(key), base));
      return;
    }
    keys.add(key);
    if (ids.has(r.model.id)) {
      entries.push(ctx.leaf(M.healthcheck.duplicateId(r.model.id), base));
      return;
    }
    ids.add(r.model.id);
    models.push(r.model);
  });
  return { node: join(entries), models };
}

// ---- documents ----

function versionList(wrap: string, version: string | undefined, talos: boolean, ctx: DocContext, path: Seg[]): ErrNode | undefined {
  const l = new MultiError();
  if (!version) l.add(ctx.leaf(M.cluster.versionRequired, path));
  else {
    try {
      parseSemverTolerant(version);
    } catch (err) {
      l.add(ctx.leaf(M.cluster.versionSemver((err as Error).message), path));
    }
    if (talos && !version.startsWith("v")) l.add(ctx.leaf(M.cluster.versionV, path));
  }
  return l.wrapped(wrap);
}

interface Collected {
  cluster?: ClusterTemplate["cluster"];
  manifests: Manifest[];
  healthchecks: Healthcheck[];
  controlPlanes: { doc: RawMachineSet; model?: MachineSet }[];
  workers: { doc: RawMachineSet; model?: MachineSet }[];
  machines: { doc: RawMachine; model?: MachineDoc }[];
  clusters: number;
}

function validateCluster(ctx: DocContext, c: RawCluster, files: ParseOptions, out: Collected): ErrNode | undefined {
  const name = c.name ?? "";
  const l = new MultiError();
  if (!name) l.add(ctx.leaf(M.cluster.nameRequired, ["name"]));
  else if (!/^[\p{L}\p{Nd}_-]+$/u.test(name)) l.add(ctx.leaf(M.cluster.nameChars, ["name"]));
  l.add(versionList(M.cluster.kubernetesVersionWrap, c.kubernetes?.version, false, ctx, ["kubernetes", "version"]));
  l.add(versionList(M.cluster.talosVersionWrap, c.talos?.version, true, ctx, ["talos", "version"]));
  if (c.features?.diskEncryption) {
    try {
      const v = parseSemverTolerant(c.talos?.version ?? "");
      if (compareSemver(v, parseSemverTolerant("1.5.0")) < 0) l.add(ctx.leaf(M.cluster.diskEncryption, ["features", "diskEncryption"]));
    } catch (err) {
      l.add(ctx.leaf((err as Error).message, ["talos", "version"]));
    }
  }
  for (const e of checkDescriptors(ctx, c, [])) l.add(e);
  const patches = validatePatches(ctx, c.patches, ["patches"], files, l);
  const man = validateManifests(ctx, name, c.kubernetes?.manifests ?? [], files);
  l.add(man.node);
  const hcs = validateHealthchecks(ctx, name, c.kubernetes?.healthchecks ?? [], files);
  l.add(hcs.node);
  if (!l.empty) return l.wrapped(M.cluster.wrap(name));
  const f = c.features ?? {};
  out.cluster = {
    name,
    ...labelsOf(c),
    kubernetesVersion: c.kubernetes!.version!,
    talosVersion: c.talos!.version!,
    features: {
      diskEncryption: !!f.diskEncryption,
      enableWorkloadProxy: !!f.enableWorkloadProxy,
      useEmbeddedDiscoveryService: !!f.useEmbeddedDiscoveryService,
      disablePublicDiscoveryService: !!f.disablePublicDiscoveryService,
      enableNodeAuditSkip: !!f.enableNodeAuditSkip,
      ...(f.backupConfiguration?.interval && f.backupConfiguration.interval.ms > 0 ? { backupInterval: f.backupConfiguration.interval.text } : {}),
    },
    patches,
    ...(c.systemExtensions !== undefined ? { systemExtensions: c.systemExtensions } : {}),
    ...(c.kernelArgs !== undefined ? { kernelArgs: c.kernelArgs } : {}),
  };
  out.manifests = man.models;
  out.healthchecks = hcs.models;
  return undefined;
}

function strategyModel(s: RawStrategy | undefined, defaultType: "Rolling" | "Unset"): Strategy | undefined {
  if (!s) return undefined;
  const m: Strategy = { type: s.type ?? defaultType };
  if (s.rolling?.maxParallelism !== undefined) m.maxParallelism = s.rolling.maxParallelism;
  return m;
}

function validateMachineSet(ctx: DocContext, s: RawMachineSet, role: "controlplane" | "worker", files: ParseOptions): { node?: ErrNode; model?: Omit<MachineSet, "id"> } {
  const l = new MultiError();
  if (role === "controlplane") {
    if (s.name) l.add(ctx.leaf(M.machineSet.controlPlaneName, ["name"]));
    if (s.bootstrapSpec) {
      if (!s.bootstrapSpec.clusterUUID) l.add(ctx.leaf(M.machineSet.clusterUUIDRequired, ["bootstrapSpec"]));
      if (!s.bootstrapSpec.snapshot) l.add(ctx.leaf(M.machineSet.snapshotRequired, ["bootstrapSpec"]));
    }
    if (s.updateStrategy) l.add(ctx.leaf(M.machineSet.updateStrategyNotAllowed, ["updateStrategy"]));
    if (s.deleteStrategy) l.add(ctx.leaf(M.machineSet.deleteStrategyNotAllowed, ["deleteStrategy"]));
  } else {
    if (s.name === "control-planes") l.add(ctx.leaf(M.machineSet.workersReservedName(s.name), ["name"]));
    if (s.bootstrapSpec) l.add(ctx.leaf(M.machineSet.bootstrapSpecInWorkers, ["bootstrapSpec"]));
  }
  for (const e of checkDescriptors(ctx, s, [])) l.add(e);
  const machines = s.machines ?? [];
  if (machines.length > 0 && s.machineClass) l.add(ctx.leaf(M.machineSet.machinesAndClass, ["machineClass"]));
  if (s.kernelArgs !== undefined && s.machineClass) l.add(ctx.leaf(M.machineSet.kernelArgsWithClass, ["kernelArgs"]));
  machines.forEach((id, i) => {
    const err = uuidError(id);
    if (err) l.add(ctx.leaf(M.machineSet.invalidMachineId(id, err), ["machines", i]));
  });
  const patches = validatePatches(ctx, s.patches, ["patches"], files, l);
  if (!l.empty) return { node: l.wrapped(role === "controlplane" ? M.machineSet.controlPlaneWrap : M.machineSet.workersWrap) };
  const model: Omit<MachineSet, "id"> = { role, machines, patches, ...labelsOf(s) };
  if (s.name) model.name = s.name;
  if (s.machineClass) {
    const size = s.machineClass.size;
    model.machineClass = { name: s.machineClass.name ?? "", size: size === undefined ? 0 : size.unlimited ? "unlimited" : size.count };
  }
  if (s.bootstrapSpec) model.bootstrapSpec = { clusterUUID: s.bootstrapSpec.clusterUUID!, snapshot: s.bootstrapSpec.snapshot! };
  const up = strategyModel(s.updateStrategy, "Rolling");
  if (up) model.updateStrategy = up;
  const del = strategyModel(s.deleteStrategy, "Unset");
  if (del) model.deleteStrategy = del;
  const upg = strategyModel(s.upgradeStrategy, "Unset");
  if (upg) model.upgradeStrategy = upg;
  if (s.systemExtensions !== undefined) model.systemExtensions = s.systemExtensions;
  if (s.kernelArgs !== undefined) model.kernelArgs = s.kernelArgs;
  return { model };
}

function validateMachine(ctx: DocContext, m: RawMachine, files: ParseOptions): { node?: ErrNode; model?: MachineDoc } {
  const l = new MultiError();
  const name = m.name ?? "";
  if (!name) l.add(ctx.leaf(M.machine.nameRequired, ["name"]));
  for (const e of checkDescriptors(ctx, m, [])) l.add(e);
  const err = uuidError(name);
  if (err) l.add(ctx.leaf(M.machineSet.invalidMachineId(name, err), ["name"]));
  if (m.install?.disk && m.install?.diskSelector) l.add(ctx.leaf(M.machine.installExclusive, ["install"]));
  const patches = validatePatches(ctx, m.patches, ["patches"], files, l);
  if (!l.empty) return { node: l.wrapped(M.machine.wrap(name)) };
  const model: MachineDoc = { id: name, locked: !!m.locked, patches, ...labelsOf(m) };
  if (m.install && (m.install.disk || m.install.diskSelector)) model.install = { ...m.install };
  if (m.systemExtensions !== undefined) model.systemExtensions = m.systemExtensions;
  if (m.kernelArgs !== undefined) model.kernelArgs = m.kernelArgs;
  return { model };
}

function crossDocument(c: Collected, where: Where): ErrNode[] {
  const out: ErrNode[] = [];
  const add = (t: string) => out.push(leaf(t, where));
  if (c.clusters !== 1) add(M.crossDocument.clusterCount(c.clusters));
  if (c.controlPlanes.length !== 1) add(M.crossDocument.controlPlaneCount(c.controlPlanes.length));
  const names = new Map<string, number>();
  for (const w of c.workers) names.set(w.doc.name ?? "", (names.get(w.doc.name ?? "") ?? 0) + 1);
  for (const [n, count] of names) if (count > 1) add(M.crossDocument.duplicateWorkers(n));
  const usedBy = new Map<string, string[]>();
  for (const w of c.workers) for (const id of w.doc.machines ?? []) usedBy.set(id, [...(usedBy.get(id) ?? []), w.doc.name ?? ""]);
  for (const [id, sets] of usedBy) if (sets.length > 1) add(M.crossDocument.machineInMultipleWorkers(id, sets));
  const cpMachines = c.controlPlanes.flatMap((cp) => cp.doc.machines ?? []);
  const both = [...new Set(cpMachines.filter((id) => usedBy.has(id)))];
  if (both.length > 0) add(M.crossDocument.machinesInBoth(both));
  const all = new Set([...cpMachines, ...usedBy.keys()]);
  for (const m of c.machines) if (!all.has(m.doc.name ?? "")) add(M.crossDocument.machineNotUsed(m.doc.name ?? ""));
  const locked = new Set(c.machines.filter((m) => m.doc.locked).map((m) => m.doc.name ?? ""));
  for (const id of cpMachines) if (locked.has(id)) add(M.crossDocument.lockedControlPlane(id));
  return out;
}

// ---- load stage ----

interface Loaded {
  kind: KnownKind;
  ctx: DocContext;
  value: unknown;
}

function docLabel(doc: YDoc, kind?: string): string {
  let label = `document ${doc.index + 1}`;
  if (kind !== undefined) {
    const nameNode = doc.root?.kind === "map" ? doc.root.get("name") : undefined;
    const name = nameNode?.kind === "scalar" && nameNode.tag !== "!!null" ? ` ${goQuote(nameNode.text)}` : "";
    label += ` (${kind}${name})`;
  }
  return label;
}

interface LoadError {
  text: string;
  errors: TemplateError[];
}

function loadDocument(doc: YDoc, lines: LineIndex): { loaded?: Loaded; error?: LoadError } {
  const at = (e: string): LoadError => ({
    text: M.load.inDocument(doc.pos.line, doc.pos.col, e),
    errors: [{ document: docLabel(doc), path: "", message: e, line: doc.pos.line, column: doc.pos.col }],
  });
  const root = doc.root;
  if (doc.rootIsAlias || root === undefined || root.kind !== "map") {
    return { error: at(M.load.unexpectedNodeKindExpectingMapping(nodeKindNumber(root, doc.rootIsAlias))) };
  }
  const kindEntry = root.entries.find((e) => e.key === "kind" && !e.merged);
  if (!kindEntry) return { error: at(M.load.kindNotFound) };
  if (kindEntry.value.kind !== "scalar") return { error: at(M.load.unexpectedKindValueType(nodeKindNumber(kindEntry.value))) };
  const kind = kindEntry.value.text;
  if (!Object.hasOwn(KIND_SCHEMAS, kind)) return { error: at(M.load.unknownKind(kind)) };
  const ctx = new DocContext(docLabel(doc, kind), root);
  const schema = KIND_SCHEMAS[kind as KnownKind];
  const res = (schema as z.ZodType).safeParse(project(root));
  const problems: { pos: Pos; message: string; path: string }[] = doc.constructErrors.map((e) => ({ ...e, path: "" }));
  if (!res.success) {
    for (const iss of res.error.issues) {
      const path = iss.path.filter((s): s is Seg => typeof s !== "symbol");
      if (insideDuplicate(root, path)) continue;
      if (iss.code === "unrecognized_keys" && iss.message.startsWith(UNKNOWN_FIELD_MARK)) {
        const goType = iss.message.slice(UNKNOWN_FIELD_MARK.length);
        for (const k of iss.keys) {
          problems.push({ pos: locate(root, path, k) ?? doc.pos, message: M.construct.fieldNotFound(k, goType), path: formatPath([...path, k]) });
        }
      } else {
        problems.push({ pos: locate(root, path) ?? doc.pos, message: iss.message, path: formatPath(path) });
      }
    }
  }
  if (problems.length === 0) return { loaded: { kind: kind as KnownKind, ctx, value: res.data } };
  problems.sort((a, b) => a.pos.line - b.pos.line || a.pos.col - b.pos.col);
  const entries = problems.map((p) => M.construct.line(lines.docLine(doc.contentLine, p.pos.line), p.message));
  return {
    error: {
      text: M.load.decodingDocument(doc.pos.line, doc.pos.col, entries),
      errors: problems.map((p) => ({ document: ctx.document, path: p.path, message: p.message, line: p.pos.line, column: p.pos.col })),
    },
  };
}

function insideDuplicate(root: YNode, path: readonly Seg[]): boolean {
  let n: YNode | undefined = root;
  for (let i = 0; ; i++) {
    if (n === undefined) return false;
    if (n.kind === "map" && n.duplicate) return true;
    if (i >= path.length) return false;
    const s = path[i]!;
    if (n.kind === "map" && typeof s === "string") n = n.get(s);
    else if (n.kind === "seq" && typeof s === "number") n = n.items[s];
    else return false;
  }
}

function loadFailure(errs: LoadError[]): TemplateValidationError {
  return new TemplateValidationError(
    errs.map((e) => M.load.prefix + e.text).join("\n"),
    errs.flatMap((e) => e.errors),
  );
}

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
  const c: Collected = { manifests: [], healthchecks: [], controlPlanes: [], workers: [], machines: [], clusters: 0 };
  for (const d of loaded) {
    switch (d.kind) {
      case "Cluster":
        c.clusters++;
        top.add(validateCluster(d.ctx, d.value as RawCluster, opts, c));
        break;
      case "ControlPlane":
      case "Workers": {
        const doc = d.value as RawMachineSet;
        const r = validateMachineSet(d.ctx, doc, d.kind === "ControlPlane" ? "controlplane" : "worker", opts);
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

  const cluster = c.cluster!;
  const setId = (s: MachineSet, role: "controlplane" | "worker") =>
    role === "controlplane" ? `${cluster.name}-control-planes` : `${cluster.name}-${s.name || "workers"}`;
  const cp = c.controlPlanes[0]!.model!;
  return {
    ok: true,
    template: {
      cluster,
      manifests: c.manifests,
      healthchecks: c.healthchecks,
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
