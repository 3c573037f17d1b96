// provider/template — PURE core for Omni cluster templates and healthchecks (no processes, no network; files are
// read only through the injected `readFile`).
//
//   parseTemplate(input: string | Uint8Array, opts?: ParseOptions): ParseResult
//       Multi-document Omni template → { ok: true, template: ClusterTemplate } | { ok: false, error }.
//       error is a TemplateValidationError: .message is Omni's aggregated text (`error validating cluster "x": ...`,
//       or `error loading template: ...` for decode problems), .errors is [{ document, path, message, line?, column? }].
//       opts: { baseDir, allowedRoot (default baseDir), readFile(absPath), realPath?(absPath), maxFileBytes?, limits? }.
//   loadTemplate(input, opts?): ClusterTemplate — the same, throwing the TemplateValidationError.
//   validateHealthcheck(input: unknown, { cluster, ...fileOptions }): { ok: true, healthcheck } | { ok: false, failures }
//       One healthcheck object {name?, idOverride?, job? (string | object | object[]), file?, interval?, labels?,
//       annotations?} with the template's rules; failures are [{ path, message }] for a Pulumi `check`.
//   composeHealthcheck(hc: Healthcheck, clusterName?): { id, jobName, namespace, job, configHash, intervalMs }
//       The runner Job (= provider/rollout/ports.ts HealthcheckJob); throws TemplateValidationError on a bad manifest.
//   validateNodeHook(input, { cluster, ...fileOptions }, field): { hook: { base, timeoutMs } } | { failures: [{ field, message }] }
//       A beforeNode/afterNode hook {name?, idOverride?, job? | file?, timeout?}; composeNodeHook(hook, { phase, cluster,
//       node: { name, role }, outcome? }) is its runner Job for one node (per-node name and hash, TALOS_GATE_* env).
//   composeHealthcheckInput(input, { cluster, ...fileOptions }): { ok: true, composed } | { ok: false, failures }
//       validateHealthcheck + composeHealthcheck in one step (the SDK at preview, the provider at create).
//   healthcheckId({name?, idOverride?}, cluster): string — `idOverride` or `cluster-<cluster>-<name>`.
//   parseDuration(s): number (ms) / formatDuration(ms): string — Go's time.ParseDuration / Duration.String();
//       parseDurationNs / formatDurationNs for exact bigint nanoseconds; DurationError carries Go's message.
//   goQuote(s): string — Go's %q, for ids in messages.
//   Manifests (`template.manifests`): { name, id, mode: "one-time" | "full", source, text, objects[] } for
//   server-side apply.
export { parseDuration, formatDuration, parseDurationNs, formatDurationNs, isDuration, DurationError } from "./duration";
export { goQuote, goQuoteList } from "./goquote";
export {
  parseTemplate, loadTemplate, validateHealthcheck, healthcheckId, inlineText, formatPath,
  DEFAULT_INTERVAL_MS, MIN_INTERVAL_MS, JOB_NAME_PREFIX,
  type ParseOptions, type ParseResult, type HealthcheckInput, type HealthcheckCheck, type CheckFailure,
} from "./validate";
export {
  composeHealthcheck, configHash, RUNNER_LABEL_KEY, RUNNER_LABEL_VALUE, CONFIG_HASH_ANNOTATION, DEFAULT_NAMESPACE,
  TERMINATION_MESSAGE_POLICY, type ComposedHealthcheckJob,
} from "./compose";
export {
  composeNodeHook, validateNodeHook, DEFAULT_HOOK_TIMEOUT_MS, HOOK_ENV, HOOK_NODE_ANNOTATION, HOOK_PHASE_LABEL, HOOK_PHASES,
  type HookFailure, type HookNode, type HookPhase, type NodeHook, type NodeHookContext,
} from "./hooks";
export { TemplateValidationError, type TemplateError } from "./errors";
export { composeHealthcheckInput, type ComposedInput } from "./healthcheckInput";
export type { FileOptions } from "./files";
export { DEFAULT_LIMITS, type YamlLimits } from "./yamlnodes";
export type * from "./model";
