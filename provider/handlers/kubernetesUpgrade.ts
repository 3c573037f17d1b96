// `KubernetesUpgrade` (issue 24.3): `talosctl upgrade-k8s` behind the gates. check validates offline and, when the
// cluster answers within a few seconds, refuses a target Kubernetes' skew policy or a node's Talos range excludes
// (rollout/kubernetesPlan.ts) and puts the plan into the `plan` input so `pulumi preview --diff` shows it; diff
// compares the canonical rollout inputs; create/update run the rollout under the cluster's Lease (the one TalosUpgrade
// takes) and return the status — a bounded or cancelled run ends with partial state so the next `pulumi up` resumes;
// read recomputes the status from the live versions; delete never downgrades.
import type { KubeClient } from "../kube";
import {
  describeKubernetesPlan, kubernetesSkewFailures, planKubernetesUpgrade, unitName, type KubernetesPlan,
} from "../rollout/kubernetesPlan";
import { runKubernetesUpgrade } from "../rollout/kubernetesRun";
import { RolloutError } from "../rollout/run";
import { outputStatus, pendingCount, type OutputStatus, type UpgradeStatus } from "../rollout/status";
import { currentMachineNumber, statusUpdating, STEP_NO_MACHINES_UPGRADING } from "../rollout/messages";
import { withMachineOverrides } from "../resources/cluster";
import {
  checkKubernetesUpgrade, kubernetesCredentialsChanged, kubernetesRolloutKey, parseKubernetesUpgrade, PLAN_INPUTS, ROLLOUT_INPUTS,
  type KubernetesUpgradeSpec,
} from "../resources/kubernetesUpgrade";
import { kubernetesRefusal } from "../talos/compat";
import { errorText, hasUnknown, PartialFailure, progress, withTimeout, type Properties } from "./common";
import { warn } from "./diagnostics";
import { kubernetesPort } from "./kubernetesPort";
import { rolloutProgress } from "./rolloutProgress";
import { storedStatus } from "./talosUpgrade";
import { holderOf, kubeApi, runAbort, talosApi } from "./runScaffold";
import * as msg from "./messages";
import type { KindHandler } from "./registry";

const PREVIEW_TIMEOUT_MS = 5_000;

type KubernetesUpgradeOutputs = Properties & { status: Partial<OutputStatus> | undefined };

/**
 * The Lease holder: its own identity beside a TalosUpgrade of the same stack (even one of the same name), so each
 * refuses the other while it runs.
 */
const holder = (spec: KubernetesUpgradeSpec, id: string) => `${holderOf(spec.owner, id)}#kubernetes`;

/** The live plan and the skew refusals, read through the run's own port (one way to read the versions). */
async function livePlan(spec: KubernetesUpgradeSpec, kube: KubeClient): Promise<{ plan: KubernetesPlan; failures: string[] }> {
  const talos = talosApi(spec.talosconfig);
  try {
    const machines = await withMachineOverrides(kube, spec.machines).listMachines();
    const port = kubernetesPort(talos, kube);
    const signal = AbortSignal.timeout(PREVIEW_TIMEOUT_MS);
    // kube-proxy's version only adds its hop to the plan: a kubeconfig that may not read DaemonSets still previews.
    const [nodes, proxy] = await Promise.all([port.read(machines, signal), port.proxy(signal).catch(() => undefined)]);
    return { plan: planKubernetesUpgrade(nodes, spec.version, proxy), failures: kubernetesSkewFailures(nodes, spec.version, kubernetesRefusal, spec.talosVersion) };
  } finally {
    talos.close();
  }
}

/** The refusals and the plan lines; a cluster that does not answer refuses nothing (the run checks again). */
async function preview(news: Properties): Promise<{ failures: string[]; plan: string[] }> {
  if (hasUnknown(PLAN_INPUTS.map((k) => news[k]))) return { failures: [], plan: [msg.planUnknownInputs] };
  const spec = parseKubernetesUpgrade(news);
  const kube = kubeApi(spec.kubeconfig, spec.urn);
  try {
    const live = await withTimeout(PREVIEW_TIMEOUT_MS, msg.KUBERNETES_API, () => livePlan(spec, kube));
    const ids = [
      ...(Array.isArray(news.healthcheckIds) ? news.healthcheckIds.map(String) : spec.healthchecks.map((h) => h.id)),
      ...(Array.isArray(news.conditionIds) ? news.conditionIds.map(String) : spec.conditions.map((c) => c.id)),
    ];
    const window = spec.schedule.planLine(new Date());
    return {
      failures: live.failures,
      plan: [...describeKubernetesPlan(live.plan, ids), ...(window ? [window] : []), ...(spec.soakMs > 0 ? [msg.planSoak(spec.soakMs)] : [])],
    };
  } catch (err) {
    return { failures: [], plan: [msg.planUnavailable(errorText(err))] };
  } finally {
    await kube.close().catch(() => undefined);
  }
}

async function rollout(id: string, inputs: Properties, spec: KubernetesUpgradeSpec, op: "create" | "update", previous?: Properties): Promise<KubernetesUpgradeOutputs> {
  const kube = kubeApi(spec.kubeconfig, spec.urn, { cluster: spec.clusterName, holder: holder(spec, id) });
  const talos = talosApi(spec.talosconfig);
  const abort = runAbort(spec.clusterName, op === "create" ? spec.runTimeouts.createMs : spec.runTimeouts.updateMs, op);
  const live = rolloutProgress(spec.urn);
  let last: UpgradeStatus | undefined;
  try {
    const scope = withMachineOverrides(kube, spec.machines);
    const status = await runKubernetesUpgrade(scope, talos, kubernetesPort(talos, kube), {
      cluster: spec.clusterName,
      holder: holder(spec, id),
      targetVersion: spec.version,
      healthchecks: spec.healthchecks,
      ...(storedStatus(previous)?.lastUpgradeVersion ? { lastUpgradeVersion: storedStatus(previous)!.lastUpgradeVersion! } : {}),
      holdTimeoutMs: spec.holdTimeoutMs,
      nodeTimeoutMs: spec.nodeTimeoutMs,
      readyPollMs: 500,
      signal: abort.signal,
      onStatus: (s) => { last = s; },
      onEvent: live.onEvent,
      onProgress: live.note,
      onWarning: (line) => warn(spec.urn, line),
      conditions: spec.conditions,
      soakMs: spec.soakMs,
      schedule: spec.schedule,
      talosRange: kubernetesRefusal,
    });
    if (status.phase === "Waiting") warn(spec.urn, msg.rolloutWaiting(spec.clusterName, status.step, pendingCount(status)));
    return { ...inputs, status: outputStatus(status) };
  } catch (err) {
    const status = err instanceof RolloutError ? err.status : last;
    if (status) throw new PartialFailure(id, { ...inputs, __provider: inputs.__provider, status: outputStatus(status) }, errorText(err));
    throw err;
  } finally {
    await live.flush();
    abort.dispose();
    talos.close();
    await kube.close().catch(() => undefined);
  }
}

/** The status recomputed from the live versions (drift shows in `pulumi refresh`). */
function liveStatus(props: Properties, plan: KubernetesPlan): Partial<OutputStatus> {
  const prev = storedStatus(props) ?? {};
  if (plan.units.length === 0) {
    return { ...prev, phase: "Done", status: "", step: "", error: "", lastUpgradeVersion: plan.target, currentUpgradeVersion: "" };
  }
  const pending = new Set(plan.units.map(unitName));
  const total = Math.max(prev.machines?.length ?? 0, pending.size);
  return {
    ...prev,
    phase: prev.phase === "Failed" || prev.phase === "Waiting" ? prev.phase : "Upgrading",
    status: statusUpdating(currentMachineNumber(total, pending.size), total, pending.size),
    step: prev.phase === "Failed" || prev.phase === "Waiting" ? prev.step : STEP_NO_MACHINES_UPGRADING,
    currentUpgradeVersion: plan.target,
    ...(prev.machines ? { machines: prev.machines.map((m) => ({ ...m, state: pending.has(m.name) ? "pending" as const : "done" as const })) } : {}),
  };
}

function specs(olds: Properties, news: Properties): { old: KubernetesUpgradeSpec; next: KubernetesUpgradeSpec } | undefined {
  try {
    return { old: parseKubernetesUpgrade(olds), next: parseKubernetesUpgrade(news) };
  } catch {
    return undefined;
  }
}

export const kubernetesUpgradeHandler: KindHandler<KubernetesUpgradeSpec, KubernetesUpgradeOutputs> = {
  parse: (inputs) => parseKubernetesUpgrade(inputs),
  async check(_olds, news) {
    const failures = checkKubernetesUpgrade(news);
    if (failures.length) return { failures };
    const p = await preview(news);
    if (p.failures.length) return { failures: p.failures.map((reason) => ({ property: "version", reason })) };
    return { inputs: { ...news, plan: p.plan } };
  },
  async diff(_id, olds, news) {
    if (hasUnknown(ROLLOUT_INPUTS.map((k) => news[k]))) return { changes: true };
    const s = specs(olds, news);
    if (!s) return { changes: true };
    const replaces = s.old.clusterName !== s.next.clusterName ? ["clusterName"] : [];
    const resume = storedStatus(olds)?.phase !== "Done";
    const changes = resume || kubernetesRolloutKey(s.old) !== kubernetesRolloutKey(s.next) || kubernetesCredentialsChanged(s.old, s.next);
    return { changes, replaces };
  },
  async create(spec, inputs) {
    return { id: spec.clusterName, outs: await rollout(spec.clusterName, inputs, spec, "create") };
  },
  async read(id, props) {
    const spec = parseKubernetesUpgrade(props);
    const kube = kubeApi(spec.kubeconfig, spec.urn);
    try {
      const live = await withTimeout(30_000, msg.KUBERNETES_API, () => livePlan(spec, kube));
      return { id, props: { ...props, status: liveStatus(props, live.plan) } };
    } catch (err) {
      warn(spec.urn, msg.refreshWarning(spec.clusterName, errorText(err)));
      return { id, props };
    } finally {
      await kube.close().catch(() => undefined);
    }
  },
  async update(id, spec, olds, news) {
    const old = specs(olds, news)?.old;
    if (old && storedStatus(olds)?.phase === "Done" && kubernetesRolloutKey(old) === kubernetesRolloutKey(spec)) {
      progress(`${msg.clusterPrefix(spec.clusterName)} ${msg.credentialsUpdated}`);
      return { outs: { ...news, status: storedStatus(olds) } };
    }
    return { outs: await rollout(id, news, spec, "update", olds) };
  },
  async delete(_id, props) {
    const spec = parseKubernetesUpgrade(props);
    progress(msg.deleteKeepsKubernetes(spec.clusterName, storedStatus(props)?.lastUpgradeVersion ?? ""));
  },
};
