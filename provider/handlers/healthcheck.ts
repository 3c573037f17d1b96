// `Healthcheck`: one user-defined check. `check` applies every template rule so errors appear at preview with the
// field named; create/update compose the runner Job and, when the cluster is known, validate it with a server-side
// dry run. There is nothing to delete: runner Jobs exist only while a TalosUpgrade gate runs.
import * as fs from "node:fs";
import { composeHealthcheck, formatDuration, validateHealthcheck } from "../template";
import { CheckFailure, changed, errorText, hasUnknown, Props, UNKNOWN, withTimeout } from "./common";
import * as msg from "./messages";
import type { KindHandler } from "./registry";

const SPEC = ["name", "idOverride", "job", "file", "interval", "labels", "annotations"] as const;
const DRY_RUN_TIMEOUT_MS = 30_000;

function specOf(p: Props): Props {
  const out: Props = {};
  for (const k of SPEC) if (p[k] !== undefined && p[k] !== null) out[k] = p[k];
  return out;
}

/** Validates and composes; `file` paths resolve against the program directory (the provider's working dir). */
function compose(p: Props) {
  const cluster = typeof p.clusterName === "string" && p.clusterName !== UNKNOWN ? p.clusterName : "cluster";
  const r = validateHealthcheck(specOf(p), {
    cluster, baseDir: process.cwd(), readFile: (f) => fs.readFileSync(f), realPath: (f) => fs.realpathSync(f),
  });
  if (!r.ok) return { failures: r.failures.map((f) => ({ property: f.path.split(/[.[]/)[0] || "job", reason: f.message })) };
  return { composed: composeHealthcheck(r.healthcheck, cluster), healthcheck: r.healthcheck };
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

async function dryRun(p: Props, outs: Props): Promise<void> {
  if (typeof p.kubeconfig !== "string" || p.kubeconfig === "") return;
  const kube = (require("../kube") as typeof import("../kube")).createKubeApi(p.kubeconfig);
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
    if (hasUnknown(specOf(news))) return { inputs: news };
    const r = compose(news);
    const failures: CheckFailure[] = r.failures ?? [];
    return failures.length ? { failures } : { inputs: news };
  },
  async diff(_id, olds, news) {
    if (hasUnknown(specOf(news)) || news.clusterName === UNKNOWN) return { changes: true };
    if (changed(olds, news, [...SPEC, "clusterName"]).length > 0) return { changes: true };
    // A `file` healthcheck changes when the file's content does.
    const r = compose(news);
    return { changes: !r.composed || r.composed.configHash !== olds.configHash };
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
