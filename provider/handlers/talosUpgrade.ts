// `TalosUpgrade`: the healthcheck-gated rolling upgrade. check validates everything offline and, when the cluster
// answers within a few seconds, puts the rollout plan into the `plan` input so `pulumi preview --diff` shows it; diff
// compares the canonical rollout inputs (talosUpgradeSpec.ts), so a program with no change previews none;
// create/update run the rollout (progress lines on the stack row, warnings on the resource's row) and return the
// status — a credentials-only change just stores the new credentials; a bounded or cancelled run ends with partial
// state so the next `pulumi up` resumes; read recomputes the status from the live cluster; delete never downgrades.
import type { KubeClient, MirroredStatus } from "../kube";
import { describePlan, planRollout } from "../rollout/plan";
import { quorumLossPlanLines } from "../rollout/quorum";
import type { Machine, TalosApi } from "../rollout/ports";
import { nodeInstallerImage } from "../talos/image";
import { TalosError } from "../talos/errors";
import { withMachineOverrides } from "../resources/cluster";
import { RolloutError } from "../rollout/run";
import { runPath } from "../rollout/pathRun";
import { stepLabel } from "../rollout/path";
import { planPathStep } from "../rollout/messages";
import { livePathCheck, stepOf } from "./upgradePath";
import { laterStepLines } from "../rollout/pathPlan";
import { outputStatus, pendingCount, type OutputMachine, type OutputStatus, type UpgradeStatus } from "../rollout/status";
import { normalizeVersion, sameVersion } from "../version";
import { currentMachineNumber, statusUpdating, STEP_NO_MACHINES_UPGRADING } from "../rollout/messages";
import { errorText, hasUnknown, PartialFailure, progress, withTimeout, type CheckFailure, type Properties } from "./common";
import { warn } from "./diagnostics";
import { rolloutProgress } from "./rolloutProgress";
import { imagePlanLines, imageReadBudgetMs, type ImagePlan } from "./imagePlan";
import { holderOf as holderOfOwner, kubeApi, runAbort, talosApi } from "./runScaffold";
import { withBoundedHeap } from "./memory";
import { profileCpu } from "./cpuProfile";
import * as msg from "./messages";
import type { KindHandler } from "./registry";
import {
  checkTalosUpgrade, credentialsChanged, GateInputs, parseTalosUpgrade, PLAN_INPUTS, ROLLOUT_INPUTS, rolloutKey, TalosUpgradeSpec,
} from "../resources/talosUpgrade";

const PREVIEW_TIMEOUT_MS = 5_000;

/** The status this resource stored (any release's: read as far as it goes). */
export function storedStatus(state: Properties | undefined): Partial<OutputStatus> | undefined {
  const s = state?.status;
  return s && typeof s === "object" ? (s as Partial<OutputStatus>) : undefined;
}

/** The outputs: the inputs as given, the plan check put in them, and the status. */
type TalosUpgradeOutputs = Properties & { status: Partial<OutputStatus> | undefined };

/**
 * The version the cluster last converged to, as far as a revert may be decided on it: this resource's own state only
 * (the run adds what the live nodes all run). The status ConfigMap is display only — anyone who may write ConfigMaps
 * in kube-system could otherwise turn an upgrade into an ungated revert. The preview plan (display) takes it when this
 * resource wrote it (check has no state); one that claims another version and was written by someone else is named in
 * a warning, then ignored.
 */
function trustedLastVersion(
  spec: TalosUpgradeSpec, id: string, previous: Properties | undefined, mirrored: MirroredStatus | undefined, use: "run" | "display",
): string | undefined {
  const own: string | undefined = storedStatus(previous)?.lastUpgradeVersion || undefined;
  const claimed = (mirrored?.status as Partial<UpgradeStatus> | undefined)?.lastUpgradeVersion;
  if (typeof claimed !== "string" || claimed === "" || sameVersion(claimed, own ?? "")) return own;
  if (mirrored!.writtenBy !== holderOf(spec, id)) {
    warn(spec.urn, msg.mirrorIgnored(spec.clusterName, claimed, mirrored!.writtenBy));
    return own;
  }
  return use === "display" ? own ?? claimed : own;
}

/** Ids as the SDK derives them from the gates' inputs (known at preview), when given. */
const plannedIds = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.map(String) : undefined);

/** What reads the pending nodes' installer images for the plan (imageLines; a test gives its own). */
type ReadImages = (spec: TalosUpgradeSpec, pending: Machine[], target: string) => Promise<ImagePlan>;

/**
 * The preview's looks at the live cluster — the upgrade path's refusals, the nodes whose installer image cannot be
 * derived, and the plan — through one client and one LIST of the Nodes (issue 23.3: at 1,000 nodes each LIST is ~4 MB
 * the API server writes and the provider parses, beside the plan's thousands of Talos reads; the two looks made three).
 * At once: a cluster that does not answer costs the preview one bound, not two.
 */
export async function previewLive(
  news: Properties, olds: Properties, open: (spec: TalosUpgradeSpec) => KubeClient = (spec) => kubeApi(spec.kubeconfig, spec.urn),
  images: ReadImages = imageLines,
): Promise<[refused: CheckFailure[], plan: string[]]> {
  // Only inputs known before anything exists: ids derived from the healthchecks' inputs, not their outputs.
  if (hasUnknown(PLAN_INPUTS.map((k) => news[k]))) return [[], [msg.planUnknownInputs]];
  let kube: KubeClient | undefined;
  try {
    const spec = parseTalosUpgrade(news);
    kube = listedOnce(open(spec));
    const [path, planned] = await Promise.all([previewPathCheck(spec, kube), previewPlan(spec, kube, news, olds, images)]);
    return [[
      ...path.map((reason) => ({ property: "version", reason })),
      ...planned.refusals.map((reason) => ({ property: "installerImage", reason })),
    ], planned.plan];
  } catch (err) {
    return [[], [msg.planUnavailable(errorText(err))]];
  } finally {
    await kube?.close().catch(() => undefined);
  }
}

/** `kube` with its Node listing made once, by the first who asks, and shared (one preview's looks). */
function listedOnce(kube: KubeClient): KubeClient {
  let listed: Promise<Machine[]> | undefined;
  return Object.assign(Object.create(kube) as KubeClient, { listMachines: () => (listed ??= kube.listMachines()) });
}

async function previewPlan(
  spec: TalosUpgradeSpec, kube: KubeClient, news: Properties, olds: Properties,
  images: ReadImages,
): Promise<{ plan: string[]; refusals: string[] }> {
  try {
    // The Kubernetes part within 5 s; then the images read from the nodes under their own budget (imagePlan.ts).
    const planned = await withTimeout(PREVIEW_TIMEOUT_MS, msg.KUBERNETES_API, async () => {
      const scope = withMachineOverrides(kube, spec.machines);
      const [machines, mirrored] = await Promise.all([scope.listMachines(), kube.readStatusRecord(spec.clusterName)]);
      const healthchecks = [
        ...(plannedIds(news.healthcheckIds) ?? spec.healthchecks.map((h) => h.id)),
        ...(plannedIds(news.conditionIds) ?? spec.gates.conditions.map((c) => c.id)),
      ];
      // With a path: the step the cluster is in, planned from the live nodes, then every later step.
      const step = stepOf(spec, machines);
      const target = step ? step.steps[step.index] : spec.version;
      const plan = planRollout({
        machines, targetVersion: target, strategy: spec.strategy, healthchecks,
        lastUpgradeVersion: trustedLastVersion(spec, spec.clusterName, olds, mirrored, "display"),
      });
      const byName = new Map(machines.map((m) => [m.name, m]));
      const pending = plan.waves.flatMap((w) => w.machines.map((pm) => byName.get(pm.name)!));
      return {
        head: [...(step ? [planPathStep(stepLabel(step.steps, step.index), msg.planLiveCluster)] : []),
          ...describePlan(plan), ...quorumLossPlanLines(machines, plan, spec.etcdQuorumLoss)],
        pending, target,
        tail: [...(step ? laterStepLines(spec.strategy, machines, step, healthchecks) : []), ...gatePlanLines(spec.gates, new Date())],
      };
    });
    const read = await images(spec, planned.pending, planned.target);
    return { plan: [...planned.head, ...read.lines, ...planned.tail], refusals: read.refusals };
  } catch (err) {
    return { plan: [msg.planUnavailable(errorText(err))], refusals: [] };
  }
}

/**
 * The upgrade path against the live cluster (upgradePath.ts): the refusals; its warnings go on the resource's row. A
 * cluster that does not answer within the preview's budget refuses nothing (Talos' installer still checks at apply).
 */
async function previewPathCheck(spec: TalosUpgradeSpec, kube: KubeClient): Promise<string[]> {
  try {
    const r = await withTimeout(PREVIEW_TIMEOUT_MS, "the Kubernetes API", () => livePathCheck(spec, kube));
    for (const w of r.warnings) warn(spec.urn, `${msg.clusterPrefix(spec.clusterName)} ${w}`);
    return r.failures;
  } catch {
    return [];
  }
}

/** Plan lines for the gates beyond the healthchecks: the maintenance window, soak, hooks, volume detach. */
function gatePlanLines(g: GateInputs, now: Date): string[] {
  const lines: string[] = [];
  const window = g.schedule.planLine(now);
  if (window) lines.push(window);
  if (g.soakMs > 0) lines.push(msg.planSoak(g.soakMs));
  if (g.hooks.beforeNode) lines.push(msg.planHook("beforeNode", g.hooks.beforeNode.base.id));
  if (g.hooks.afterNode) lines.push(msg.planHook("afterNode", g.hooks.afterNode.base.id));
  return lines;
}

/** Each node's installer image: the user's choice, else its own platform and schematic, read from it (Omni's rule). */
function imageFor(talos: TalosApi, spec: TalosUpgradeSpec): (m: Machine, version: string, signal?: AbortSignal) => Promise<string> {
  return async (m, version, signal) => spec.installer.installerImage
    ?? nodeInstallerImage(m.name, version, await talos.imageFacts(m.address, { signal }), spec.installer);
}

/**
 * The plan's installer-image lines (imagePlan.ts); a node that cannot be read says so (the run reads it again), one
 * whose image cannot be derived (nodeInstallerImage's CONFIG refusals: extensions or SecureBoot without a schematic, no
 * platform) is refused.
 */
async function imageLines(spec: TalosUpgradeSpec, pending: Machine[], version: string): Promise<ImagePlan> {
  if (pending.length === 0) return { lines: [], refusals: [] };
  if (spec.installer.installerImage) return { lines: [msg.planImage(spec.installer.installerImage, [])], refusals: [] };
  const talos = talosApi(spec.talosconfig);
  try {
    const image = imageFor(talos, spec);
    return await imagePlanLines(pending, (m, signal) => image(m, version, signal), imageReadBudgetMs(pending.length),
      (err) => err instanceof TalosError && err.code === "CONFIG");
  } finally {
    talos.close();
  }
}

/**
 * Runs the rollout. It stops before the next node when the engine cancels (Ctrl-C or SIGTERM to the CLI) or is gone,
 * when this process gets SIGINT/SIGTERM (a terminal's Ctrl-C reaches the whole process group), or when someone asks
 * through the cluster (`talos-gate stop`, seen by the rollout on its Lease).
 */
async function rollout(id: string, inputs: Properties, spec: TalosUpgradeSpec, op: "create" | "update", previous?: Properties): Promise<TalosUpgradeOutputs> {
  const profiled = profileCpu();
  const kube = kubeApi(spec.kubeconfig, spec.urn, { cluster: spec.clusterName, holder: holderOf(spec, id) });
  const talos = talosApi(spec.talosconfig);
  const abort = runAbort(spec.clusterName, op === "create" ? spec.runTimeouts.createMs : spec.runTimeouts.updateMs, op);
  let last: UpgradeStatus | undefined;
  const live = rolloutProgress(spec.urn);
  try {
    const mirrored = await kube.readStatusRecord(spec.clusterName).catch(() => undefined);
    const status = await withBoundedHeap(() => runPath(withMachineOverrides(kube, spec.machines), talos, {
      cluster: spec.clusterName,
      holder: holderOf(spec, id),
      targetVersion: spec.version,
      installerImage: imageFor(talos, spec),
      healthchecks: spec.healthchecks,
      strategy: spec.strategy,
      lastUpgradeVersion: trustedLastVersion(spec, id, previous, mirrored, "run"),
      holdTimeoutMs: spec.holdTimeoutMs,
      nodeTimeoutMs: spec.nodeTimeoutMs,
      drain: spec.drain,
      etcdQuorumLoss: spec.etcdQuorumLoss,
      readyPollMs: 500,
      signal: abort.signal,
      onStatus: (s) => { last = s; },
      onEvent: live.onEvent,
      onProgress: live.note,
      onWarning: (line) => warn(spec.urn, line),
      conditions: spec.gates.conditions,
      soakMs: spec.gates.soakMs,
      schedule: spec.gates.schedule,
      hooks: spec.gates.hooks,
      volumeDetachTimeoutMs: spec.gates.volumeDetachTimeoutMs,
    }, spec.path));
    if (status.phase === "Waiting") warn(spec.urn, msg.rolloutWaiting(spec.clusterName, status.step, pendingCount(status)));
    return { ...inputs, status: outputStatus(status) };
  } catch (err) {
    const status = err instanceof RolloutError ? err.status : last;
    if (status) {
      throw new PartialFailure(id, { ...inputs, __provider: inputs.__provider, status: outputStatus(status) }, errorText(err));
    }
    throw err;
  } finally {
    await live.flush();
    abort.dispose();
    talos.close();
    await kube.close().catch(() => undefined);
    await profiled();
  }
}

/** The rollout's identity (runScaffold.ts): the Lease holder and the owner mark on the cordons it sets. */
function holderOf(spec: TalosUpgradeSpec, id: string): string {
  return holderOfOwner(spec.owner, id);
}

/** The status recomputed from the live cluster (drift shows in `pulumi refresh`). */
function liveStatus(props: Properties, machines: Machine[]): Partial<OutputStatus> {
  const prev = storedStatus(props) ?? {};
  const version = normalizeVersion(String(props.version)) ?? String(props.version);
  const off = machines.filter((m) => !sameVersion(m.talosVersion, version));
  const byName = new Map<string, OutputMachine>((prev.machines ?? []).map((m) => [m.name, m]));
  const rows = machines.map((m): OutputMachine => ({
    ...(byName.get(m.name) ?? { from: "", started: "", finished: "", durationMs: 0 }),
    name: m.name, role: m.role, to: version,
    state: sameVersion(m.talosVersion, version) ? "done" : "pending",
  }));
  if (off.length === 0) {
    return { ...prev, phase: "Done", status: "", step: "", error: "", lastUpgradeVersion: version, currentUpgradeVersion: "", machines: rows };
  }
  return {
    ...prev,
    phase: prev.phase === "Failed" || prev.phase === "Waiting" ? prev.phase : "Upgrading" as const,
    status: statusUpdating(currentMachineNumber(machines.length, off.length), machines.length, off.length),
    step: prev.phase === "Failed" || prev.phase === "Waiting" ? prev.step : STEP_NO_MACHINES_UPGRADING,
    currentUpgradeVersion: version,
    machines: rows,
  };
}

/** Old and new specs, or undefined when either cannot be read (then the diff cannot vouch for "no change"). */
function specs(olds: Properties, news: Properties): { old: TalosUpgradeSpec; next: TalosUpgradeSpec } | undefined {
  try {
    return { old: parseTalosUpgrade(olds), next: parseTalosUpgrade(news) };
  } catch {
    return undefined;
  }
}

export const talosUpgradeHandler: KindHandler<TalosUpgradeSpec, TalosUpgradeOutputs> = {
  parse: (inputs) => parseTalosUpgrade(inputs),
  async check(olds, news) {
    const failures = checkTalosUpgrade(news);
    if (failures.length) return { failures };
    const [refused, plan] = await previewLive(news, olds);
    if (refused.length) return { failures: refused };
    return { inputs: { ...news, plan } };
  },
  async diff(_id, olds, news) {
    if (hasUnknown(ROLLOUT_INPUTS.map((k) => news[k]))) return { changes: true };
    const s = specs(olds, news);
    if (!s) return { changes: true };
    const replaces = s.old.clusterName !== s.next.clusterName ? ["clusterName"] : [];
    // Not converged (a failed, cancelled or drifted run): the next `pulumi up` resumes it.
    const resume = storedStatus(olds)?.phase !== "Done";
    const changes = resume || rolloutKey(s.old) !== rolloutKey(s.next) || credentialsChanged(s.old, s.next);
    return { changes, replaces };
  },
  async create(spec, inputs) {
    return { id: spec.clusterName, outs: await rollout(spec.clusterName, inputs, spec, "create") };
  },
  async read(id, props) {
    const spec = parseTalosUpgrade(props);
    const kube = kubeApi(spec.kubeconfig, spec.urn);
    try {
      const machines = await withTimeout(30_000, msg.KUBERNETES_API, () => withMachineOverrides(kube, spec.machines).listMachines());
      return { id, props: { ...props, status: liveStatus(props, machines) } };
    } catch (err) {
      warn(spec.urn, msg.refreshWarning(spec.clusterName, errorText(err)));
      return { id, props };
    } finally {
      await kube.close().catch(() => undefined);
    }
  },
  async update(id, spec, olds, news) {
    const old = specs(olds, news)?.old;
    if (old && storedStatus(olds)?.phase === "Done" && rolloutKey(old) === rolloutKey(spec)) {
      // A credentials rotation (Talos client certificates expire yearly): store them, touch nothing.
      progress(`${msg.clusterPrefix(spec.clusterName)} ${msg.credentialsUpdated}`);
      return { outs: { ...news, status: storedStatus(olds) } };
    }
    return { outs: await rollout(id, news, spec, "update", olds) };
  },
  async delete(_id, props) {
    const spec = parseTalosUpgrade(props);
    // This upgrade's runner Jobs: its cluster, and its owner when that is stable across processes (spec.owner).
    const kube = kubeApi(spec.kubeconfig, spec.urn, { cluster: spec.clusterName, ...(spec.owner ? { holder: holderOf(spec, _id) } : {}) });
    try {
      const swept = await withTimeout(30_000, msg.KUBERNETES_API, () => kube.sweepRunners());
      if (swept.jobs + swept.pods > 0) progress(msg.sweepDone(spec.clusterName, swept.jobs, swept.pods));
      // Cordons this upgrade left (a killed run) are lifted; nobody else's.
      const owner = holderOf(spec, _id);
      const mine = await withTimeout(30_000, msg.KUBERNETES_API, async () => (await kube.listMachines()).filter((m) => m.cordonedBy === owner));
      for (const m of mine) {
        if (await kube.uncordon(m.name, owner)) progress(msg.deleteUncordoned(spec.clusterName, m.name));
      }
      progress(msg.deleteKeepsNodes(spec.clusterName, storedStatus(props)?.lastUpgradeVersion ?? ""));
    } catch (err) {
      warn(spec.urn, msg.deleteUnreachable("TalosUpgrade", spec.clusterName, errorText(err)));
    } finally {
      await kube.close().catch(() => undefined);
    }
  },
};
