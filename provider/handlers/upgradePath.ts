// The upgrade path at preview: from the live nodes' versions and the Kubernetes the cluster runs, `check` refuses a
// target (or a path step) Talos' installer would refuse, or whose Kubernetes range excludes the running Kubernetes,
// naming the node, both versions, the rule and a path that works (provider/talos/compat.ts); and the plan shows every
// step of `path`. Bounded like the preview plan: a cluster that does not answer is checked by the installer at apply.
import type { KubeClient, KubernetesVersions } from "../kube";
import type { Machine } from "../rollout/ports";
import { currentStep, pathSteps } from "../rollout/path";
import { withMachineOverrides } from "../resources/cluster";
import type { TalosUpgradeSpec } from "../resources/talosUpgrade";
import { checkUpgradePath } from "../talos/compat";
import { sameVersion } from "../version";
import * as msg from "./messages";

/** Each Kubernetes version once, with where it runs. */
export function kubernetesPlaces(k: KubernetesVersions): Array<{ where: string; version: string }> {
  const byVersion = new Map<string, { cp: string[]; kubelets: string[] }>();
  const entry = (v: string) => byVersion.get(v) ?? byVersion.set(v, { cp: [], kubelets: [] }).get(v)!;
  for (const c of k.controlPlane) entry(c.version).cp.push(c.where);
  for (const n of k.kubelets) entry(n.version).kubelets.push(n.node);
  return [...byVersion].map(([version, e]) => ({
    version,
    where: [...(e.cp.length ? [msg.listedPlaces(e.cp)] : []), ...(e.kubelets.length ? [msg.kubeletsOf(e.kubelets)] : [])].join("; "),
  }));
}

/**
 * The refusals (check failures on `version`) and warnings of the path from the live cluster: nothing when every node
 * already runs the target (a converged stack previews clean whatever Kubernetes does since).
 */
export async function livePathCheck(spec: TalosUpgradeSpec, kube: KubeClient): Promise<{ failures: string[]; warnings: string[] }> {
  // The kubelets of every Node (Talos checks them all), from the same listing as the selected machines.
  const [machines, kubernetes] = await Promise.all([
    withMachineOverrides(kube, spec.machines).listMachines(), kube.kubernetesVersions(kube.listMachines()),
  ]);
  if (machines.every((m) => sameVersion(m.talosVersion, spec.version))) return { failures: [], warnings: [] };
  const steps = pathSteps(spec.path, spec.version);
  return checkUpgradePath({
    nodes: machines.map((m) => ({ name: m.name, ...(m.talosVersion ? { version: m.talosVersion } : {}) })),
    kubernetes: kubernetesPlaces(kubernetes),
    steps: steps.slice(currentStep(steps, machines.map((m) => m.talosVersion))),
  });
}

/** The step the live cluster is in and its label ("1/2: → v1.12.11"), or undefined without a path. */
export function stepOf(spec: TalosUpgradeSpec, machines: readonly Machine[]): { index: number; steps: string[] } | undefined {
  if (spec.path.length === 0) return undefined;
  const steps = pathSteps(spec.path, spec.version);
  return { index: currentStep(steps, machines.map((m) => m.talosVersion)), steps };
}
