// Evaluating a compiled condition over the objects observed right now. Never a silent false: a missing object, a
// missing field, an empty selection, a non-bool result and an evaluation error each hold the gate with their own
// explicit reason; only `true` opens it. PURE.
import type { CompiledCondition, Program } from "./compile";
import { maxSelection } from "./cost";
import * as M from "./messages";
import { describeTarget, isNamed } from "./spec";

/** Why a condition holds the gate. */
export type HoldCause =
  /** The expression is false (reason: the message expression, else the expression itself). */
  | "false"
  /** The named object does not exist. */
  | "object-missing"
  /** A field the expression reads is absent (CEL `no such key`). */
  | "field-missing"
  /** The selector matches nothing (and allowEmpty is not set). */
  | "empty"
  /** The expression returned a non-bool, or failed otherwise (wrong field type, division by zero, ...). */
  | "error"
  /** The selection is larger than the expression's nesting allows, or the evaluation ran past its budget. */
  | "cost";

export type ConditionVerdict = { state: "passed" } | { state: "held"; cause: HoldCause; reason: string };

/** A Kubernetes object as JSON (what the watch delivers). */
export type KubeObject = Record<string, unknown> & {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
};

// JSON has one number type; Kubernetes' schemas have int64. Integral numbers become CEL ints (bigint), so counts add
// and compare as users expect (`object.status.readyReplicas + 1`); other numbers stay doubles. Objects are converted
// once per identity: the watch cache hands out the same object until it changes.
const converted = new WeakMap<object, unknown>();
function toCel(v: unknown): unknown {
  if (typeof v === "number") return Number.isSafeInteger(v) ? BigInt(v) : v;
  if (v === null || typeof v !== "object") return v;
  const hit = converted.get(v);
  if (hit !== undefined) return hit;
  const out = Array.isArray(v) ? v.map(toCel) : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  converted.set(v, out);
  return out;
}

interface CelError {
  code?: string;
  summary?: string;
  message?: string;
  node?: { input?: string; start?: number; end?: number };
}

const summaryOf = (e: CelError) => e.summary ?? String(e.message ?? e).split("\n")[0];

/** The source text of the failing access, e.g. `object.status.ceph`, and the field path under the root variable. */
function missingPath(e: CelError): { text: string; path: string } | undefined {
  const n = e.node;
  if (!n || typeof n.input !== "string" || typeof n.start !== "number" || typeof n.end !== "number") return undefined;
  const text = n.input.slice(n.start, n.end);
  const m = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])*\.(.+)$/s.exec(text);
  return { text, path: m ? m[1] : text };
}

/** Has `obj` every key of a plain dotted path? */
function hasPath(obj: unknown, path: string[]): boolean {
  let cur = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== "object" || Array.isArray(cur) || !Object.hasOwn(cur, key)) return false;
    cur = (cur as Record<string, unknown>)[key];
  }
  return true;
}

function refOf(c: CompiledCondition, obj: KubeObject): string {
  const t = c.spec.target;
  return M.objectRef(t.apiVersion, t.kind, obj.metadata?.namespace, String(obj.metadata?.name ?? "?"));
}

function fieldMissing(c: CompiledCondition, e: CelError, objects: readonly KubeObject[]): string {
  const where = missingPath(e);
  const path = where?.path ?? summaryOf(e);
  if (c.variable === "object") return M.fieldAbsent(path, refOf(c, objects[0]));
  // Over a list the failing access names a comprehension variable; name the first object that lacks the field.
  if (/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(path)) {
    const segments = path.split(".");
    const culprit = objects.find((o) => !hasPath(o, segments));
    if (culprit) return M.fieldAbsent(path, refOf(c, culprit));
  }
  return M.fieldAbsent(path, describeTarget(c.spec.target));
}

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "double";
  if (Array.isArray(v)) return "list";
  if (v instanceof Map || typeof v === "object") return "map";
  return typeof v;
}

function preview(v: unknown): string {
  const text = JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? Number(x) : x instanceof Map ? Object.fromEntries(x) : x));
  const s = text === undefined ? String(v) : text;
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function run(p: Program, ctx: Record<string, unknown>): { value: unknown } | { error: CelError } {
  try {
    return { value: p(ctx) };
  } catch (err) {
    return { error: err as CelError };
  }
}

/** Evaluates the condition over the current objects: for a named target, zero or one object. */
export function evaluateCondition(c: CompiledCondition, objects: readonly KubeObject[]): ConditionVerdict {
  const t = c.spec.target;
  if (isNamed(t) && objects.length === 0) {
    return { state: "held", cause: "object-missing", reason: M.objectNotFound(describeTarget(t)) };
  }
  if (!isNamed(t) && objects.length === 0 && !c.spec.allowEmpty) {
    return { state: "held", cause: "empty", reason: M.noObjectsMatch(describeTarget(t)) };
  }
  const max = maxSelection(c.nesting);
  if (objects.length > max) return { state: "held", cause: "cost", reason: M.selectionTooLarge(objects.length, max, c.nesting) };
  const ctx = c.variable === "object" ? { object: toCel(objects[0]) } : { objects: objects.map(toCel) };
  const r = run(c.expression, ctx);
  if ("error" in r) {
    if (r.error.code === "no_such_key") return { state: "held", cause: "field-missing", reason: fieldMissing(c, r.error, objects) };
    return { state: "held", cause: "error", reason: M.evaluationFailed(summaryOf(r.error)) };
  }
  if (r.value === true) return { state: "passed" };
  if (r.value !== false) {
    return { state: "held", cause: "error", reason: M.expressionNotBool(typeName(r.value), preview(r.value)) };
  }
  const plain = M.expressionFalse(c.spec.expression.trim());
  if (!c.message) return { state: "held", cause: "false", reason: plain };
  const m = run(c.message, ctx);
  if ("error" in m) return { state: "held", cause: "false", reason: M.messageFailed(plain, summaryOf(m.error)) };
  if (typeof m.value !== "string") {
    return { state: "held", cause: "false", reason: M.messageFailed(plain, `it returned ${typeName(m.value)}, not a string`) };
  }
  return { state: "held", cause: "false", reason: m.value.trim() === "" ? plain : m.value };
}
