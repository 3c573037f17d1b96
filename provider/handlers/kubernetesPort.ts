// The KubernetesUpgrade's port (rollout/kubernetesRun.ts KubernetesPort) on the two adapters: static pods and machine
// config patches through Talos (provider/talos/kubernetes.ts, the calls `talosctl upgrade-k8s` makes); kubelet versions
// come with the machines (their Nodes). Each call is bounded by the transport's deadlines and the signal it is given.
import type { KubeClient } from "../kube";
import type { KubernetesImageKey, TalosApiImpl } from "../talos";
import type { KubernetesPort } from "../rollout/kubernetesRun";
import type { ControlPlaneComponent, KubernetesNode } from "../rollout/kubernetesPlan";
import type { Machine } from "../rollout/ports";
import { mapLimit } from "../mapLimit";

/** Control planes read at once (each read is one Talos call). */
const READS_IN_FLIGHT = 8;

function talosKubernetes() {
  return require("../talos") as typeof import("../talos");
}

/** kube-proxy's DaemonSet as Talos bootstraps it (siderolabs/talos k8stemplates/kube-proxy.go). */
const PROXY_NAMESPACE = "kube-system";
const PROXY_NAME = "kube-proxy";

type ProxyKube = Pick<KubeClient, "syncBootstrapManifests" | "daemonSetRollout">;

export function kubernetesPort(talos: TalosApiImpl, kube: ProxyKube): KubernetesPort {
  const t = talosKubernetes();
  const staticPods = async (node: Machine, signal: AbortSignal) =>
    (await t.staticPodVersions(talos.client, node.address, { signal })).map((p) => ({
      component: p.component, image: p.image, ready: p.ready, ...versionOf(t.kubernetesVersionOfImage(p.image)),
    }));
  return {
    async read(machines, signal) {
      const nodes: KubernetesNode[] = machines.map((m) => ({
        name: m.name, role: m.role, ready: m.ready,
        ...(m.talosVersion ? { talosVersion: m.talosVersion } : {}),
        ...(m.kubeletVersion ? { kubeletVersion: m.kubeletVersion } : {}),
      }));
      await mapLimit(nodes.filter((n) => n.role === "controlplane"), READS_IN_FLIGHT, async (n) => {
        const pods = await staticPods(machines.find((m) => m.name === n.name)!, signal);
        n.staticPods = Object.fromEntries(pods.filter((p) => p.version).map((p) => [p.component as ControlPlaneComponent, p.version!]));
      });
      return nodes;
    },
    async setImages(node, version, parts, signal) {
      const current = await t.readMachineConfig(talos.client, node.address, { signal });
      const images = t.targetKubernetesImages(t.kubernetesImagesOf(current, `the machine config of ${node.name}`), version);
      const wanted = Object.fromEntries(parts.map((p: KubernetesImageKey) => [p, images[p]]));
      const patched = t.patchKubernetesImages(current, wanted, `the machine config of ${node.name}`);
      // Already set (a resumed run): nothing is applied, as upgrade-k8s skips an image already in place.
      if (patched !== current) await t.applyConfigurationNoReboot(talos.client, node.address, patched, { signal });
    },
    staticPods,
    async proxy(signal) {
      const ds = await kube.daemonSetRollout(PROXY_NAMESPACE, PROXY_NAME, signal);
      return ds && { ...ds, ...versionOf(ds.image ? t.kubernetesVersionOfImage(ds.image) : undefined) };
    },
    async renderedProxyVersion(node, signal) {
      const image = proxyImageOf(await t.bootstrapManifests(talos.client, node.address, { signal }));
      return image === undefined ? null : t.kubernetesVersionOfImage(image) ?? image;
    },
    async syncManifests(node, signal) {
      await kube.syncBootstrapManifests(await t.bootstrapManifests(talos.client, node.address, { signal }), signal);
    },
  };
}

const versionOf = (v: string | undefined) => (v ? { version: v } : {});

/** The image of kube-proxy's DaemonSet in the rendered manifests (`10-kube-proxy`), or undefined when none. */
function proxyImageOf(manifests: { objects: { [key: string]: unknown }[] }[]): string | undefined {
  for (const m of manifests) {
    for (const o of m.objects as { kind?: string; metadata?: { name?: string; namespace?: string }; spec?: { template?: { spec?: { containers?: { image?: string }[] } } } }[]) {
      if (o.kind === "DaemonSet" && o.metadata?.name === PROXY_NAME && o.metadata?.namespace === PROXY_NAMESPACE) {
        return o.spec?.template?.spec?.containers?.[0]?.image;
      }
    }
  }
  return undefined;
}
