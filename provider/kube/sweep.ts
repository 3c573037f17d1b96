// The cleanup sweep (omni-behaviour.md §4.8, `cleanupHealthCheckRunners`): across all namespaces, delete every runner
// Job (label app.kubernetes.io/name=talos-gate-healthcheck) and every pod whose batch.kubernetes.io/job-name starts
// with `talos-gate-` (pods of Jobs already gone included). Best effort: errors are logged and swallowed.
import { KubeClients } from "./client";
import { apiMessage, isNotFound } from "./errors";
import { JOB_NAME_LABEL, RUNNER_NAME_PREFIX, RUNNER_SELECTOR } from "./labels";
import { msg } from "./messages";

export async function sweepRunners(c: KubeClients, log: (line: string) => void): Promise<{ jobs: number; pods: number }> {
  let jobs = 0;
  let pods = 0;
  try {
    const list = await c.batch.listJobForAllNamespaces({ labelSelector: RUNNER_SELECTOR });
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
    const list = await c.core.listPodForAllNamespaces({ labelSelector: JOB_NAME_LABEL });
    const runnerPods = list.items.filter((p) => (p.metadata?.labels?.[JOB_NAME_LABEL] ?? "").startsWith(RUNNER_NAME_PREFIX));
    await Promise.all(
      runnerPods.map(async (pod) => {
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
