// Every user-visible message of provider/template, in Omni's wording where Omni has one
// (../shared/reference/omni-cluster-templates.md, omni-behaviour.md §1–2). Messages of our own stricter rules are
// marked "talos-gate". Quoting uses Go's %q (goQuote) as Omni does.
import { goQuote, goQuoteList, goTimeQuote } from "./goquote";

export const OMNI_PREFIX = "omni.sidero.dev/";
export const TALOS_GATE_PREFIX = "talos-gate.dev/";
export const RESERVED_PREFIXES = [OMNI_PREFIX, TALOS_GATE_PREFIX] as const;

const q = goQuote;

// ---- Go duration parser (time.ParseDuration) ----
export const duration = {
  invalid: (s: string) => `time: invalid duration ${goTimeQuote(s)}`,
  missingUnit: (s: string) => `time: missing unit in duration ${goTimeQuote(s)}`,
  unknownUnit: (unit: string, s: string) => `time: unknown unit ${goTimeQuote(unit)} in duration ${goTimeQuote(s)}`,
};

// ---- aggregation (hashicorp/go-multierror format) ----
export function multiErrorText(entries: readonly string[]): string {
  const head = entries.length === 1 ? "1 error occurred:" : `${entries.length} errors occurred:`;
  return `${head}\n${entries.map((e) => `\t* ${e}`).join("\n")}\n\n`;
}

// ---- input / YAML stream (load stage) ----
export const load = {
  prefix: "error loading template: ",
  decodeTemplate: (err: string) => `error decoding template: ${err}`,
  inDocument: (line: number, col: number, err: string) => `error in document at line ${line}:${col}: ${err}`,
  decodingDocument: (line: number, col: number, constructErrors: readonly string[]) =>
    `error decoding document at line ${line}:${col}: yaml: construct errors: ${constructErrors.join("; ")}`,
  unexpectedNodeKindExpectingMapping: (kind: number) => `unexpected node kind ${kind}, expecting mapping`,
  unexpectedNodeKind: (kind: number) => `unexpected node kind ${kind}`,
  unexpectedKindValueType: (kind: number) => `unexpected value type for kind field ${kind}`,
  kindNotFound: "kind field not found",
  unknownKind: (kind: string) => `unknown model kind ${q(kind)}`,
  yamlSyntax: (line: number, msg: string) => `yaml: line ${line}: ${msg}`,
  controlCharacters: "yaml: control characters are not allowed",
  invalidUtf8: "yaml: invalid UTF-8 byte sequence",
  // talos-gate: hostile-input limits (go-yaml has the first two in other words)
  tooLarge: (bytes: number, limit: number) =>
    `template is too large: ${bytes} bytes, the limit is ${limit} bytes; split it or raise the limit`,
  excessiveAliasing: "yaml: document contains excessive aliasing",
  tooDeep: (limit: number) => `yaml: exceeded max depth of ${limit}`,
  tooManyDocuments: (limit: number) => `yaml: more than ${limit} documents in the template`,
};

// ---- construct errors (strict decode) ----
export const construct = {
  line: (n: number, msg: string) => `line ${n}: ${msg}`,
  fieldNotFound: (key: string, goType: string) => `field ${key} not found in type ${goType}`,
  duplicateKey: (key: string, firstLine: number) => `mapping key ${q(key)} already defined at line ${firstLine}`,
  cannotConstruct: (tag: string, value: string | undefined, goType: string) =>
    value === undefined ? `cannot construct ${tag} into ${goType}` : `cannot construct ${tag} \`${shortValue(value)}\` into ${goType}`,
  expectedString: (tag: string) => `expected string, but got ${tag}`,
  unsupportedInlineKind: (kind: number) => `unsupported inline node kind ${kind}`,
  unknownMode: (mode: string) => `unknown mode name ${q(mode)}`,
  invalidStrategyType: (t: string) => `invalid update strategy type ${t}`,
  invalidMachineCount: (text: string, reason: "invalid syntax" | "value out of range") =>
    `invalid machine count ${text}: strconv.ParseUint: parsing ${q(text)}: ${reason}`,
  durationError: (err: string) => err,
};

/** go-yaml shows values longer than 10 characters as their first 7 followed by "...". */
function shortValue(v: string): string {
  const chars = [...v];
  return chars.length > 10 ? chars.slice(0, 7).join("") + "..." : v;
}

// ---- descriptors (labels / annotations) ----
export const descriptors = {
  reservedLabel: (key: string, prefix: string) => `label ${q(key)} is invalid: prefix ${q(prefix)} is reserved for internal use`,
  reservedAnnotation: (key: string, prefix: string) =>
    `annotation ${q(key)} is invalid: prefix ${q(prefix)} is reserved for internal use`,
};

// ---- documents ----
export const cluster = {
  wrap: (name: string) => `error validating cluster ${q(name)}: `,
  nameRequired: "name is required",
  nameChars: "name should only contain letters, digits, dashes and underscores",
  kubernetesVersionWrap: "error validating Kubernetes version: ",
  talosVersionWrap: "error validating Talos version: ",
  versionRequired: "version is required",
  versionSemver: (err: string) => `version should be in semver format: ${err}`,
  versionV: "version should start with 'v'",
  diskEncryption: "disk encryption is supported only for Talos version >= 1.5.0",
};

export const machineSet = {
  controlPlaneWrap: "controlplane is invalid: ",
  workersWrap: "workers is invalid: ",
  controlPlaneName: "custom name is not allowed in the controlplane",
  clusterUUIDRequired: "clusterUUID is required in bootstrapSpec",
  snapshotRequired: "snapshot is required in bootstrapSpec",
  updateStrategyNotAllowed: "updateStrategy is not allowed in the controlplane",
  deleteStrategyNotAllowed: "deleteStrategy is not allowed in the controlplane",
  workersReservedName: (name: string) => `name ${q(name)} cannot be used in workers`,
  bootstrapSpecInWorkers: "bootstrapSpec is not allowed in workers",
  machinesAndClass: "machine set can not have both machines and machine class defined",
  kernelArgsWithClass: "kernelArgs cannot be defined for machine set since it uses machine class",
  invalidMachineId: (id: string, err: string) => `invalid machine ID ${q(id)}: ${err}`,
};

export const machine = {
  wrap: (name: string) => `machine ${q(name)} is invalid: `,
  nameRequired: "name is required for machine",
  installExclusive: "install.disk and install.diskSelector are mutually exclusive",
};

export const uuid = {
  length: (n: number) => `invalid UUID length: ${n}`,
  urnPrefix: (first9: string) => `invalid urn prefix: ${q(first9)}`,
  format: "invalid UUID format",
};

export const patch = {
  wrap: (name: string) => `patch ${q(name)} is invalid: `,
  exclusive: "path and inline are mutually exclusive",
  required: "path or inline is required",
  failedToAccess: (file: string, err: string) => `failed to access ${q(file)}: ${err}`,
  nameRequired: "either name or idOverride is required for inline patches",
  // talos-gate: patch content is parsed as YAML only (no Talos config loader)
  invalidYaml: (file: string, err: string) => `failed to validate patch ${q(file)}: ${err}`,
  invalidInlineYaml: (name: string, err: string) => `failed to validate inline patch ${q(name)}: ${err}`,
};

export const manifest = {
  nameEmpty: "kubernetes manifest name is empty",
  modeNotSet: (name: string) => `kubernetes manifest ${q(name)} mode is not set`,
  exclusive: "path and inline are mutually exclusive",
  required: "path or inline is required",
  descriptorsWrap: (name: string) => `kubernetes manifest ${q(name)} descriptors validation failed: `,
  failedToAccess: (file: string, err: string) => `failed to access ${q(file)}: ${err}`,
  duplicate: (name: string) => `duplicate manifest name ${q(name)}`,
  // talos-gate (stricter: the manifests are applied server-side later)
  invalid: (name: string, err: string) => `kubernetes manifest ${q(name)} is invalid: ${err}`,
  documentNotObject: (i: number) => `document ${i} is not a Kubernetes object (a mapping)`,
  documentMissing: (i: number, field: string) => `document ${i} has no ${field}`,
};

export const healthcheck = {
  nameRequired: "either name or idOverride is required for a healthcheck",
  exclusive: (id: string) => `healthcheck ${q(id)}: job and file are mutually exclusive`,
  required: (id: string) => `healthcheck ${q(id)}: job or file is required`,
  failedToAccess: (id: string, file: string, err: string) => `healthcheck ${q(id)}: failed to access ${q(file)}: ${err}`,
  invalidJob: (id: string, err: string) => `healthcheck ${q(id)}: invalid job manifest: ${err}`,
  duplicate: (key: string) => `duplicate healthcheck ${q(key)}`,
  // Omni's server-side rule, reported at template time
  intervalMin: (id: string) => `healthcheck ${q(id)}: healthcheck interval must be at least 5s`,
  intervalMax: (id: string, max: string) =>
    `healthcheck ${q(id)}: healthcheck interval is longer than a timer can wait (2^31 ms, about 24 days); use at most ${max}`,
  // talos-gate (stricter than Omni: otherwise the upgrade fails half-way)
  duplicateId: (id: string) => `duplicate healthcheck ID ${q(id)}: two healthchecks would share the runner Job`,
  jobKind: (id: string, kind: string | undefined) =>
    `healthcheck ${q(id)}: job manifest must be kind: Job, got ${kind === undefined ? "none" : q(kind)}`,
  jobApiVersion: (id: string, v: string | undefined) =>
    `healthcheck ${q(id)}: job manifest must be apiVersion: batch/v1, got ${v === undefined ? "none" : q(v)}`,
  jobNoContainers: (id: string) =>
    `healthcheck ${q(id)}: job manifest must have at least one container in spec.template.spec.containers`,
  jobOneDocument: (n: number) => `expected exactly one Kubernetes object, got ${n} documents`,
  jobNotObject: "the manifest is not a Kubernetes object (a mapping)",
  jobFieldType: (field: string, type: string) => `${field} must be ${type}`,
  runnerName: (id: string, jobName: string, errs: readonly string[]) =>
    `healthcheck ID ${q(id)} cannot be used to build the runner Job name ${q(jobName)}: ${errs.join("; ")}`,
};

/** beforeNode / afterNode hooks (talos-gate): Jobs run once per node around its upgrade. */
export const hook = {
  notObject: (got: unknown) =>
    `must be a hook: { name, job | file, timeout? } (a Job that runs once per node), got ${JSON.stringify(got)}`,
  noInterval: "a hook runs once per node and stops the rollout when it fails; it has no interval",
  unknownKey: (key: string) => `unknown field ${q(key)}; a hook has name, idOverride, job, file and timeout`,
  nameTooLong: (jobName: string, max: number) =>
    `the runner Job name ${q(jobName)} leaves no room for the per-node suffix (at most ${max} characters before it); ` +
    "use a shorter name or idOverride",
  reservedEnv: (container: string, name: string) =>
    `container ${q(container)} sets env ${name}, which talos-gate sets for every hook Job (the node, its role and the phase)`,
  timeoutInvalid: (v: unknown, err: string) => `timeout ${JSON.stringify(v)} is invalid: ${err}; use a Go duration such as "10m"`,
  timeoutTooShort: "timeout must be at least 1s",
  timeoutTooLong: (max: string) => `timeout is longer than a timer can wait (2^31 ms, about 24 days); use at most ${max}`,
};

/** Kubernetes' own DNS-1123 label messages (apimachinery validation). */
export const dns = {
  maxLength: (n: number) => `must be no more than ${n} characters`,
  label:
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end " +
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
};

export const crossDocument = {
  clusterCount: (n: number) => `template should contain 1 cluster, got ${n}`,
  controlPlaneCount: (n: number) => `template should contain 1 controlplane, got ${n}`,
  duplicateWorkers: (name: string) => `duplicate workers with name ${q(name)}`,
  machineInMultipleWorkers: (id: string, sets: readonly string[]) =>
    `machine ${q(id)} is used in multiple workers: ${goQuoteList(sets)}`,
  machinesInBoth: (ids: readonly string[]) => `machines [${ids.join(" ")}] are used in both controlplane and workers`,
  machineNotUsed: (name: string) => `machine ${q(name)} is not used in controlplane or workers`,
  lockedControlPlane: (id: string) => `machine ${q(id)} is locked and used in controlplane`,
};

/** OS errors as Go prints them (`statat <path>: no such file or directory`). */
export const fileAccess = {
  pathError: (op: "statat" | "openat", path: string, err: string) => `${op} ${path}: ${err}`,
  escapes: "path escapes from parent",
  noSuchFile: "no such file or directory",
  permissionDenied: "permission denied",
  isDirectory: "is a directory",
  notDirectory: "not a directory",
  // talos-gate
  tooLarge: (bytes: number, limit: number) => `file is too large: ${bytes} bytes, the limit is ${limit} bytes`,
  noReader: "file references need a file reader (none was given)",
};

// ---- CLI ----
export const cli = {
  validUsage: "usage: talos-gate validate [--json] [--allowed-dir <dir>] <template.yaml>",
  valid: "valid",
  cannotRead: (file: string, err: string) => `cannot read template ${q(file)}: ${err}`,
};
