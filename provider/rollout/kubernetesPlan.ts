// The KubernetesUpgrade's plan and skew rules (issue 24.3). PURE: no I/O. Level-based like the Talos rollout: what is
// left is read from the live versions (each control plane's static pods, each Node's kubelet), so a killed run resumes
// without redoing a node already on the target.
//
// The order ports `talosctl upgrade-k8s` (siderolabs/talos pkg/cluster/kubernetes/talos_managed.go Upgrade and
// kubelet.go upgradeKubelet, at ad88231): the control planes' static pods, then kube-proxy (`cluster.proxy.image` on
// every control plane), then each kubelet (control planes first, then workers). One difference, for the gate between
// nodes: talosctl moves one component at a time across all control planes (every API server, then every
// controller-manager, then every scheduler); here each control plane moves its three together, one node at a time.
// Talos points a control plane's controller-manager and scheduler at its own node's API server (localhost), so neither
// is newer than the API server it talks to.
import type { Role } from "./ports";
import type { Plan, PlannedMachine, Wave } from "./plan";
import { compareVersions, isValidVersion, normalizeVersion, parseVersion } from "../version";
import * as msg from "./messages";

export const CONTROL_PLANE_COMPONENTS = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"] as const;
export type ControlPlaneComponent = (typeof CONTROL_PLANE_COMPONENTS)[number];

/** Kubelets may be this many minors older than the API server (Kubernetes' version skew policy since 1.28). */
export const KUBELET_MAX_MINORS_BEHIND = 3;

/** One node as the Kubernetes rollout reads it, live. */
export interface KubernetesNode {
  name: string;
  role: Role;
  ready: boolean;
  /** The Talos version it runs (its Node's osImage); undefined if unknown (then not checked). */
  talosVersion?: string;
  /** Its Node's `status.nodeInfo.kubeletVersion`; undefined if unknown (then planned). */
  kubeletVersion?: string;
  /** Control planes: the version (image tag) of each static pod found; a missing one is planned. */
  staticPods?: Partial<Record<ControlPlaneComponent, string>>;
}

export type KubernetesUnit =
  | { kind: "controlPlane"; node: string; role: Role; components: ControlPlaneComponent[]; from?: string }
  | { kind: "proxy"; from?: string }
  | { kind: "kubelet"; node: string; role: Role; from?: string };

export interface KubernetesPlan {
  target: string;
  /** In order: control planes one at a time, kube-proxy, kubelets (control planes first); the gate before each. */
  units: KubernetesUnit[];
  /** Nodes with nothing left to do. */
  done: string[];
}

/**
 * Talos' own rule (provider/talos/compat.ts kubernetesRefusal, injected: the rollout core imports no adapter): the
 * range of Kubernetes that Talos `talos`'s release supports when it excludes `kubernetes`, else undefined.
 */
export type TalosKubernetesRange = (kubernetes: string, talos: string) => { release: string; min: string; max: string } | undefined;

const minorOf = (v: string) => {
  const p = parseVersion(v);
  return p ? { major: p.major, minor: p.minor } : undefined;
};

/** b's minor minus a's (same major), or undefined when either is not a version or the majors differ. */
function minorsBetween(a: string, b: string): number | undefined {
  const x = minorOf(a), y = minorOf(b);
  return x && y && x.major === y.major ? y.minor - x.minor : undefined;
}

const onTarget = (v: string | undefined, target: string) => v !== undefined && isValidVersion(v) && compareVersions(v, target) === 0;

/** The lowest of the versions given (undefined when none is known). */
function lowest(versions: ReadonlyArray<string | undefined>): string | undefined {
  const known = versions.filter((v): v is string => v !== undefined && isValidVersion(v));
  const low = known.sort(compareVersions)[0];
  return low === undefined ? undefined : normalizeVersion(low);
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);

/** kube-proxy as the cluster runs it: its DaemonSet's version (image tag); undefined when unknown or without one. */
export interface KubeProxyState {
  version?: string;
}

/** What is left to bring every node (and kube-proxy's DaemonSet, when known) to Kubernetes `target`, in order. */
export function planKubernetesUpgrade(nodes: readonly KubernetesNode[], target: string, proxy?: KubeProxyState): KubernetesPlan {
  const to = normalizeVersion(target);
  const controlPlanes = nodes.filter((n) => n.role === "controlplane").sort(byName);
  const units: KubernetesUnit[] = [];
  for (const n of controlPlanes) {
    const components = CONTROL_PLANE_COMPONENTS.filter((c) => !onTarget(n.staticPods?.[c], to));
    if (components.length === 0) continue;
    const from = lowest(components.map((c) => n.staticPods?.[c]));
    units.push({ kind: "controlPlane", node: n.name, role: n.role, components, ...(from ? { from } : {}) });
  }
  const kubelets = [...controlPlanes, ...nodes.filter((n) => n.role !== "controlplane").sort(byName)]
    .filter((n) => !onTarget(n.kubeletVersion, to))
    .map((n): KubernetesUnit => ({ kind: "kubelet", node: n.name, role: n.role, ...(n.kubeletVersion ? { from: normalizeVersion(n.kubeletVersion) } : {}) }));
  // kube-proxy's patch and sync are idempotent: it goes whenever anything else is left (a run killed before it still
  // finds kubelets), or when its DaemonSet is not on the target (a run killed between the patch and the sync).
  const proxyFrom = proxy?.version !== undefined && isValidVersion(proxy.version) ? normalizeVersion(proxy.version) : undefined;
  if (units.length || kubelets.length || (proxyFrom !== undefined && !onTarget(proxyFrom, to))) {
    units.push({ kind: "proxy", ...(proxyFrom ? { from: proxyFrom } : {}) });
  }
  units.push(...kubelets);
  const pendingNodes = new Set(units.flatMap((u) => (u.kind === "proxy" ? [] : [u.node])));
  return { target: to, units, done: nodes.map((n) => n.name).filter((n) => !pendingNodes.has(n)).sort() };
}

/**
 * Why Kubernetes `target` cannot be rolled onto these nodes (one line each, naming node, both versions and the rule):
 * Kubernetes' version skew policy (the control plane moves one minor at a time and never down a minor; kubelets never
 * newer than the API server, nor more than 3 minors behind it) and Talos' range (each node's Talos release supports
 * a range of Kubernetes versions: provider/talos/compat.ts, from Talos' compatibility package) — of `talosTarget` for
 * a node below it (the TalosUpgrade this one runs after).
 */
export function kubernetesSkewFailures(
  nodes: readonly KubernetesNode[], target: string, talosRange: TalosKubernetesRange, talosTarget?: string,
): string[] {
  const to = normalizeVersion(target);
  const failures: string[] = [];
  for (const n of [...nodes].sort(byName)) {
    for (const c of CONTROL_PLANE_COMPONENTS) {
      const v = n.staticPods?.[c];
      if (v === undefined || !isValidVersion(v)) continue;
      const d = minorsBetween(v, to);
      const where = `${c} on ${n.name}`;
      if (d !== undefined && d > 1) failures.push(msg.k8sSkipsMinor(where, normalizeVersion(v), to, nextMinor(v)));
      if (d !== undefined && d < 0) failures.push(msg.k8sDowngradeMinor(where, normalizeVersion(v), to));
    }
    const k = n.kubeletVersion;
    if (k !== undefined && isValidVersion(k)) {
      const d = minorsBetween(k, to);
      if (d !== undefined && d < 0) failures.push(msg.k8sKubeletNewer(n.name, normalizeVersion(k), to));
      if (d !== undefined && d > KUBELET_MAX_MINORS_BEHIND) failures.push(msg.k8sKubeletTooOld(n.name, normalizeVersion(k), to, KUBELET_MAX_MINORS_BEHIND));
    }
    // The Talos the node will run when this upgrade runs: a TalosUpgrade it comes after may move it up first.
    const later = talosTarget !== undefined && isValidVersion(talosTarget) && (n.talosVersion === undefined || !isValidVersion(n.talosVersion)
      || compareVersions(talosTarget, n.talosVersion) > 0);
    const talos = later ? talosTarget : n.talosVersion;
    const r = talos !== undefined && isValidVersion(talos) ? talosRange(to, talos) : undefined;
    if (r) failures.push(msg.k8sOutsideTalos(n.name, normalizeVersion(talos!), to, r.release, r.min, r.max, later));
  }
  return failures;
}

function nextMinor(v: string): string {
  const p = parseVersion(v)!;
  return `v${p.major}.${p.minor + 1}`;
}

/** The unit's name in the status and the progress lines. */
export function unitName(u: KubernetesUnit): string {
  if (u.kind === "proxy") return msg.K8S_PROXY_UNIT;
  return u.kind === "controlPlane" ? msg.k8sControlPlaneUnit(u.node) : msg.k8sKubeletUnit(u.node);
}

/**
 * The plan in the Talos rollout's shape, so its status reducer, progress lines, status outputs and mirror carry the
 * Kubernetes rollout too: one wave per unit, each gated by every check. kube-proxy is a "worker" wave: no node's
 * readiness is at stake while its config is patched.
 */
export function asRolloutPlan(plan: KubernetesPlan, healthchecks: readonly string[], lastUpgradeVersion?: string): Plan {
  const waves: Wave[] = plan.units.map((u, i) => {
    const machine: PlannedMachine = {
      name: unitName(u), role: u.kind === "proxy" ? "worker" : u.role, machineSet: u.kind === "proxy" ? "kube-proxy" : u.kind,
      ...(u.from ? { from: u.from } : {}), to: plan.target, ready: true,
    };
    return { index: i + 1, role: machine.role, machines: [machine], gatedBy: [...healthchecks] };
  });
  return {
    target: plan.target, mode: waves.length ? "upgrading" : "done", ...(lastUpgradeVersion ? { lastUpgradeVersion } : {}),
    waves, skipped: [], total: waves.length, pending: waves.length, notReady: [], groups: [], waitingForReady: false,
    notReadyPending: [], setAside: [], healthchecks: [...healthchecks],
  };
}

/** The plan's lines for `pulumi preview --diff`. */
export function describeKubernetesPlan(plan: KubernetesPlan, healthchecks: readonly string[]): string[] {
  const cps = plan.units.filter((u) => u.kind === "controlPlane").length;
  const kubelets = plan.units.filter((u) => u.kind === "kubelet").length;
  return [
    msg.k8sPlanHeadline(plan.target, cps, kubelets, plan.done.length, plan.units.some((u) => u.kind === "proxy")),
    ...plan.units.map((u, i) => {
      const what = u.kind === "controlPlane" ? u.components.join(", ") : u.kind === "proxy" ? msg.K8S_PROXY_WHAT : "kubelet";
      return msg.k8sPlanUnitLine(i + 1, unitName(u), what, u.kind === "proxy" ? u.from ?? "" : u.from, plan.target, healthchecks);
    }),
  ];
}
