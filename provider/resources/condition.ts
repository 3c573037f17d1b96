// The Condition resource's model: one zod schema is what `check` refuses (the name, then the target, expression and
// message compiled with the CEL type check, each naming its field) and the outputs it adds (the id, the target in
// words). Its diff compares the inputs that define it (INPUT_KEYS), as given.
import { z } from "zod";
import { compileCondition, describeTarget } from "../conditions";
import * as msg from "./messages";
import { checkFailures, fail, hasUnknown, runnerId, withAcrossFields, type CheckFailure } from "./model";

const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** What the condition evaluates (compileCondition reads and checks each). */
const SPEC_KEYS = ["target", "expression", "message", "allowEmpty"] as const;

/** The condition's name: it makes the id `cluster-<cluster>-<name>`, a label value. */
const name = z.unknown().optional().transform((v, ctx) => {
  if (typeof v !== "string" || !NAME.test(v)) fail(ctx, msg.conditionNameInvalid(v));
  return v as string;
});

const fields = z.object({
  clusterName: z.unknown().optional(),
  name,
  ...Object.fromEntries(SPEC_KEYS.map((k) => [k, z.unknown().optional()])) as Record<(typeof SPEC_KEYS)[number], z.ZodOptional<z.ZodUnknown>>,
});

/** The inputs that define a Condition: a change of one is a change, of the cluster or name a replacement. */
export const INPUT_KEYS = Object.keys(fields.shape) as (keyof typeof fields.shape)[];

function specOf(p: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(SPEC_KEYS.filter((k) => p[k] !== undefined && p[k] !== null).map((k) => [k, p[k]]));
}

/** The CEL compile across target, expression and message, once each is known. */
function compiled(raw: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (hasUnknown(specOf(raw))) return;
  for (const f of compileCondition(specOf(raw)).failures) fail(ctx, msg.fieldFailure(f.field, f.message), [f.field.split(/[.[]/)[0] || "target"]);
}

export function checkCondition(news: Record<string, unknown>): CheckFailure[] {
  return checkFailures(withAcrossFields(fields, compiled), news);
}

export interface ConditionOutputs extends Record<string, unknown> {
  /** `cluster-<cluster>-<name>`: how the upgrade's status names the condition. */
  conditionId: string;
  /** The target in words, e.g. `ceph.rook.io/v1 CephCluster rook-ceph/rook-ceph`. */
  description: string;
}

/** The inputs with the derived id and the target in words: the resource's outputs (throws naming each failure). */
export function conditionOutputs(p: Record<string, unknown>): ConditionOutputs {
  const c = compileCondition(specOf(p));
  if (!c.compiled) throw new Error(c.failures.map((f) => msg.fieldFailure(f.field, f.message)).join("; "));
  return { ...p, conditionId: runnerId(String(p.clusterName), String(p.name)), description: describeTarget(c.compiled.spec.target) };
}
