// `Cluster`: credentials, machines and supporting manifests of a Talos cluster. Create/update apply the manifests
// (server-side apply); read refreshes machines and versions; delete removes runner Jobs and `full`-mode manifests and
// never touches nodes.
import type { Machine, Manifest } from "../rollout/ports";
import { canonical, CheckFailure, errorText, hasUnknown, Props, progress, withTimeout } from "./common";
import { checkClusterName, checkKubeconfig, checkMachines, checkManifests, checkTalosconfig, parseAllObjects } from "./inputs";
import { warn } from "./diagnostics";
import * as msg from "./messages";
import type { KindHandler } from "./registry";

/**
 * What the Cluster's inputs mean, canonical: manifests as their objects (a YAML string, an object or a list of the
 * same objects are one manifest; mode "full" is the default), machines without unset overrides, credentials as they
 * are (a rotation is an update that stores them).
 */
function clusterKey(p: Props): string | undefined {
  try {
    const manifests = (p.manifests ?? []).map((m: Props) => ({
      name: m.name, mode: m.mode ?? "full", labels: m.labels ?? {}, annotations: m.annotations ?? {},
      objects: typeof m.inline === "string" ? parseAllObjects(m.inline) : Array.isArray(m.inline) ? m.inline : [m.inline],
    }));
    const machines = (p.machineSpec ?? []).map((m: Props) => Object.fromEntries(
      ["name", "role", "address", "machineSet"].filter((k) => m[k] !== undefined && m[k] !== null && m[k] !== "").map((k) => [k, m[k]])))
      .sort((a: Props, b: Props) => String(a.name).localeCompare(String(b.name)));
    return canonical({ clusterName: p.clusterName, kubeconfig: p.kubeconfig, talosconfig: p.talosconfig, machines, manifests });
  } catch {
    return undefined;
  }
}
const CLUSTER_TIMEOUT_MS = 30_000;

function kubeApi(kubeconfig: string, urn?: string) {
  return (require("../kube") as typeof import("../kube")).createKubeApi(kubeconfig, { log: (line) => warn(urn, line) });
}

/** SDK manifest entries → the Kubernetes port's manifests, with the entry's labels and annotations on every object. */
export function toPortManifests(entries: Props[] | undefined): Manifest[] {
  return (entries ?? []).map((m) => {
    const objects: Record<string, any>[] = typeof m.inline === "string" ? parseAllObjects(m.inline)
      : Array.isArray(m.inline) ? m.inline : [m.inline];
    const content = objects.map((o) => ({
      ...o,
      metadata: {
        ...(o.metadata ?? {}),
        ...(m.labels ? { labels: { ...(o.metadata?.labels ?? {}), ...m.labels } } : {}),
        ...(m.annotations ? { annotations: { ...(o.metadata?.annotations ?? {}), ...m.annotations } } : {}),
      },
    }));
    return { name: m.name, mode: m.mode ?? "full", content };
  });
}

/** The machines the cluster manages: all Nodes, or the named ones with the user's overrides. */
export function selectMachines(live: Machine[], spec: Props[] | undefined): Machine[] {
  if (!spec || spec.length === 0) return live;
  const byName = new Map(live.map((m) => [m.name, m]));
  return spec.map((s) => {
    const m = byName.get(s.name);
    if (!m) throw new Error(`machine "${s.name}" is not a Node of the cluster; known: ${[...byName.keys()].join(", ") || "none"}`);
    return { ...m, role: s.role ?? m.role, address: s.address ?? m.address, machineSet: s.machineSet ?? m.machineSet };
  });
}

async function observe(inputs: Props): Promise<Props> {
  const kube = kubeApi(inputs.kubeconfig, inputs.resourceUrn);
  try {
    const [live, version] = await withTimeout(CLUSTER_TIMEOUT_MS, "the Kubernetes API", () => Promise.all([
      kube.listMachines(),
      (require("../kube/version") as typeof import("../kube/version")).kubernetesVersion(inputs.kubeconfig),
    ]));
    const machines = selectMachines(live, inputs.machineSpec).map((m) => ({
      name: m.name, role: m.role, address: m.address, machineSet: m.machineSet, ready: m.ready, talosVersion: m.talosVersion ?? "",
    }));
    return { machines, kubernetesVersion: version };
  } finally {
    await kube.close().catch(() => undefined);
  }
}

async function apply(inputs: Props, previous?: Props[]): Promise<void> {
  const entries: Props[] = inputs.manifests ?? [];
  // A `full` manifest removed from the list is pruned: apply it once more as empty, so the port deletes its objects.
  const removed = (previous ?? []).filter((p) => (p.mode ?? "full") === "full" && !entries.some((e) => e.name === p.name))
    .map((p) => ({ name: p.name, mode: "full" as const, content: [] as Record<string, unknown>[] }));
  const manifests = [...toPortManifests(entries), ...removed];
  if (manifests.length === 0) return;
  const kube = kubeApi(inputs.kubeconfig, inputs.resourceUrn);
  try {
    const r = await kube.applyManifests(manifests, { cluster: inputs.clusterName });
    if (r.applied.length + r.pruned.length > 0) {
      progress(`${msg.clusterPrefix(inputs.clusterName)} manifests: applied ${r.applied.length}, skipped ${r.skipped.length}, pruned ${r.pruned.length}`);
    }
  } finally {
    await kube.close().catch(() => undefined);
  }
}

export const clusterHandler: KindHandler = {
  async check(_olds, news) {
    const failures: CheckFailure[] = [];
    checkClusterName("clusterName", news.clusterName, failures);
    checkKubeconfig(news.kubeconfig, failures);
    checkTalosconfig(news.talosconfig, failures);
    checkMachines(news.machineSpec, failures);
    checkManifests(news.manifests, failures);
    return failures.length ? { failures } : { inputs: news };
  },
  async diff(_id, olds, news) {
    if (hasUnknown([news.clusterName, news.kubeconfig, news.talosconfig, news.machineSpec, news.manifests])) return { changes: true };
    const replaces = olds.clusterName !== news.clusterName ? ["clusterName"] : [];
    const before = clusterKey(olds);
    return { changes: before === undefined || before !== clusterKey(news), replaces };
  },
  async create(inputs) {
    await apply(inputs);
    return { id: inputs.clusterName, outs: { ...inputs, ...(await observe(inputs)) } };
  },
  async read(id, props) {
    try {
      return { id, props: { ...props, ...(await observe(props)) } };
    } catch (err) {
      warn(props.resourceUrn, msg.refreshWarning(props.clusterName, errorText(err)));
      return { id, props };
    }
  },
  async update(_id, olds, news) {
    await apply(news, olds.manifests);
    return { outs: { ...news, ...(await observe(news)) } };
  },
  async delete(_id, props) {
    const kube = kubeApi(props.kubeconfig, props.resourceUrn);
    try {
      await withTimeout(CLUSTER_TIMEOUT_MS, "the Kubernetes API", async () => {
        const swept = await kube.sweepRunners();
        if (swept.jobs + swept.pods > 0) progress(msg.sweepDone(props.clusterName, swept.jobs, swept.pods));
        const full = (props.manifests ?? []).filter((m: Props) => (m.mode ?? "full") === "full")
          .map((m: Props) => ({ name: m.name, mode: "full" as const, content: [] as Record<string, unknown>[] }));
        if (full.length) await kube.applyManifests(full, { cluster: props.clusterName });
      });
    } catch (err) {
      warn(props.resourceUrn, msg.deleteUnreachable("Cluster", props.clusterName, errorText(err)));
    } finally {
      await kube.close().catch(() => undefined);
    }
  },
};
