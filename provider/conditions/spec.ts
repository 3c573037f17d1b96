// The typed input of a condition gate, parsed once with zod: the target (one object by name, or every object a label
// selector matches) and the CEL expression / message. Every failure names its field under the caller's prefix, e.g.
// `target.labelSelector.matchExpressions[0].operator` or `conditions[2].expression`. PURE.
import { z } from "zod";
import * as M from "./messages";

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
}

interface TargetBase {
  /** "v1" or "<group>/<version>". */
  apiVersion: string;
  kind: string;
  /** Namespace of a namespaced kind; for a selector, omitted = every namespace. */
  namespace?: string;
}
/** One object, seen by the expression as `object`. */
export interface NamedTarget extends TargetBase {
  name: string;
}
/** Every object matching the selector, seen by the expression as the list `objects`. */
export interface SelectorTarget extends TargetBase {
  labelSelector: LabelSelector;
}
export type ConditionTarget = NamedTarget | SelectorTarget;

export interface ConditionSpec {
  target: ConditionTarget;
  /** CEL, must be a bool: true opens the gate. */
  expression: string;
  /** Optional CEL string saying why the gate holds (evaluated when the expression is false). */
  message?: string;
  /** Selector targets only: an empty selection evaluates the expression (default: it holds the gate). */
  allowEmpty?: boolean;
}

export interface FieldFailure {
  /** Full path of the input, e.g. `target.name` or `conditions[0].expression`. */
  field: string;
  message: string;
}

export const isNamed = (t: ConditionTarget): t is NamedTarget => "name" in t && typeof (t as NamedTarget).name === "string";

const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// <group>/<version> (a CRD's version is any DNS-1035 label, conventionally v1, v1beta2, ...) or a core version.
const API_VERSION = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[a-z]([-a-z0-9]*[a-z0-9])?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf("/");
  const [prefix, name] = slash >= 0 ? [key.slice(0, slash), key.slice(slash + 1)] : [undefined, key];
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return "the prefix before / must be a DNS subdomain (lowercase letters, digits, '-' and '.')";
  }
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name)) {
    return "the name must be 1-63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit";
  }
  return undefined;
}

function labelValueProblem(value: string): string | undefined {
  if (value === "") return undefined;
  if (value.length > 63 || !LABEL_NAME.test(value)) {
    return "at most 63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit";
  }
  return undefined;
}

const OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"] as const;

const labelSelector = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z.array(z.strictObject({
    key: z.string(),
    operator: z.string(),
    values: z.array(z.string()).optional(),
  })).optional(),
}).superRefine((sel, ctx) => {
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
    const kp = labelKeyProblem(k);
    if (kp) ctx.addIssue({ code: "custom", path: ["matchLabels", k], message: M.labelKeyInvalid(k, kp) });
    const vp = labelValueProblem(v);
    if (vp) ctx.addIssue({ code: "custom", path: ["matchLabels", k], message: M.labelValueInvalid(v, vp) });
  }
  (sel.matchExpressions ?? []).forEach((e, i) => {
    const kp = labelKeyProblem(e.key);
    if (kp) ctx.addIssue({ code: "custom", path: ["matchExpressions", i, "key"], message: M.labelKeyInvalid(e.key, kp) });
    if (!(OPERATORS as readonly string[]).includes(e.operator)) {
      ctx.addIssue({ code: "custom", path: ["matchExpressions", i, "operator"], message: M.operatorInvalid(e.operator) });
      return;
    }
    const set = e.operator === "In" || e.operator === "NotIn";
    if (set && (e.values ?? []).length === 0) {
      ctx.addIssue({ code: "custom", path: ["matchExpressions", i, "values"], message: M.valuesNeeded(e.operator) });
    }
    if (!set && (e.values ?? []).length > 0) {
      ctx.addIssue({ code: "custom", path: ["matchExpressions", i, "values"], message: M.valuesForbidden(e.operator) });
    }
    (e.values ?? []).forEach((v, j) => {
      const vp = labelValueProblem(v);
      if (vp) ctx.addIssue({ code: "custom", path: ["matchExpressions", i, "values", j], message: M.labelValueInvalid(v, vp) });
    });
  });
});

const target = z.strictObject({
  apiVersion: z.string().refine((v) => API_VERSION.test(v), { error: (i) => M.apiVersionInvalid(String(i.input)) }),
  kind: z.string().refine((v) => KIND.test(v), { error: (i) => M.kindInvalid(String(i.input)) }),
  namespace: z.string().refine((v) => v.length <= 63 && DNS_LABEL.test(v), {
    error: (i) => M.nameInvalid(String(i.input), "a namespace is a DNS label (at most 63 lowercase letters, digits and '-')"),
  }).optional(),
  name: z.string().refine((v) => v.length > 0 && v.length <= 253 && !v.includes("/") && v !== "." && v !== "..", {
    error: (i) => M.nameInvalid(String(i.input), "1-253 characters, no '/'"),
  }).optional(),
  labelSelector: labelSelector.optional(),
}).superRefine((t, ctx) => {
  if (t.name !== undefined && t.labelSelector !== undefined) ctx.addIssue({ code: "custom", path: [], message: M.targetBoth() });
  if (t.name === undefined && t.labelSelector === undefined) ctx.addIssue({ code: "custom", path: [], message: M.targetNeedsOne() });
});

const condition = z.strictObject({
  target,
  expression: z.string().refine((v) => v.trim() !== "", { error: M.required("a CEL expression that is true when the next node may go") }),
  message: z.string().optional(),
  allowEmpty: z.boolean().optional(),
});

/** `a.b[0].c` from a zod path, appended to the caller's prefix. */
function fieldPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else if (typeof p === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(p)) out += out === "" ? p : `.${p}`;
    else out += `[${JSON.stringify(String(p))}]`;
  }
  return out;
}

const KNOWN: Record<string, readonly string[]> = {
  "": ["target", "expression", "message", "allowEmpty"],
  target: ["apiVersion", "kind", "namespace", "name", "labelSelector"],
  labelSelector: ["matchLabels", "matchExpressions"],
};

function issueText(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return M.required(`a ${issue.expected}`);
      return `must be a ${issue.expected}, got ${JSON.stringify(issue.input) ?? typeof issue.input}`;
    case "unrecognized_keys": {
      const last = issue.path.filter((p) => typeof p === "string").pop() as string | undefined;
      const known = KNOWN[last === "target" || last === "labelSelector" ? last : ""] ?? [];
      return issue.keys.map((k) => M.unknownKey(k, known)).join("; ");
    }
    default:
      return issue.message;
  }
}

/** Drops null values (Pulumi passes unset optional inputs as null). */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null && x !== undefined).map(([k, x]) => [k, withoutNulls(x)]));
  }
  return v;
}

/** Structural parse of a condition input; `prefix` names it in failures ("" for a resource's own properties). */
export function parseConditionSpec(input: unknown, prefix = ""): { spec: ConditionSpec; failures: [] } | { spec?: undefined; failures: FieldFailure[] } {
  const r = condition.safeParse(withoutNulls(input));
  if (r.success) {
    const { target: t, ...rest } = r.data;
    const base = { apiVersion: t.apiVersion, kind: t.kind, ...(t.namespace !== undefined ? { namespace: t.namespace } : {}) };
    const spec: ConditionSpec = {
      ...rest,
      target: t.name !== undefined ? { ...base, name: t.name } : { ...base, labelSelector: t.labelSelector as LabelSelector },
    };
    return { spec, failures: [] };
  }
  return { failures: r.error.issues.map((i) => ({ field: fieldPath(prefix, i.path), message: issueText(i) })) };
}

/** The selector in the API server's query syntax (`app=x,tier in (a,b),!legacy`), as metav1 renders it. */
export function selectorString(sel: LabelSelector): string {
  const parts: string[] = [];
  for (const k of Object.keys(sel.matchLabels ?? {}).sort()) parts.push(`${k}=${sel.matchLabels![k]}`);
  for (const e of sel.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(",");
    if (e.operator === "In") parts.push(`${e.key} in (${values})`);
    else if (e.operator === "NotIn") parts.push(`${e.key} notin (${values})`);
    else if (e.operator === "Exists") parts.push(e.key);
    else parts.push(`!${e.key}`);
  }
  return parts.join(",");
}

/** How messages name the target: one object, or the selection. */
export function describeTarget(t: ConditionTarget): string {
  return isNamed(t)
    ? M.objectRef(t.apiVersion, t.kind, t.namespace, t.name)
    : M.selectionRef(t.apiVersion, t.kind, t.namespace, selectorString(t.labelSelector));
}
