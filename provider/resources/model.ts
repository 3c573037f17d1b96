// What every resource model shares: Pulumi's unknown sentinel, the string fields state may hold as null or "", the
// id rule (template/ids.ts), the file reader the models are given, and the ONE place zod issues become Pulumi check failures.
// PURE: no Pulumi, no I/O (files are read only through the injected `FileReader`).
import * as fs from "node:fs";
import { z } from "zod";

/** The value `check` and `diff` see for inputs not known during preview (pulumi.runtime.unknownValue). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** True if the value, or anything inside it, is not known yet (preview of a value computed by another resource). */
export function hasUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (Array.isArray(v)) return v.some(hasUnknown);
  if (v && typeof v === "object") return Object.values(v).some(hasUnknown);
  return false;
}

/** Stable JSON for comparing inputs (object keys sorted): the diff keys of every model. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, val) =>
    val && typeof val === "object" && !Array.isArray(val)
      ? Object.fromEntries(Object.keys(val).sort().map((k) => [k, val[k]]))
      : val);
}

/** Pulumi's check failure (pulumi.dynamic.CheckFailure), declared here so the models stay free of Pulumi. */
export interface CheckFailure {
  property: string;
  reason: string;
}

/** A string input state may hold as null or "" (releases since 0.1.0): both mean "not given". */
export const optionalString = z.string().nullish().transform((v) => v || undefined).optional();

export { runnerId } from "../template/ids";

/** How a model reads a `file` input: paths resolve against the program directory (the provider's working dir). */
export interface FileReader {
  baseDir: string;
  readFile(path: string): Buffer;
  realPath(path: string): string;
}

/** The files under `baseDir`, read from disk. */
export function fileReader(baseDir: string): FileReader {
  return { baseDir, readFile: (f) => fs.readFileSync(f), realPath: (f) => fs.realpathSync(f) };
}

/** The program's files, as the provider reads them (its working directory is the program's). */
export function programFiles(): FileReader {
  return fileReader(process.cwd());
}

/**
 * Records a failure on a zod context. `property` is the property Pulumi shows it on when that is not the path's first
 * segment (a Healthcheck's `clusterName` is reported as `cluster`, as releases before did).
 */
export function fail(ctx: z.RefinementCtx, reason: string, path: PropertyKey[] = [], property?: string): void {
  ctx.addIssue({ code: "custom", message: reason, path, ...(property ? { params: { property } } : {}) });
}

/**
 * `schema`'s output for a value a field's own checks accepted (state's shape, typed), or its zod issues on the field:
 * a value the checks let through but the schema cannot read (a label that is a number) is refused, not thrown.
 */
export function parsedWith<S extends z.ZodType>(schema: S, v: unknown, ctx: z.RefinementCtx): z.output<S> {
  const r = schema.safeParse(v);
  if (r.success) return r.data;
  for (const i of r.error.issues) fail(ctx, i.message, i.path, propertyOf(i));
  return z.NEVER;
}

/** The property an issue is shown on, when it is not its path's first segment (`fail`'s `property`). */
function propertyOf(i: z.core.$ZodIssue): string | undefined {
  return (i as { params?: { property?: string } }).params?.property;
}

/**
 * A model's schema: its fields, then the checks across them (`across`), both on the properties as given, so one
 * field's failure hides no other check. `across` skips what is not known yet itself.
 */
export function withAcrossFields<S extends z.ZodType>(byField: S, across: (raw: Record<string, unknown>, ctx: z.RefinementCtx) => void) {
  return z.record(z.string(), z.unknown()).transform((raw, ctx): z.output<S> => {
    const out = parsedWith(byField, raw, ctx);
    across(raw, ctx);
    return out;
  });
}

/** The value at a path of the inputs, and whether it (or anything on the way to it) is not known yet. */
function unknownOnPath(news: unknown, path: readonly PropertyKey[]): boolean {
  let v: unknown = news;
  for (const seg of path) {
    if (v === UNKNOWN) return true;
    if (!v || typeof v !== "object") return false;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return hasUnknown(v);
}

/**
 * `check` for a model: its zod issues as Pulumi check failures, issues on a value not known yet dropped (it is checked
 * at apply); with `order` (the inputs' order), sorted by their property, so a check across fields lists its failure
 * where the program reads that input.
 */
export function checkFailures(schema: z.ZodType, news: Record<string, unknown>, order: readonly string[] = []): CheckFailure[] {
  const r = schema.safeParse(news);
  if (r.success) return [];
  const rank = (i: z.core.$ZodIssue) => {
    const at = order.indexOf(String(i.path[0]));
    return at < 0 ? order.length : at; // no order: every rank is equal, zod's order stays
  };
  return r.error.issues
    .filter((i) => !unknownOnPath(news, i.path))
    .map((i, n) => ({ i, n }))
    .sort((a, b) => rank(a.i) - rank(b.i) || a.n - b.n)
    .map(({ i }) => ({
      property: propertyOf(i) ?? String(i.path[0] ?? ""),
      reason: i.message,
    }));
}
