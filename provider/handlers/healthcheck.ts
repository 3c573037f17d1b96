// `Healthcheck`: one user-defined check. `check` applies every template rule so errors appear at preview with the
// field named; create/update compose the runner Job and, when the cluster is known, validate it with a server-side
// dry run. diff compares what the check does (id, Job content, retry interval, labels and annotations), so another
// spelling of the same check (a YAML string or an object, a file with the same Job, "1m" or "60s", an omitted
// default) previews as no change. There is nothing to delete: runner Jobs exist only while a TalosUpgrade gate runs.
import * as fs from "node:fs";
import { z } from "zod";
import { composeHealthcheckInput } from "../template";
import { formatDuration, parseDuration } from "../template/duration";
import { canonical, CheckFailure, errorText, hasUnknown, Props, UNKNOWN, withTimeout } from "./common";
import { warn } from "./diagnostics";
import { checkClusterName } from "./inputs";
import * as msg from "./messages";
import type { KindHandler } from "./registry";
import { jobContent } from "./talosUpgradeSpec";

const SPEC = ["name", "idOverride", "job", "file", "interval", "labels", "annotations"] as const;
const DRY_RUN_TIMEOUT_MS = 30_000;

/** The outputs a Healthcheck adds to its inputs (state of every release since 0.1.0 has them). */
const healthcheckOutputs = z.object({
  clusterName: z.string(),
  kubeconfig: z.string().nullish(),
  checkId: z.string(),
  interval: z.string(),
  composedJob: z.record(z.string(), z.unknown()),
  labels: z.record(z.string(), z.string()).nullish(),
  annotations: z.record(z.string(), z.string()).nullish(),
});

function specOf(p: Props): Props {
  const out: Props = {};
  for (const k of SPEC) if (p[k] !== undefined && p[k] !== null) out[k] = p[k];
  return out;
}

/** Validates and composes; `file` paths resolve against the program directory (the provider's working dir). */
function compose(p: Props) {
  const cluster = typeof p.clusterName === "string" && p.clusterName !== UNKNOWN ? p.clusterName : "cluster";
  const r = composeHealthcheckInput(specOf(p), {
    cluster, baseDir: process.cwd(), readFile: (f) => fs.readFileSync(f), realPath: (f) => fs.realpathSync(f),
  });
  if (!r.ok) return { failures: r.failures.map((f) => ({ property: f.path.split(/[.[]/)[0] || "job", reason: f.message })) };
  return { composed: r.composed };
}

function outputs(p: Props) {
  const r = compose(p);
  if (!r.composed) throw new Error(r.failures.map((f) => `${f.property}: ${f.reason}`).join("; "));
  const c = r.composed;
  return {
    ...p,
    checkId: c.id, jobName: c.jobName, namespace: c.namespace, configHash: c.configHash,
    interval: formatDuration(c.intervalMs), composedJob: c.job,
  };
}

/** What the check does, canonical: equal for every spelling of the same check. */
function checkKey(o: z.infer<typeof healthcheckOutputs>): string {
  return canonical({
    clusterName: o.clusterName,
    id: o.checkId,
    intervalMs: parseDuration(o.interval),
    job: jobContent(o.composedJob),
    labels: o.labels ?? {},
    annotations: o.annotations ?? {},
  });
}

async function dryRun(p: Props, outs: Props): Promise<void> {
  if (typeof p.kubeconfig !== "string" || p.kubeconfig === "") return;
  const kube = (require("../kube") as typeof import("../kube")).createKubeApi(p.kubeconfig, { log: (l) => warn(p.resourceUrn, l) });
  try {
    await withTimeout(DRY_RUN_TIMEOUT_MS, "the Kubernetes API", () =>
      kube.dryRunJob({ jobName: outs.jobName, namespace: outs.namespace, job: outs.composedJob }));
  } catch (err) {
    throw new Error(msg.dryRunFailed(outs.jobName, errorText(err)));
  } finally {
    await kube.close().catch(() => undefined);
  }
}

export const healthcheckHandler: KindHandler = {
  async check(_olds, news) {
    const failures: CheckFailure[] = [];
    checkClusterName("cluster", news.clusterName, failures);
    if (hasUnknown(specOf(news))) return failures.length ? { failures } : { inputs: news };
    failures.push(...(compose(news).failures ?? []));
    return failures.length ? { failures } : { inputs: news };
  },
  async diff(_id, olds, news) {
    if (hasUnknown(specOf(news)) || hasUnknown([news.clusterName, news.kubeconfig])) return { changes: true };
    const old = healthcheckOutputs.safeParse(olds);
    let next: z.infer<typeof healthcheckOutputs>;
    try {
      next = healthcheckOutputs.parse(outputs(news));
    } catch {
      return { changes: true }; // e.g. a `file` that went missing: update reports it
    }
    if (!old.success) return { changes: true };
    const changes = checkKey(old.data) !== checkKey(next) || (old.data.kubeconfig ?? "") !== (next.kubeconfig ?? "");
    return { changes, replaces: [] };
  },
  async create(inputs) {
    const outs = outputs(inputs);
    await dryRun(inputs, outs);
    return { id: outs.checkId, outs };
  },
  async read(id, props) {
    return { id, props };
  },
  async update(_id, _olds, news) {
    const outs = outputs(news);
    await dryRun(news, outs);
    return { outs };
  },
  async delete() {},
};
