// The KubernetesUpgrade's run (issue 24.3): `talosctl upgrade-k8s` over the Talos API (kubernetesPlan.ts says what
// and in which order), with the Talos rollout's machinery around every unit — the same Lease (a TalosUpgrade of the
// cluster is refused while it runs, and it is refused while one runs), the same gate before each unit (healthchecks,
// conditions, before a control plane every other control plane Ready and etcd healthy), soak, windows, the status
// reducer and its progress lines. Level-based: every unit starts from the live versions, so a killed run resumes
// without redoing a node already on the target. Every wait is bounded: a unit by nodeTimeout, the gate by holdTimeout.
import { deadline, systemClock, type Deadline } from "./clock";
import { ConditionWatch } from "./conditions";
import { RunContext, Stop, errorText } from "./context";
import { holdGate } from "./hold";
import {
  asRolloutPlan, kubernetesSkewFailures, planKubernetesUpgrade, unitName, type ControlPlaneComponent, type KubernetesNode,
  type KubernetesUnit, type TalosKubernetesRange,
} from "./kubernetesPlan";
import type { KubeApi, Machine, TalosApi } from "./ports";
import type { Wave } from "./plan";
import { acquireRolloutLease, runToTheEnd, type RunOptions } from "./run";
import { soak } from "./soak";
import { initialStatus, kubernetesStatusKey, type UpgradeStatus } from "./status";
import { checkWindow } from "./window";
import * as msg from "./messages";
import { sameVersion } from "../version";

/** The parts of a node's machine config a unit sets to the target's images (Talos' `upgrade-k8s` patches). */
export type KubernetesImagePart = "apiServer" | "controllerManager" | "scheduler" | "proxy" | "kubelet";

const PART_OF: Record<ControlPlaneComponent, KubernetesImagePart> = {
  "kube-apiserver": "apiServer", "kube-controller-manager": "controllerManager", "kube-scheduler": "scheduler",
};

/** One static pod as Talos reports it (COSI StaticPodStatus). */
export interface StaticPodState {
  component: string;
  /** The image's tag ("v1.36.1"); undefined when it has none. */
  version?: string;
  image: string;
  ready: boolean;
}

/** kube-proxy's DaemonSet as `kubectl rollout status` reads it; `version` is its image's tag. */
export interface KubeProxyRollout {
  version?: string;
  image?: string;
  generation: number;
  observedGeneration: number;
  desired: number;
  updated: number;
  available: number;
}

/** What the Kubernetes rollout needs beyond the two ports: the live versions and the machine config patches. */
export interface KubernetesPort {
  /** Each machine's live Kubernetes versions (static pods of control planes; kubelets as the machines carry them). */
  read(machines: readonly Machine[], signal: AbortSignal): Promise<KubernetesNode[]>;
  /** Sets `parts` to `version`'s images in the node's machine config, without a reboot (no change when already set). */
  setImages(node: Machine, version: string, parts: readonly KubernetesImagePart[], signal: AbortSignal): Promise<void>;
  /** The node's static pods, as Talos reports them. */
  staticPods(node: Machine, signal: AbortSignal): Promise<StaticPodState[]>;
  /** kube-proxy's DaemonSet, or undefined when the cluster has none. */
  proxy(signal: AbortSignal): Promise<KubeProxyRollout | undefined>;
  /** The kube-proxy version (image tag) in the bootstrap manifests the control plane renders now; null if none. */
  renderedProxyVersion(node: Machine, signal: AbortSignal): Promise<string | null>;
  /** Applies the bootstrap manifests the control plane renders into the cluster, as `talosctl upgrade-k8s` syncs them. */
  syncManifests(node: Machine, signal: AbortSignal): Promise<void>;
}

export type KubernetesRunOptions = Pick<RunOptions,
  | "cluster" | "holder" | "targetVersion" | "healthchecks" | "lastUpgradeVersion" | "holdTimeoutMs" | "nodeTimeoutMs"
  | "readyPollMs" | "statusWriteIntervalMs" | "leaseDurationSeconds" | "signal" | "clock" | "onStatus" | "onProgress"
  | "onEvent" | "onWarning" | "conditions" | "soakMs" | "schedule"> & {
  /** Talos' Kubernetes range per release (checked again before the first unit: the cluster may have changed since preview). */
  talosRange: TalosKubernetesRange;
};

/**
 * The Kubernetes port for this run: its status under its own key, and no Node Events (the Talos rollout's Events say
 * "TalosUpgrade"; a unit is not a node).
 */
function kubernetesScoped(kube: KubeApi): KubeApi {
  return Object.create(kube, {
    recordEvent: { value: undefined },
    writeStatus: { value: (cluster: string, status: unknown) => kube.writeStatus(kubernetesStatusKey(cluster), status) },
    readStatus: { value: (cluster: string) => kube.readStatus(kubernetesStatusKey(cluster)) },
  }) as KubeApi;
}

/** How often a unit looks again at what it waits for (a static pod, a kubelet) when no watch wakes it earlier. */
const DEFAULT_POLL_MS = 2000;

export async function runKubernetesUpgrade(kube: KubeApi, talos: TalosApi, port: KubernetesPort, opts: KubernetesRunOptions): Promise<UpgradeStatus> {
  const clock = opts.clock ?? systemClock;
  const lease = await acquireRolloutLease(kube, opts);
  const scoped = kubernetesScoped(kube);
  // The Talos rollout's options: no installer (nothing is installed), and etcd's consent asked only as health (no
  // member goes down: an API server restarting keeps its etcd member).
  const runOpts: RunOptions = {
    ...opts, targetVersion: opts.targetVersion, etcdQuorumLoss: "allow",
    installerImage: () => { throw new Error("a Kubernetes upgrade installs no Talos image"); },
  };
  const ctx = new RunContext(scoped, talos, runOpts, clock, lease, initialStatus(opts.cluster, { lastUpgradeVersion: opts.lastUpgradeVersion }));
  const conditions = opts.conditions?.length ? new ConditionWatch(kube, opts.conditions) : undefined;
  return runToTheEnd(ctx, () => rollUnits(ctx, port, opts.talosRange, conditions), conditions, true);
}

/** The live plan: machines from the Node watch, versions from the port (bounded by the run's stop). */
async function livePlan(ctx: RunContext, port: KubernetesPort) {
  const machines = await ctx.machines();
  const [nodes, proxy] = await Promise.all([port.read(machines, ctx.stop), port.proxy(ctx.stop)]);
  return { machines, nodes, plan: planKubernetesUpgrade(nodes, ctx.opts.targetVersion, proxy) };
}

async function rollUnits(ctx: RunContext, port: KubernetesPort, talosRange: TalosKubernetesRange, conditions: ConditionWatch | undefined): Promise<void> {
  const ids = [...ctx.opts.healthchecks.map((c) => c.id), ...(ctx.opts.conditions ?? []).map((c) => c.id)];
  const first = await livePlan(ctx, port);
  // Refused at preview too; checked again on what runs now (a TalosUpgrade before this one may have changed the range).
  const skew = first.plan.units.length ? kubernetesSkewFailures(first.nodes, ctx.opts.targetVersion, talosRange) : [];
  if (skew.length) throw new Stop(skew.join("; "));
  const statusPlan = asRolloutPlan(first.plan, ids, ctx.opts.lastUpgradeVersion || undefined);
  await ctx.emit({ type: "RunStarted", at: ctx.now(), plan: statusPlan }, true);
  const attempted = new Set<string>();
  let lastBackAt: number | undefined;
  for (;;) {
    const { machines, plan } = await livePlan(ctx, port);
    // kube-proxy is planned while anything is left (its patch is idempotent); once per run is enough.
    const unit = plan.units.find((u) => !(u.kind === "proxy" && attempted.has(unitName(u))));
    if (!unit) return;
    const name = unitName(unit);
    if (attempted.has(name)) throw new Stop(msg.reasonNodeWrongVersion(name, unit.kind === "proxy" ? undefined : unit.from, plan.target));
    ctx.checkStop(name);
    checkWindow(ctx);
    if (lastBackAt !== undefined) await soak(ctx, conditions, name, lastBackAt);
    const wave = statusPlan.waves.find((w) => w.machines[0].name === name) ?? asRolloutPlan({ ...plan, units: [unit] }, ids).waves[0];
    await holdGate(ctx, wave.index, gateWave(wave, unit), new Set(), conditions, { userGates: true });
    checkWindow(ctx); // the window may have closed while the gate held
    attempted.add(name);
    await ctx.emit({ type: "WaveStarted", at: ctx.now(), wave: wave.index });
    await ctx.emit({ type: "NodeStarted", at: ctx.now(), node: name }, true);
    const bound = deadline(ctx.clock, ctx.now() + ctx.opts.nodeTimeoutMs, [ctx.stop]);
    try {
      await runUnit(ctx, port, unit, machines, bound);
    } catch (e) {
      const reason = bound.expired() || !ctx.stop.aborted ? errorText(e) : ctx.stopReason();
      await ctx.emit({ type: "NodeFailed", at: ctx.now(), node: name, reason }, true);
      throw new Stop(reason);
    } finally {
      bound.dispose();
    }
    await ctx.emit({ type: "NodeBack", at: ctx.now(), node: name, version: plan.target }, true);
    await ctx.emit({ type: "WaveDone", at: ctx.now(), wave: wave.index }, true);
    lastBackAt = ctx.now();
  }
}

/**
 * The wave the gate holds for: named by the unit's node (the gate's readiness rule and etcd's health are about that
 * node, and a stop names it); kube-proxy's is no node's.
 */
function gateWave(wave: Wave, unit: KubernetesUnit): Wave {
  return unit.kind === "proxy" ? wave : { ...wave, machines: wave.machines.map((m) => ({ ...m, name: unit.node })) };
}

function machineOf(machines: readonly Machine[], node: string): Machine {
  const m = machines.find((x) => x.name === node);
  if (!m) throw new Error(msg.nodeNotInCluster(node));
  return m;
}

async function runUnit(ctx: RunContext, port: KubernetesPort, unit: KubernetesUnit, machines: readonly Machine[], bound: Deadline): Promise<void> {
  const target = ctx.opts.targetVersion;
  const name = unitName(unit);
  const step = (s: "installing" | "waiting", detail?: string) => ctx.emit({ type: "NodeStep", at: ctx.now(), node: name, step: s, ...(detail ? { detail } : {}) });
  if (unit.kind === "proxy") {
    await step("installing");
    const controlPlanes = machines.filter((m) => m.role === "controlplane");
    for (const cp of controlPlanes) {
      await patch(port, cp, target, ["proxy"], bound, msg.K8S_PROXY_UNIT);
    }
    // Talos only creates missing bootstrap objects; the DaemonSet moves only when the manifests are synced
    // (talos_managed.go PerformManifestsSync, from the first control plane as upgrade-k8s does).
    const source = controlPlanes[0];
    if (!source) return;
    await step("installing", "bootstrap manifests");
    await waitRendered(ctx, port, source, bound);
    try {
      await port.syncManifests(source, bound.signal);
    } catch (e) {
      throw new Error(msg.k8sManifestSyncFailed(source.name, errorText(e)));
    }
    await step("waiting", msg.K8S_PROXY_DAEMONSET);
    await waitProxyRollout(ctx, port, bound);
    return;
  }
  const node = machineOf(machines, unit.node);
  if (unit.kind === "controlPlane") {
    await step("installing", unit.components.join(", "));
    await patch(port, node, target, unit.components.map((c) => PART_OF[c]), bound, unit.components.join(", "));
    await step("waiting", unit.components.join(", "));
    await waitStaticPods(ctx, port, node, unit.components, bound);
    return;
  }
  await step("installing", "kubelet");
  await patch(port, node, target, ["kubelet"], bound, "machine.kubelet.image");
  await step("waiting", "kubelet");
  await waitKubelet(ctx, node, bound);
}

async function patch(port: KubernetesPort, node: Machine, version: string, parts: readonly KubernetesImagePart[], bound: Deadline, what: string): Promise<void> {
  try {
    await port.setImages(node, version, parts, bound.signal);
  } catch (e) {
    throw new Error(msg.k8sPatchFailed(node.name, what, errorText(e)));
  }
}

/**
 * Until each of `components` runs the target and is Ready on `node` (Talos' checkPodStatus waits for the pod of the new
 * config, Ready); at nodeTimeout, fails naming the node and the first component not there, with what was last seen.
 */
async function waitStaticPods(ctx: RunContext, port: KubernetesPort, node: Machine, components: readonly ControlPlaneComponent[], bound: Deadline): Promise<void> {
  const target = ctx.opts.targetVersion;
  let pods: StaticPodState[] = [];
  for (;;) {
    pods = await port.staticPods(node, bound.signal).catch(() => pods); // a restarting API server or apid: look again
    const missing = components.find((c) => {
      const p = pods.find((x) => x.component === c);
      return !p || !p.ready || !sameVersion(p.version, target);
    });
    if (!missing) return;
    if (bound.signal.aborted) {
      const p = pods.find((x) => x.component === missing);
      throw new Error(msg.k8sStaticPodTimeout(node.name, missing, target, ctx.opts.nodeTimeoutMs, msg.k8sStaticPodSeen(p?.image, p?.ready)));
    }
    await ctx.clock.sleep(ctx.opts.readyPollMs ?? DEFAULT_POLL_MS, bound.signal);
  }
}

/** Until the Node reports the target kubelet (Talos' checkNodeKubeletVersion); woken by the Node watch. */
async function waitKubelet(ctx: RunContext, node: Machine, bound: Deadline): Promise<void> {
  const target = ctx.opts.targetVersion;
  for (;;) {
    const generation = ctx.machinesVersion();
    const seen = (await ctx.machine(node.name))?.kubeletVersion;
    if (sameVersion(seen, target)) return;
    if (bound.signal.aborted) throw new Error(msg.k8sKubeletTimeout(node.name, target, ctx.opts.nodeTimeoutMs, seen));
    await ctx.machinesChanged(generation, ctx.opts.readyPollMs ?? DEFAULT_POLL_MS, bound.signal);
  }
}

/** Until the control plane renders kube-proxy's target image (Talos re-renders its manifests after the patch). */
async function waitRendered(ctx: RunContext, port: KubernetesPort, node: Machine, bound: Deadline): Promise<void> {
  const target = ctx.opts.targetVersion;
  let seen: string | null | undefined;
  for (;;) {
    seen = await port.renderedProxyVersion(node, bound.signal).catch(() => seen); // apid busy: look again
    if (seen === null || sameVersion(seen, target)) return;
    if (bound.signal.aborted) throw new Error(msg.k8sProxyNotRendered(node.name, target, ctx.opts.nodeTimeoutMs, seen));
    await ctx.clock.sleep(ctx.opts.readyPollMs ?? DEFAULT_POLL_MS, bound.signal);
  }
}

/**
 * Done as `kubectl rollout status` says it (k8s.io/kubectl pkg/polymorphichelpers/rollout_status.go
 * DaemonSetStatusViewer: generation observed, every desired pod updated and available), on the target's image.
 */
export function proxyRolledOut(s: KubeProxyRollout, target: string): boolean {
  return s.observedGeneration >= s.generation && s.updated >= s.desired && s.available >= s.desired && sameVersion(s.version, target);
}

/** Until kube-proxy's DaemonSet has rolled out the target (none: nothing to wait for); bounded by nodeTimeout. */
async function waitProxyRollout(ctx: RunContext, port: KubernetesPort, bound: Deadline): Promise<void> {
  const target = ctx.opts.targetVersion;
  let seen: KubeProxyRollout | undefined;
  for (;;) {
    const read = await port.proxy(bound.signal).then((r) => ({ r }), () => undefined); // API server busy: look again
    if (read) seen = read.r;
    if (read && (read.r === undefined || proxyRolledOut(read.r, target))) return;
    if (bound.signal.aborted) throw new Error(msg.k8sProxyRolloutTimeout(target, ctx.opts.nodeTimeoutMs, msg.k8sProxySeen(seen)));
    await ctx.clock.sleep(ctx.opts.readyPollMs ?? DEFAULT_POLL_MS, bound.signal);
  }
}
