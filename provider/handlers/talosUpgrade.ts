// `TalosUpgrade`: the healthcheck-gated rolling upgrade. check validates everything offline and, when the cluster
// answers within a few seconds, puts the rollout plan into the `plan` input so `pulumi preview --diff` shows it;
// create/update run the rollout (progress lines on the stack row) and return the status; a bounded or cancelled run
// ends with partial state so the next `pulumi up` resumes; read recomputes the status from the live cluster; delete
// never downgrades a node.
import * as os from "node:os";
import type { KubeClient } from "../kube";
import { describePlan, planRollout, RolloutStrategy } from "../rollout/plan";
import type { HealthcheckJob, KubeApi, Machine } from "../rollout/ports";
import { RolloutError, runRollout } from "../rollout/run";
import type { UpgradeStatus } from "../rollout/status";
import { isValidVersion, normalizeVersion, sameVersion } from "../version";
import { currentMachineNumber, statusUpdating, STEP_NO_MACHINES_UPGRADING } from "../rollout/messages";
import { installerImage, targetVersion } from "../talos/image";
import { parseDuration } from "../template/duration";
import { CheckFailure, changed, errorText, hasUnknown, PartialFailure, progress, Props, UNKNOWN, withTimeout } from "./common";
import { GATE_KEYS, gatePlanLines, normalizeGates, parseGateInputs } from "./gates";
import { checkDuration } from "./inputs";
import * as msg from "./messages";
import type { KindHandler } from "./registry";

const SPEC = ["clusterName", "version", "installerImage", "schematic", "healthchecks", "healthcheckIds", "strategy",
  "holdTimeout", "nodeTimeout", "machineNames", ...GATE_KEYS];
const PREVIEW_TIMEOUT_MS = 5_000;
const DEFAULT_HOLD = "60m";
const DEFAULT_NODE = "15m";

function kubeApi(kubeconfig: string): KubeClient {
  return (require("../kube") as typeof import("../kube")).createKubeApi(kubeconfig);
}

function talosApi(talosconfig: string) {
  return (require("../talos") as typeof import("../talos")).createTalosApi(talosconfig);
}

/** The installer image and the version nodes must report afterwards. */
function target(p: Props): { image: string; version: string } {
  const image = p.installerImage
    ? String(p.installerImage)
    : installerImage({ version: p.version, schematic: p.schematic || undefined, platform: p.schematic ? "metal" : undefined });
  return { image, version: targetVersion(image, p.version) };
}

function strategyOf(p: Props): RolloutStrategy {
  const s = p.strategy ?? {};
  return { workerParallelism: s.workerParallelism, machineSetParallelism: s.machineSetParallelism, order: s.order };
}

function healthchecksOf(p: Props): HealthcheckJob[] {
  return (p.healthchecks ?? []).map((h: Props) => ({
    id: h.id,
    jobName: h.job?.metadata?.name,
    namespace: h.job?.metadata?.namespace ?? "default",
    job: h.job,
    configHash: h.configHash,
    intervalMs: parseDuration(h.interval ?? "30s"),
  }));
}

/** Only the machines the Cluster names, when it names any (a view over the port, not another implementation). */
function scoped(kube: KubeClient, names: unknown): KubeApi {
  if (!Array.isArray(names) || names.length === 0) return kube;
  const keep = new Set(names as string[]);
  return Object.assign(Object.create(kube), { listMachines: async () => (await kube.listMachines()).filter((m) => keep.has(m.name)) });
}

/** The status as the resource outputs it (the bounded event history stays in the cluster's status ConfigMap). */
function outputStatus(s: UpgradeStatus): Props {
  return {
    phase: s.phase, status: s.status, step: s.step, error: s.error,
    lastUpgradeVersion: s.lastUpgradeVersion, currentUpgradeVersion: s.currentUpgradeVersion,
    machines: s.machines.map((m) => ({
      name: m.name, role: m.role, from: m.from ?? "", to: m.to, state: m.state,
      started: m.started ?? "", finished: m.finished ?? "", durationMs: m.durationMs ?? 0,
    })),
    healthchecks: s.healthchecks.map((h) => ({
      id: h.id, state: h.state, attempts: h.attempts, lastReason: h.lastReason ?? "", lastRun: h.lastRun ?? "",
    })),
  };
}

async function previewPlan(news: Props): Promise<string[]> {
  // Only inputs known before anything exists: ids derived from the healthchecks' inputs, not their outputs.
  if (hasUnknown([news.kubeconfig, news.version, news.installerImage, news.schematic, news.healthcheckIds, news.conditionIds, news.strategy, news.machineNames])) {
    return [msg.planUnknownInputs];
  }
  const kube = scoped(kubeApi(news.kubeconfig), news.machineNames);
  try {
    return await withTimeout(PREVIEW_TIMEOUT_MS, "the Kubernetes API", async () => {
      const [machines, mirrored] = await Promise.all([kube.listMachines(), kube.readStatus(news.clusterName)]);
      const plan = planRollout({
        machines, targetVersion: target(news).version, strategy: strategyOf(news),
        healthchecks: [...(news.healthcheckIds ?? []), ...(news.conditionIds ?? [])],
        lastUpgradeVersion: (mirrored as UpgradeStatus | undefined)?.lastUpgradeVersion || undefined,
      });
      return [...describePlan(plan), ...gatePlanLines(parseGateInputs(news).inputs, new Date())];
    });
  } catch (err) {
    return [msg.planUnavailable(errorText(err))];
  } finally {
    await (kube as KubeClient).close?.().catch(() => undefined);
  }
}

async function rollout(id: string, inputs: Props, previous?: Props): Promise<Props> {
  const kube = kubeApi(inputs.kubeconfig);
  const talos = talosApi(inputs.talosconfig);
  const abort = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    progress(`${msg.clusterPrefix(inputs.clusterName)} ${msg.cancelled(sig)}`);
    abort.abort(new Error(msg.cancelled(sig)));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let last: UpgradeStatus | undefined;
  try {
    const mirrored = (await kube.readStatus(inputs.clusterName).catch(() => undefined)) as UpgradeStatus | undefined;
    const { image, version } = target(inputs);
    const status = await runRollout(scoped(kube, inputs.machineNames), talos, {
      cluster: inputs.clusterName,
      holder: inputs.owner ? `pulumi:${inputs.owner}` : `pulumi:${id}@${os.hostname()}:${process.pid}`,
      targetVersion: version,
      installerImage: () => image,
      healthchecks: healthchecksOf(inputs),
      strategy: strategyOf(inputs),
      lastUpgradeVersion: previous?.status?.lastUpgradeVersion || mirrored?.lastUpgradeVersion || undefined,
      holdTimeoutMs: parseDuration(inputs.holdTimeout ?? DEFAULT_HOLD),
      nodeTimeoutMs: parseDuration(inputs.nodeTimeout ?? DEFAULT_NODE),
      readyPollMs: 500,
      signal: abort.signal,
      onStatus: (s) => { last = s; },
      onProgress: progress,
    });
    return { ...inputs, status: outputStatus(status) };
  } catch (err) {
    const status = err instanceof RolloutError ? err.status : last;
    if (status) {
      throw new PartialFailure(id, { ...inputs, __provider: inputs.__provider, status: outputStatus(status) }, errorText(err));
    }
    throw err;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    talos.close();
    await kube.close().catch(() => undefined);
  }
}

/** The status recomputed from the live cluster (drift shows in `pulumi refresh`). */
function liveStatus(props: Props, machines: Machine[]): Props {
  const prev: Props = props.status ?? {};
  const version = normalizeVersion(props.version) ?? props.version;
  const off = machines.filter((m) => !sameVersion(m.talosVersion, version));
  const byName = new Map<string, Props>((prev.machines ?? []).map((m: Props) => [m.name, m]));
  const rows = machines.map((m) => ({
    ...(byName.get(m.name) ?? { from: "", started: "", finished: "", durationMs: 0 }),
    name: m.name, role: m.role, to: version,
    state: sameVersion(m.talosVersion, version) ? "done" : "pending",
  }));
  if (off.length === 0) {
    return { ...prev, phase: "Done", status: "", step: "", error: "", lastUpgradeVersion: version, currentUpgradeVersion: "", machines: rows };
  }
  return {
    ...prev,
    phase: prev.phase === "Failed" ? "Failed" : "Upgrading",
    status: statusUpdating(currentMachineNumber(machines.length, off.length), machines.length, off.length),
    step: prev.phase === "Failed" ? prev.step : STEP_NO_MACHINES_UPGRADING,
    currentUpgradeVersion: version,
    machines: rows,
  };
}

export const talosUpgradeHandler: KindHandler = {
  async check(_olds, news) {
    const failures: CheckFailure[] = [];
    if (news.version !== UNKNOWN && (typeof news.version !== "string" || !isValidVersion(news.version))) {
      failures.push({ property: "version", reason: msg.versionInvalid(news.version) });
    }
    if (!hasUnknown([news.version, news.installerImage, news.schematic]) && failures.length === 0) {
      try {
        target(news);
      } catch (err) {
        failures.push({ property: news.installerImage ? "installerImage" : "schematic", reason: msg.imageInvalid(errorText(err)) });
      }
    }
    checkDuration("holdTimeout", news.holdTimeout, failures, { ms: 1000, text: "1s" });
    checkDuration("nodeTimeout", news.nodeTimeout, failures, { ms: 1000, text: "1s" });
    const s = news.strategy;
    if (s && s !== UNKNOWN) {
      if (s.workerParallelism !== undefined && (!Number.isInteger(s.workerParallelism) || s.workerParallelism < 1)) {
        failures.push({ property: "strategy", reason: msg.strategyInvalid(`workerParallelism must be a whole number >= 1, got ${JSON.stringify(s.workerParallelism)}`) });
      }
      for (const [set, n] of Object.entries(s.machineSetParallelism ?? {})) {
        if (!Number.isInteger(n) || (n as number) < 1) {
          failures.push({ property: "strategy", reason: msg.strategyInvalid(`machineSetParallelism["${set}"] must be a whole number >= 1, got ${JSON.stringify(n)}`) });
        }
      }
      if (s.order !== undefined && (!Array.isArray(s.order) || s.order.some((n: unknown) => typeof n !== "string"))) {
        failures.push({ property: "strategy", reason: msg.strategyInvalid("order must be a list of node names") });
      }
    }
    if (news.healthchecks !== UNKNOWN) {
      (news.healthchecks ?? []).forEach((h: any, i: number) => {
        if (h === UNKNOWN || hasUnknown(h)) return;
        if (typeof h?.id !== "string" || !h.job || typeof h.job !== "object") {
          failures.push({ property: "healthchecks", reason: msg.healthchecksInvalid(i) });
        }
      });
    }
    failures.push(...parseGateInputs(news).failures);
    if (failures.length) return { failures };
    return { inputs: { ...news, plan: await previewPlan(news) } };
  },
  async diff(_id, olds, news) {
    if (hasUnknown(SPEC.map((k) => news[k]))) return { changes: true };
    const keys = changed(normalizeGates(olds), normalizeGates(news), SPEC);
    // Not converged (a failed, cancelled or drifted run): the next `pulumi up` resumes it.
    const resume = olds.status?.phase !== "Done";
    return { changes: keys.length > 0 || resume, replaces: keys.includes("clusterName") ? ["clusterName"] : [] };
  },
  async create(inputs) {
    const id = String(inputs.clusterName);
    return { id, outs: await rollout(id, inputs) };
  },
  async read(id, props) {
    const kube = scoped(kubeApi(props.kubeconfig), props.machineNames);
    try {
      const machines = await withTimeout(30_000, "the Kubernetes API", () => kube.listMachines());
      return { id, props: { ...props, status: liveStatus(props, machines) } };
    } catch (err) {
      progress(msg.refreshWarning(props.clusterName, errorText(err)));
      return { id, props };
    } finally {
      await (kube as KubeClient).close?.().catch(() => undefined);
    }
  },
  async update(id, olds, news) {
    return { outs: await rollout(id, news, olds) };
  },
  async delete(_id, props) {
    const kube = kubeApi(props.kubeconfig);
    try {
      const swept = await withTimeout(30_000, "the Kubernetes API", () => kube.sweepRunners());
      if (swept.jobs + swept.pods > 0) progress(msg.sweepDone(props.clusterName, swept.jobs, swept.pods));
      progress(msg.deleteKeepsNodes(props.clusterName, props.status?.lastUpgradeVersion ?? ""));
    } catch (err) {
      progress(msg.deleteUnreachable("TalosUpgrade", props.clusterName, errorText(err)));
    } finally {
      await kube.close().catch(() => undefined);
    }
  },
};
