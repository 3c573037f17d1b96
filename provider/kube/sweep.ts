// The cleanup sweep (omni-behaviour.md §4.8, `cleanupHealthCheckRunners`): across all namespaces, delete the runner Jobs
// and their pods (pods of Jobs already gone included). Omni deletes every pod whose job-name starts with its prefix;
// here only what talos-gate's own runner Jobs carry is selected — the runner label, and with a scope this cluster's
// label and this rollout's owner label (both set on the Job and its pod template: runner.ts) — since the pipeline's
// credentials would otherwise delete any pod someone named `talos-gate-…`. Best effort: errors are logged and swallowed.
import { KubeClients } from "./client";
import { apiMessage, isNotFound } from "./errors";
import { CLUSTER_LABEL, OWNER_LABEL, ownerLabelValue, RUNNER_SELECTOR } from "./labels";
import { labelValue } from "./manifests";
import { msg } from "./messages";

/** Whose runner Jobs a port creates and sweeps: the cluster, and the rollout's owner (its Lease holder). */
export interface RunnerScope {
  cluster: string;
  owner?: string;
}

/** The labels a scope puts on runner Jobs and their pods. */
export function scopeLabels(scope: RunnerScope | undefined): Record<string, string> {
  if (!scope) return {};
  return { [CLUSTER_LABEL]: labelValue(scope.cluster), ...(scope.owner ? { [OWNER_LABEL]: ownerLabelValue(scope.owner) } : {}) };
}

export function runnerSelector(scope: RunnerScope | undefined): string {
  return [RUNNER_SELECTOR, ...Object.entries(scopeLabels(scope)).map(([k, v]) => `${k}=${v}`)].join(",");
}

export async function sweepRunners(c: KubeClients, log: (line: string) => void, scope?: RunnerScope): Promise<{ jobs: number; pods: number }> {
  let jobs = 0;
  let pods = 0;
  const labelSelector = runnerSelector(scope);
  try {
    const list = await c.batch.listJobForAllNamespaces({ labelSelector });
    await Promise.all(
      list.items.map(async (job) => {
        const name = job.metadata?.name ?? "";
        const namespace = job.metadata?.namespace ?? "default";
        try {
          await c.batch.deleteNamespacedJob({
            name, namespace, propagationPolicy: "Background", gracePeriodSeconds: 0,
            body: { propagationPolicy: "Background", gracePeriodSeconds: 0 },
          });
          jobs++;
        } catch (err) {
          if (!isNotFound(err)) log(msg.sweepFailed(`deleting Job ${namespace}/${name}`, apiMessage(err)));
        }
      }),
    );
  } catch (err) {
    log(msg.sweepFailed("listing runner Jobs", apiMessage(err)));
  }
  try {
    // The pod template carries the same labels, so the runner's pods (also of Jobs already gone) match the selector.
    const list = await c.core.listPodForAllNamespaces({ labelSelector });
    await Promise.all(
      list.items.map(async (pod) => {
        const name = pod.metadata?.name ?? "";
        const namespace = pod.metadata?.namespace ?? "default";
        if (pod.metadata?.deletionTimestamp) return; // already going away
        try {
          await c.core.deleteNamespacedPod({ name, namespace });
          pods++;
        } catch (err) {
          if (!isNotFound(err)) log(msg.sweepFailed(`deleting pod ${namespace}/${name}`, apiMessage(err)));
        }
      }),
    );
  } catch (err) {
    log(msg.sweepFailed("listing runner pods", apiMessage(err)));
  }
  return { jobs, pods };
}
