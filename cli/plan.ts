// `talos-gate plan --version V [--kubeconfig K] [--talosconfig T] ...`: the ordered rollout plan against a live or
// simulated cluster, exactly as `pulumi preview` shows it (describePlan). Reads the machines from the Kubernetes
// Nodes, each node's running version from Talos when a talosconfig is given, and the last converged version from the
// mirrored status (so a change back to it is planned as an ungated revert). Changes nothing.
import * as path from "node:path";
import { describePlan, planRollout, PlanError, type RolloutStrategy } from "../provider/rollout/plan";
import { currentStep, pathSteps, stepLabel } from "../provider/rollout/path";
import { laterStepLines } from "../provider/rollout/pathPlan";
import { planPathStep } from "../provider/rollout/messages";
import { quorumLossPlanLines } from "../provider/rollout/quorum";
import type { Machine } from "../provider/rollout/ports";
import { isValidVersion, sameVersion } from "../provider/version";
import { withCliErrors, coreApi, parseOptions, readKubeconfig, readMirroredStatus, readTalosconfig, resolveCluster } from "./common";
import { CliError, cliMsg, PLAN_USAGE } from "./messages";

const TALOS_PROBE_MS = 5000;
const TALOS_CONCURRENCY = 32;

const list = (v: string | undefined): string[] | undefined =>
  v === undefined ? undefined : v.split(",").map((s) => s.trim()).filter((s) => s !== "");

/** Reads each machine's running version from Talos (authoritative, like Omni's live check); notes go to `notes`. */
async function withTalosVersions(machines: Machine[], talosconfig: string, notes: string[]): Promise<Machine[]> {
  const { createTalosApi } = require("../provider/talos") as typeof import("../provider/talos");
  const talos = createTalosApi(talosconfig);
  const failed: string[] = [];
  let lastError = "";
  try {
    const out = [...machines];
    let next = 0;
    const worker = async () => {
      while (next < out.length) {
        const i = next++;
        const m = out[i];
        const signal = AbortSignal.timeout(TALOS_PROBE_MS);
        try {
          const v = await talos.version(m.address, { signal });
          if (m.talosVersion !== undefined && !sameVersion(m.talosVersion, v)) notes.push(cliMsg.talosVersionDiffers(m.name, m.talosVersion, v));
          out[i] = { ...m, talosVersion: v };
        } catch (err) {
          failed.push(m.name);
          lastError = signal.aborted ? cliMsg.talosNoAnswer(TALOS_PROBE_MS) : (err as Error).message;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(TALOS_CONCURRENCY, out.length) }, worker));
    if (failed.length) notes.push(cliMsg.talosVersionUnavailable(failed.sort(), lastError));
    return out;
  } finally {
    talos.close();
  }
}

export function run(argv: string[]): Promise<number> {
  return withCliErrors("plan", () => body(argv));
}

async function body(argv: string[]): Promise<number> {
  const { values: o } = parseOptions("plan", argv, {
    kubeconfig: { type: "string" },
    talosconfig: { type: "string" },
    cluster: { type: "string" },
    version: { type: "string" },
    "worker-parallelism": { type: "string" },
    order: { type: "string" },
    "healthcheck-ids": { type: "string" },
    "last-upgrade-version": { type: "string" },
    path: { type: "string" },
    "etcd-quorum-loss": { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (o.help) {
    process.stdout.write(PLAN_USAGE + "\n");
    return 0;
  }
  if (!o.version) throw new CliError(cliMsg.versionRequired(), 2);
  const strategy: RolloutStrategy = {};
  if (o["worker-parallelism"] !== undefined) {
    const n = Number(o["worker-parallelism"]);
    if (!/^\d+$/.test(o["worker-parallelism"]) || n < 1) throw new CliError(cliMsg.notANumber("--worker-parallelism", o["worker-parallelism"]), 2);
    strategy.workerParallelism = n;
  }
  const order = list(o.order);
  if (order) strategy.order = order;
  const upgradePath = list(o.path) ?? [];
  for (const v of upgradePath) if (!isValidVersion(v)) throw new CliError(cliMsg.badPathVersion(v), 2);
  const quorumLoss = o["etcd-quorum-loss"] ?? "refuse";
  if (quorumLoss !== "refuse" && quorumLoss !== "allow") throw new CliError(cliMsg.badQuorumLoss(quorumLoss), 2);
  if (!isValidVersion(o.version)) {
    // planRollout words this error; fail before touching the cluster
    try {
      planRollout({ machines: [], targetVersion: o.version });
    } catch (err) {
      throw new CliError((err as Error).message, 2);
    }
  }

  const kubeconfig = readKubeconfig(o.kubeconfig);
  const talosconfig = readTalosconfig(o.talosconfig);
  const { createKubeApi } = require("../provider/kube") as typeof import("../provider/kube");
  const kube = createKubeApi(kubeconfig.text, { kubeconfigDir: path.dirname(path.resolve(kubeconfig.file)) });
  const notes: string[] = [];
  try {
    const core = coreApi(kubeconfig.text);
    let lastUpgradeVersion = o["last-upgrade-version"];
    let fromStatus: string | undefined;
    if (lastUpgradeVersion === undefined) {
      const cluster = await resolveCluster(core, o.cluster);
      const mirrored = cluster !== undefined ? await readMirroredStatus(core, cluster) : undefined;
      const last = mirrored?.status.lastUpgradeVersion;
      if (typeof last === "string" && last !== "") {
        lastUpgradeVersion = last;
        fromStatus = cluster;
      }
    }
    let machines = await kube.listMachines();
    if (talosconfig) machines = await withTalosVersions(machines, talosconfig.text, notes);
    // With --path, as preview plans it (provider/handlers/upgradePath.ts): the step the live nodes are in, then each
    // later step from the one before.
    const healthchecks = list(o["healthcheck-ids"]) ?? [];
    const steps = upgradePath.length ? pathSteps(upgradePath, o.version) : undefined;
    const at = steps ? { index: currentStep(steps, machines.map((m) => m.talosVersion)), steps } : undefined;
    let plan;
    try {
      plan = planRollout({
        machines,
        targetVersion: at ? at.steps[at.index] : o.version,
        strategy,
        healthchecks,
        ...(lastUpgradeVersion ? { lastUpgradeVersion } : {}),
      });
    } catch (err) {
      if (err instanceof PlanError) throw new CliError(err.message);
      throw err;
    }
    if (o.json) {
      process.stdout.write(JSON.stringify(plan, null, 2) + "\n");
    } else {
      const lines = describePlan(plan);
      if (fromStatus !== undefined && lastUpgradeVersion) lines.splice(1, 0, cliMsg.planUsingStatus(fromStatus, lastUpgradeVersion));
      if (at) lines.unshift(planPathStep(stepLabel(at.steps, at.index), cliMsg.planLiveNodes));
      lines.push(...quorumLossPlanLines(machines, plan, quorumLoss));
      if (at) lines.push(...laterStepLines(strategy, machines, at, healthchecks));
      process.stdout.write(lines.join("\n") + "\n");
    }
    for (const n of notes) process.stderr.write(n + "\n");
    return 0;
  } catch (err) {
    // The ports' errors already say what failed and what to do; print them without a stack.
    if (err instanceof Error && (err.name === "KubeError" || err.name === "TalosError")) throw new CliError(err.message);
    throw err;
  } finally {
    await kube.close().catch(() => undefined);
  }
}
