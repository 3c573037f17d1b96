// `Cluster`: credentials, machines and supporting manifests of a Talos cluster. Create/update apply the manifests
// (server-side apply); read refreshes machines and versions; delete removes runner Jobs and `full`-mode manifests and
// never touches nodes.
import type { Manifest } from "../rollout/ports";
import { errorText, hasUnknown, progress, withTimeout, type Properties } from "./common";
import {
  checkCluster, CLUSTER_INPUT_KEYS, ClusterSpec, clusterKey, ManifestEntry, parseCluster, selectMachines, toPortManifests,
} from "../resources/cluster";
import { warn } from "./diagnostics";
import * as msg from "./messages";
import type { KindHandler } from "./registry";

const CLUSTER_TIMEOUT_MS = 30_000;

/** The port; with `cluster`, its sweep takes only that cluster's runner Jobs and pods. */
function kubeApi(kubeconfig: string, urn?: string, cluster?: string) {
  return (require("../kube") as typeof import("../kube")).createKubeApi(kubeconfig, {
    log: (line) => warn(urn, line), ...(cluster ? { runnerScope: { cluster } } : {}),
  });
}

/** What the Cluster outputs beyond its inputs: the machines and the API server's version, as observed. */
async function observe(spec: ClusterSpec): Promise<Properties> {
  const kube = kubeApi(spec.kubeconfig, spec.resourceUrn);
  try {
    const [live, version] = await withTimeout(CLUSTER_TIMEOUT_MS, msg.KUBERNETES_API, () => Promise.all([
      kube.listMachines(),
      (require("../kube/version") as typeof import("../kube/version")).kubernetesVersion(spec.kubeconfig),
    ]));
    const machines = selectMachines(live, spec.machineSpec).map((m) => ({
      name: m.name, role: m.role, address: m.address, machineSet: m.machineSet, ready: m.ready, talosVersion: m.talosVersion ?? "",
    }));
    return { machines, kubernetesVersion: version };
  } finally {
    await kube.close().catch(() => undefined);
  }
}

/** `full` manifests of `previous` no longer listed: applied once more as empty, so the port prunes their objects. */
function removedFull(previous: readonly ManifestEntry[], now: readonly ManifestEntry[]): Manifest[] {
  return previous.filter((p) => p.mode === "full" && !now.some((e) => e.name === p.name))
    .map((p) => ({ name: p.name, mode: "full" as const, content: [] as Record<string, unknown>[] }));
}

async function apply(spec: ClusterSpec, previous: readonly ManifestEntry[] = []): Promise<void> {
  const manifests = [...toPortManifests(spec.manifests), ...removedFull(previous, spec.manifests)];
  if (manifests.length === 0) return;
  const kube = kubeApi(spec.kubeconfig, spec.resourceUrn);
  try {
    const r = await kube.applyManifests(manifests, { cluster: spec.clusterName, ...(spec.resourceUrn ? { owner: spec.resourceUrn } : {}) });
    if (r.applied.length + r.pruned.length > 0) {
      progress(`${msg.clusterPrefix(spec.clusterName)} ${msg.manifestsApplied(r.applied.length, r.skipped.length, r.pruned.length)}`);
    }
  } finally {
    await kube.close().catch(() => undefined);
  }
}

export const clusterHandler: KindHandler<ClusterSpec> = {
  parse: parseCluster,
  async check(_olds, news) {
    const failures = checkCluster(news);
    return failures.length ? { failures } : { inputs: news };
  },
  async diff(_id, olds, news) {
    if (hasUnknown(CLUSTER_INPUT_KEYS.filter((k) => k !== "resourceUrn").map((k) => news[k]))) return { changes: true };
    const replaces = olds.clusterName !== news.clusterName ? ["clusterName"] : [];
    try {
      return { changes: clusterKey(parseCluster(olds)) !== clusterKey(parseCluster(news)), replaces };
    } catch {
      return { changes: true, replaces }; // state this release cannot read: the update rewrites it
    }
  },
  async create(spec, inputs) {
    await apply(spec);
    return { id: spec.clusterName, outs: { ...inputs, ...(await observe(spec)) } };
  },
  async read(id, props) {
    const spec = parseCluster(props);
    try {
      return { id, props: { ...props, ...(await observe(spec)) } };
    } catch (err) {
      warn(spec.resourceUrn, msg.refreshWarning(spec.clusterName, errorText(err)));
      return { id, props };
    }
  },
  async update(_id, spec, olds, news) {
    await apply(spec, parseCluster(olds).manifests);
    return { outs: { ...news, ...(await observe(spec)) } };
  },
  async delete(_id, props) {
    const spec = parseCluster(props);
    const kube = kubeApi(spec.kubeconfig, spec.resourceUrn, spec.clusterName);
    try {
      await withTimeout(CLUSTER_TIMEOUT_MS, msg.KUBERNETES_API, async () => {
        const swept = await kube.sweepRunners();
        if (swept.jobs + swept.pods > 0) progress(msg.sweepDone(spec.clusterName, swept.jobs, swept.pods));
        const full = removedFull(spec.manifests, []);
        if (full.length) await kube.applyManifests(full, { cluster: spec.clusterName, ...(spec.resourceUrn ? { owner: spec.resourceUrn } : {}) });
      });
    } catch (err) {
      warn(spec.resourceUrn, msg.deleteUnreachable("Cluster", spec.clusterName, errorText(err)));
    } finally {
      await kube.close().catch(() => undefined);
    }
  },
};
