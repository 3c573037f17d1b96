// Compiling a condition's CEL with @marcbachmann/cel-js: parse and type-check once, at check (preview) time. PURE.
//
// Objects are JSON without a schema, so `object` is declared a map and `objects` a list of maps; every field read from
// them is `dyn`. What the checker can still catch at preview: syntax errors, unknown variables (`obj.status`, or
// `objects` in a single-object condition), unknown functions, wrong argument types where a side is known (`size(x) +
// 'a'`, `object + 1`), branches of different types, and an expression whose type is known not to be bool (or a message
// not string). What only the run can tell (the objects' shapes): a missing field (held, naming the field and object), a
// field of the wrong type (held with the evaluation error), and a `dyn` expression that turns out not to be a bool.
import { Environment } from "@marcbachmann/cel-js";
import { comprehensionNesting, MAX_NESTING } from "./cost";
import * as M from "./messages";
import { ConditionSpec, FieldFailure, isNamed, parseConditionSpec } from "./spec";

/** One entry point of evaluation: the parsed, type-checked program. */
export type Program = ((context: Record<string, unknown>) => unknown) & { check(): { valid: boolean; type?: string }; ast?: unknown };

export interface CompiledCondition {
  spec: ConditionSpec;
  /** `object` (named target) or `objects` (selector target). */
  variable: "object" | "objects";
  expression: Program;
  message?: Program;
  /** The deepest nesting of comprehensions in the expression or message (cost.ts): it caps the selection's size. */
  nesting: number;
}

// Structural limits bound the work of one evaluation on user input (parse time).
const LIMITS = { maxAstNodes: 2000, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 32 };

let envs: { object: Environment; objects: Environment } | undefined;
function environments() {
  envs ??= {
    object: new Environment({ limits: LIMITS }).registerVariable("object", "map"),
    objects: new Environment({ limits: LIMITS }).registerVariable("objects", "list<map>"),
  };
  return envs;
}

interface CelErrorLike {
  name?: string;
  code?: string;
  summary?: string;
  message?: string;
  range?: { start: number; end: number };
}

function describeError(e: CelErrorLike): string {
  const text = e.summary ?? String(e.message ?? e).split("\n")[0];
  return e.range ? `${text} (at column ${e.range.start + 1})` : text;
}

function compileOne(
  source: string, field: string, variable: "object" | "objects", want: "bool" | "string", failures: FieldFailure[],
): Program | undefined {
  const env = environments()[variable];
  let program: Program;
  try {
    program = env.parse(source) as unknown as Program;
  } catch (err) {
    failures.push({ field, message: M.celSyntax(describeError(err as CelErrorLike)) });
    return undefined;
  }
  const checked = (program as unknown as { check(): { valid: boolean; type?: string; error?: CelErrorLike } }).check();
  if (!checked.valid) {
    const e = checked.error ?? {};
    const unknown = /^Unknown variable: (\w+)/.exec(e.summary ?? "")?.[1];
    if (unknown === "objects" && variable === "object") {
      failures.push({ field, message: M.celWrongVariable("objects", "object", "names one object (target.name)") });
    } else if (unknown === "object" && variable === "objects") {
      failures.push({ field, message: M.celWrongVariable("object", "objects", "selects objects by target.labelSelector") });
    } else {
      failures.push({ field, message: M.celType(describeError(e)) });
    }
    return undefined;
  }
  const nesting = comprehensionNesting(program.ast);
  if (nesting > MAX_NESTING) {
    failures.push({ field, message: M.celTooNested(nesting, MAX_NESTING) });
    return undefined;
  }
  const type = checked.type ?? "dyn";
  if (type !== want && type !== "dyn") {
    failures.push({ field, message: want === "bool" ? M.celNotBool(type) : M.celNotString(type) });
    return undefined;
  }
  return program;
}

const join = (prefix: string, name: string) => (prefix === "" ? name : `${prefix}.${name}`);

/**
 * Parses the input (zod) and compiles its CEL; every failure names its field under `prefix`. Call it in `check` to
 * report at preview, and again wherever the condition is evaluated (compiling is cheap and deterministic).
 */
export function compileCondition(input: unknown, prefix = ""): { compiled: CompiledCondition; failures: [] } | { compiled?: undefined; failures: FieldFailure[] } {
  const parsed = parseConditionSpec(input, prefix);
  if (!parsed.spec) return { failures: parsed.failures };
  const spec = parsed.spec;
  const variable = isNamed(spec.target) ? "object" : "objects";
  const failures: FieldFailure[] = [];
  const expression = compileOne(spec.expression, join(prefix, "expression"), variable, "bool", failures);
  const message = spec.message !== undefined && spec.message.trim() !== ""
    ? compileOne(spec.message, join(prefix, "message"), variable, "string", failures)
    : undefined;
  if (spec.allowEmpty !== undefined && variable === "object") {
    failures.push({ field: join(prefix, "allowEmpty"), message: M.allowEmptyNamed() });
  }
  if (!expression || failures.length > 0) return { failures };
  const nesting = Math.max(comprehensionNesting(expression.ast), message ? comprehensionNesting(message.ast) : 0);
  return { compiled: { spec, variable, expression, ...(message ? { message } : {}), nesting }, failures: [] };
}
