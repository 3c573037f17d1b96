// The Cluster document's kubernetes.healthchecks (and one healthcheck object, the Healthcheck resource): Omni's rules
// plus talos-gate's (a usable Job, a DNS-label runner name). Omni:
// client/pkg/template/internal/models/kubernetes_healthcheck.go (siderolabs/omni b1ea5df, v1.10.0-beta).
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from "../duration";
import * as M from "../messages";
import { MultiError, join, type ErrNode } from "../errors";
import { readIncluded } from "../files";
import { checkJobManifest } from "../jobmanifest";
import { dnsLabelErrors } from "../formats";
import { healthcheckId } from "../ids";
export { healthcheckId };
import type { RawHealthcheck } from "../schema";
import type { ContentSource, Healthcheck } from "../model";
import type { ParseOptions } from "../validate";
import { checkDescriptors, inlineText, labelsOf, type DocContext, type Seg } from "./context";

export const DEFAULT_INTERVAL_MS = 30_000;
export const MIN_INTERVAL_MS = 5_000;
export const JOB_NAME_PREFIX = "talos-gate-";

export function validateOneHealthcheck(
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

export function validateHealthchecks(ctx: DocContext, cluster: string, hcs: RawHealthcheck[], files: ParseOptions): { node?: ErrNode; models: Healthcheck[] } {
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
