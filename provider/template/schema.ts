// zod schemas of the Omni template documents, applied to a projection of the YAML node tree in which every scalar
// keeps its resolved tag (YScalar), so that type checks follow go-yaml's strict decoding (KnownFields) and produce
// go-yaml's construct messages. The same schemas validate plain JS objects (the Pulumi healthcheck input), after
// `projectPlain` gives them the same shape.
import { z } from "zod";
import { YMap, YScalar, YSeq, type YNode, type Pos } from "./yamlnodes";
import { construct as msg } from "./messages";
import { parseDurationNs } from "./duration";

// ---- projection ----

/** Projected collections remember the node they came from (for positions and inline re-encoding). */
const origin = new WeakMap<object, YNode>();

export type Projected = YScalar | ProjectedMap | Projected[] | undefined;
export interface ProjectedMap {
  [key: string]: Projected;
}

export function project(n: YNode): Projected {
  if (n.kind === "scalar") return n.tag === "!!null" ? undefined : n;
  if (n.kind === "seq") {
    const a = n.items.map(project);
    origin.set(a, n);
    return a;
  }
  const o = Object.create(null) as ProjectedMap;
  for (const e of n.entries) o[e.key] = project(e.value);
  origin.set(o, n);
  return o;
}

export function originOf(v: object): YNode | undefined {
  return origin.get(v);
}

const NOWHERE: Pos = { line: 0, col: 0 };

/** Turns a plain JS value (Pulumi input) into a node tree, so it goes through the same schema and messages. */
export function plainToNode(v: unknown, path = "", pos: Pos = NOWHERE): YNode {
  if (v === null || v === undefined) return new YScalar("!!null", "", pos);
  if (typeof v === "string") return new YScalar("!!str", v, pos);
  if (typeof v === "boolean") return new YScalar("!!bool", String(v), pos);
  if (typeof v === "number") return new YScalar(Number.isInteger(v) ? "!!int" : "!!float", String(v), pos);
  if (typeof v === "bigint") return new YScalar("!!int", v.toString(), pos);
  if (Array.isArray(v)) {
    const s = new YSeq(pos);
    v.forEach((item, i) => s.items.push(plainToNode(item, `${path}[${i}]`, pos)));
    return s;
  }
  if (typeof v === "object") {
    const m = new YMap(pos);
    for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
      m.entries.push({ key: k, keyPos: pos, value: plainToNode(val, `${path}.${k}`, pos) });
    }
    return m;
  }
  return new YScalar("!!str", String(v), pos);
}

// ---- helpers ----

type Ctx = z.RefinementCtx;

function fail(ctx: Ctx, message: string): never {
  ctx.addIssue({ code: "custom", message });
  return z.NEVER;
}

function isMapValue(v: unknown): v is ProjectedMap {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof YScalar);
}

function tagOf(v: unknown): string {
  if (v instanceof YScalar) return v.tag;
  if (Array.isArray(v)) return (originOf(v)?.tag as string | undefined) ?? "!!seq";
  const o = typeof v === "object" && v !== null ? originOf(v) : undefined;
  return o?.tag ?? "!!map";
}

function cannot(ctx: Ctx, v: unknown, goType: string): never {
  return fail(ctx, msg.cannotConstruct(tagOf(v), v instanceof YScalar ? v.text : undefined, goType));
}

const STRINGY = new Set(["!!str", "!!int", "!!float", "!!bool"]);

/** The scalar's text as Go would decode it into a string; undefined after reporting a value that is not one. */
function toGoString(v: unknown, ctx: Ctx, goType = "string"): string | undefined {
  if (v instanceof YScalar && STRINGY.has(v.tag)) return v.text;
  cannot(ctx, v, goType);
  return undefined;
}

export const goString = z
  .unknown()
  .transform((v, ctx): string | undefined => (v === undefined ? undefined : toGoString(v, ctx) ?? z.NEVER))
  .optional();

const YAML11_TRUE = new Set(["true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON"]);
const YAML11_FALSE = new Set(["false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off", "OFF"]);

export const goBool = z
  .unknown()
  .transform((v, ctx): boolean | undefined => {
    if (v === undefined) return undefined;
    if (v instanceof YScalar) {
      if (v.tag === "!!bool") return YAML11_TRUE.has(v.text);
      if (v.tag === "!!str" && !["true", "True", "TRUE", "false", "False", "FALSE"].includes(v.text)) {
        if (YAML11_TRUE.has(v.text)) return true;
        if (YAML11_FALSE.has(v.text)) return false;
      }
    }
    return cannot(ctx, v, "bool");
  })
  .optional();

export const goUint32 = z
  .unknown()
  .transform((v, ctx): number | undefined => {
    if (v === undefined) return undefined;
    if (v instanceof YScalar && (v.tag === "!!int" || v.tag === "!!float")) {
      const t = v.text.replace(/_/g, "");
      let n: number;
      if (v.tag === "!!int") {
        const neg = t.startsWith("-");
        const body = t.replace(/^[-+]/, "");
        n = /^0[xX]/.test(body) ? parseInt(body.slice(2), 16) : /^0[oO]/.test(body) ? parseInt(body.slice(2), 8)
          : /^0[bB]/.test(body) ? parseInt(body.slice(2), 2) : /^0[0-7]+$/.test(body) ? parseInt(body.slice(1), 8) : parseInt(body, 10);
        if (neg) n = -n;
      } else n = Number(t);
      if (Number.isInteger(n) && n >= 0 && n <= 0xffffffff) return n;
    }
    return cannot(ctx, v, "uint32");
  })
  .optional();

export interface GoDuration {
  /** As written. */
  text: string;
  /** Milliseconds (may be fractional, or negative). */
  ms: number;
}

export const goDuration = z
  .unknown()
  .transform((v, ctx): GoDuration | undefined => {
    if (v === undefined) return undefined;
    if (v instanceof YScalar) {
      if (v.tag === "!!str") {
        try {
          return { text: v.text, ms: Number(parseDurationNs(v.text)) / 1e6 };
        } catch {
          return cannot(ctx, v, "time.Duration");
        }
      }
      // go-yaml: the integer 0 is accepted; integral floats are taken as nanoseconds (a quirk kept as is).
      if (v.tag === "!!int" && /^[-+]?0+$/.test(v.text.replace(/_/g, ""))) return { text: v.text, ms: 0 };
      if (v.tag === "!!float" && Number.isInteger(Number(v.text.replace(/_/g, "")))) {
        return { text: v.text, ms: Number(v.text.replace(/_/g, "")) / 1e6 };
      }
    }
    return cannot(ctx, v, "time.Duration");
  })
  .optional();

function stringList(goType: string) {
  return z
    .unknown()
    .transform((v, ctx): string[] | undefined => {
      if (v === undefined) return undefined;
      if (!Array.isArray(v)) return cannot(ctx, v, goType);
      const out: string[] = [];
      v.forEach((item, i) => {
        if (item === undefined) return; // null items are dropped
        if (item instanceof YScalar && STRINGY.has(item.tag)) out.push(item.text);
        else ctx.addIssue({ code: "custom", path: [i], message: msg.cannotConstruct(tagOf(item), item instanceof YScalar ? item.text : undefined, "string") });
      });
      return out;
    })
    .optional();
}

export const optionalStringList = stringList("[]string");
export const machineIdList = stringList("models.MachineIDList");

export const stringMap = z
  .unknown()
  .transform((v, ctx): Record<string, string> | undefined => {
    if (v === undefined) return undefined;
    if (!isMapValue(v)) return cannot(ctx, v, "map[string]string");
    const out: Record<string, string> = Object.create(null);
    for (const k of Object.keys(v)) {
      const val = v[k];
      if (val === undefined) out[k] = "";
      else if (val instanceof YScalar && STRINGY.has(val.tag)) out[k] = val.text;
      else ctx.addIssue({ code: "custom", path: [k], message: msg.cannotConstruct(tagOf(val), val instanceof YScalar ? val.text : undefined, "string") });
    }
    return out;
  })
  .optional();

/** Inline content (patch `inline`, manifest `inline`, healthcheck `job`): a string, a mapping, or a list of mappings. */
export type InlineContent =
  | { form: "string"; text: string }
  | { form: "mapping"; node: YMap }
  | { form: "sequence"; nodes: YMap[] };

export const inlineContent = z
  .unknown()
  .transform((v, ctx): InlineContent | undefined => {
    if (v === undefined) return undefined;
    if (v instanceof YScalar) {
      if (v.tag === "!!str") return { form: "string", text: v.text };
      return fail(ctx, msg.expectedString(v.tag));
    }
    if (Array.isArray(v)) {
      const nodes: YMap[] = [];
      v.forEach((item, i) => {
        const n = item === undefined ? undefined : isMapValue(item) ? originOf(item) : undefined;
        if (n && n.kind === "map") nodes.push(n);
        else ctx.addIssue({ code: "custom", path: [i], message: msg.cannotConstruct(item === undefined ? "!!null" : tagOf(item), item instanceof YScalar ? item.text : undefined, "map[string]interface {}") });
      });
      return { form: "sequence", nodes };
    }
    const n = originOf(v as object);
    if (n && n.kind === "map") return { form: "mapping", node: n };
    return fail(ctx, msg.unsupportedInlineKind(0));
  })
  .optional();

/** A Go string field that takes one of `allowed`; any other string is reported with `invalid(value)`. */
function goEnum<T extends string>(allowed: readonly T[], invalid: (value: string) => string) {
  return z
    .unknown()
    .transform((v, ctx): T | undefined => {
      if (v === undefined) return undefined;
      const s = toGoString(v, ctx);
      if (s === undefined) return z.NEVER;
      if ((allowed as readonly string[]).includes(s)) return s as T;
      return fail(ctx, invalid(s));
    })
    .optional();
}

export const manifestMode = goEnum(["one-time", "full"], msg.unknownMode);

const strategyType = goEnum(["Rolling", "Unset"], msg.invalidStrategyType);

export type MachineCount = { unlimited: true } | { unlimited: false; count: number };

const machineCount = z
  .unknown()
  .transform((v, ctx): MachineCount | undefined => {
    if (v === undefined) return undefined;
    const s = toGoString(v, ctx);
    if (s === undefined) return z.NEVER;
    if (["unlimited", "infinity", "∞", "Unlimited"].includes(s)) return { unlimited: true };
    if (s === "Static") return { unlimited: false, count: 0 };
    if (!/^[0-9]+$/.test(s)) return fail(ctx, msg.invalidMachineCount(s, "invalid syntax"));
    const n = Number(s);
    if (n > 0xffffffff) return fail(ctx, msg.invalidMachineCount(s, "value out of range"));
    return { unlimited: false, count: n };
  })
  .optional();

/** Marker message of a strict object's unknown keys; turned into one `field <k> not found in type <T>` per key. */
export const UNKNOWN_FIELD_MARK = "\u0000unknown-field:";

function struct<S extends z.ZodRawShape>(goType: string, shape: S) {
  return z
    .unknown()
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the projected YAML value, typed by the .pipe() schema it goes on to
    .transform((v, ctx): any => (v === undefined ? undefined : isMapValue(v) ? v : cannot(ctx, v, goType)))
    .pipe(
      z
        .strictObject(shape, { error: (iss) => (iss.code === "unrecognized_keys" ? UNKNOWN_FIELD_MARK + goType : undefined) })
        .optional(),
    )
    .optional();
}

function list<T extends z.ZodType>(goType: string, item: T) {
  return z
    .unknown()
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the projected YAML value, typed by the .pipe() schema it goes on to
    .transform((v, ctx): any => {
      if (v === undefined) return undefined;
      if (!Array.isArray(v)) return cannot(ctx, v, goType);
      // a null entry decodes into the zero value of the struct
      return v.map((x) => (x === undefined ? (Object.create(null) as ProjectedMap) : x));
    })
    .pipe(z.array(item).optional())
    .optional();
}

// ---- document models ----

const descriptors = { labels: stringMap, annotations: stringMap };

export const patchSchema = struct("models.Patch", {
  name: goString,
  idOverride: goString,
  file: goString,
  inline: inlineContent,
  ...descriptors,
});

export const manifestSchema = struct("models.KubernetesManifest", {
  name: goString,
  mode: manifestMode,
  inline: inlineContent,
  file: goString,
  ...descriptors,
});

const healthcheckShape = {
  name: goString,
  idOverride: goString,
  job: inlineContent,
  file: goString,
  interval: goDuration,
  ...descriptors,
};
export const healthcheckSchema = struct("models.KubernetesHealthCheck", healthcheckShape);

const patches = list("models.PatchList", patchSchema);
const common = { kind: z.unknown().optional(), ...descriptors };

export const clusterSchema = struct("models.Cluster", {
  ...common,
  name: goString,
  kubernetes: struct("models.KubernetesCluster", {
    version: goString,
    manifests: list("models.KubernetesManifestsList", manifestSchema),
    healthchecks: list("models.KubernetesHealthCheckList", healthcheckSchema),
  }),
  talos: struct("models.TalosCluster", { version: goString }),
  features: struct("models.Features", {
    diskEncryption: goBool,
    enableWorkloadProxy: goBool,
    useEmbeddedDiscoveryService: goBool,
    disablePublicDiscoveryService: goBool,
    enableNodeAuditSkip: goBool,
    backupConfiguration: struct("models.BackupConfiguration", { interval: goDuration }),
  }),
  patches,
  systemExtensions: optionalStringList,
  kernelArgs: optionalStringList,
});

const strategy = struct("models.UpdateStrategyConfig", {
  type: strategyType,
  rolling: struct("models.RollingUpdateStrategyConfig", { maxParallelism: goUint32 }),
});

function machineSetSchema(goType: string) {
  return struct(goType, {
    ...common,
    name: goString,
    machines: machineIdList,
    machineClass: struct("models.MachineClassConfig", { name: goString, size: machineCount }),
    bootstrapSpec: struct("models.BootstrapSpec", { clusterUUID: goString, snapshot: goString }),
    updateStrategy: strategy,
    deleteStrategy: strategy,
    upgradeStrategy: strategy,
    patches,
    systemExtensions: optionalStringList,
    kernelArgs: optionalStringList,
  });
}

export const controlPlaneSchema = machineSetSchema("models.ControlPlane");
export const workersSchema = machineSetSchema("models.Workers");

export const machineSchema = struct("models.Machine", {
  ...common,
  name: goString,
  locked: goBool,
  install: struct("models.MachineInstall", { disk: goString, diskSelector: goString }),
  patches,
  systemExtensions: optionalStringList,
  kernelArgs: optionalStringList,
});

export const KIND_SCHEMAS = {
  Cluster: clusterSchema,
  ControlPlane: controlPlaneSchema,
  Workers: workersSchema,
  Machine: machineSchema,
} as const;

export type KnownKind = keyof typeof KIND_SCHEMAS;

// ---- decoded shapes (what the schemas produce) ----

export interface Descriptors {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RawPatch extends Descriptors {
  name?: string;
  idOverride?: string;
  file?: string;
  inline?: InlineContent;
}
export interface RawManifest extends Descriptors {
  name?: string;
  mode?: "one-time" | "full";
  inline?: InlineContent;
  file?: string;
}
export interface RawHealthcheck extends Descriptors {
  name?: string;
  idOverride?: string;
  job?: InlineContent;
  file?: string;
  interval?: GoDuration;
}
export interface RawCluster extends Descriptors {
  name?: string;
  kubernetes?: { version?: string; manifests?: RawManifest[]; healthchecks?: RawHealthcheck[] };
  talos?: { version?: string };
  features?: {
    diskEncryption?: boolean;
    enableWorkloadProxy?: boolean;
    useEmbeddedDiscoveryService?: boolean;
    disablePublicDiscoveryService?: boolean;
    enableNodeAuditSkip?: boolean;
    backupConfiguration?: { interval?: GoDuration };
  };
  patches?: RawPatch[];
  systemExtensions?: string[];
  kernelArgs?: string[];
}
export interface RawStrategy {
  type?: "Rolling" | "Unset";
  rolling?: { maxParallelism?: number };
}
export interface RawMachineSet extends Descriptors {
  name?: string;
  machines?: string[];
  machineClass?: { name?: string; size?: MachineCount };
  bootstrapSpec?: { clusterUUID?: string; snapshot?: string };
  updateStrategy?: RawStrategy;
  deleteStrategy?: RawStrategy;
  upgradeStrategy?: RawStrategy;
  patches?: RawPatch[];
  systemExtensions?: string[];
  kernelArgs?: string[];
}
export interface RawMachine extends Descriptors {
  name?: string;
  locked?: boolean;
  install?: { disk?: string; diskSelector?: string };
  patches?: RawPatch[];
  systemExtensions?: string[];
  kernelArgs?: string[];
}
