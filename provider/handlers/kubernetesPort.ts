// The KubernetesUpgrade's port (rollout/kubernetesRun.ts KubernetesPort) on the two adapters: static pods and machine
// config patches through Talos (provider/talos/kubernetes.ts, the calls `talosctl upgrade-k8s` makes); kubelet versions
// come with the machines (their Nodes). Each call is bounded by the transport's deadlines and the signal it is given.
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

export function kubernetesPort(talos: TalosApiImpl): KubernetesPort {
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
  };
}

const versionOf = (v: string | undefined) => (v ? { version: v } : {});
