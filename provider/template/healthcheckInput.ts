// One healthcheck as a program declares it (the Healthcheck resource's inputs), validated with the template's rules and
// composed into its runner Job in one step. The SDK composes it at preview time (so a TalosUpgrade's diff sees the
// checks' content before anything runs) and the provider composes it again when it creates the resource; both call
// this, so they cannot disagree. PURE: files are read only through the injected `readFile`.
import { composeHealthcheck, type ComposedHealthcheckJob } from "./compose";
import { TemplateValidationError } from "./errors";
import { validateHealthcheck, type CheckFailure, type ParseOptions } from "./validate";

export type ComposedInput = { ok: true; composed: ComposedHealthcheckJob } | { ok: false; failures: CheckFailure[] };

export function composeHealthcheckInput(input: unknown, opts: ParseOptions & { cluster: string }): ComposedInput {
  const r = validateHealthcheck(input, opts);
  if (!r.ok) return { ok: false, failures: r.failures };
  try {
    return { ok: true, composed: composeHealthcheck(r.healthcheck, opts.cluster) };
  } catch (err) {
    if (!(err instanceof TemplateValidationError)) throw err;
    return { ok: false, failures: err.errors.map((e) => ({ path: e.path, message: e.message })) };
  }
}
