// `Healthcheck`: one user-defined check. `check` applies every template rule so errors appear at preview with the
// field named; create/update compose the runner Job and, when the cluster is known, validate it with a server-side
// dry run. diff compares what the check does (id, Job content, retry interval, labels and annotations), so another
// spelling of the same check (a YAML string or an object, a file with the same Job, "1m" or "60s", an omitted
// default) previews as no change. There is nothing to delete: runner Jobs exist only while a TalosUpgrade gate runs.
import { errorText, hasUnknown, urnOf, withTimeout, type Properties } from "./common";
import { warn } from "./diagnostics";
import * as msg from "./messages";
import type { KindHandler } from "./registry";
import {
  checkHealthcheck, checkKey, healthcheckOutputs, healthcheckState, specOf, type HealthcheckOutputs, type HealthcheckState,
} from "../resources/healthcheck";

const DRY_RUN_TIMEOUT_MS = 30_000;

async function dryRun(p: Properties, outs: HealthcheckOutputs): Promise<void> {
  if (typeof p.kubeconfig !== "string" || p.kubeconfig === "") return;
  const kube = (require("../kube") as typeof import("../kube")).createKubeApi(p.kubeconfig, { log: (l) => warn(urnOf(p), l) });
  try {
    await withTimeout(DRY_RUN_TIMEOUT_MS, msg.KUBERNETES_API, () =>
      kube.dryRunJob({ jobName: outs.jobName, namespace: outs.namespace, job: outs.composedJob }));
  } catch (err) {
    throw new Error(msg.dryRunFailed(outs.jobName, errorText(err)));
  } finally {
    await kube.close().catch(() => undefined);
  }
}

/** Its Spec is its outputs: the inputs with the composed runner Job. */
export const healthcheckHandler: KindHandler<HealthcheckOutputs, HealthcheckOutputs> = {
  parse: (inputs) => healthcheckOutputs(inputs),
  async check(_olds, news) {
    const failures = checkHealthcheck(news);
    return failures.length ? { failures } : { inputs: news };
  },
  async diff(_id, olds, news) {
    if (hasUnknown(specOf(news)) || hasUnknown([news.clusterName, news.kubeconfig])) return { changes: true };
    const old = healthcheckState.safeParse(olds);
    let next: HealthcheckState;
    try {
      next = healthcheckState.parse(healthcheckOutputs(news));
    } catch {
      return { changes: true }; // e.g. a `file` that went missing: update reports it
    }
    if (!old.success) return { changes: true };
    const changes = checkKey(old.data) !== checkKey(next) || (old.data.kubeconfig ?? "") !== (next.kubeconfig ?? "");
    return { changes, replaces: [] };
  },
  async create(outs, inputs) {
    await dryRun(inputs, outs);
    return { id: outs.checkId, outs };
  },
  async read(id, props) {
    return { id, props };
  },
  async update(_id, outs, _olds, news) {
    await dryRun(news, outs);
    return { outs };
  },
  async delete() {},
};
