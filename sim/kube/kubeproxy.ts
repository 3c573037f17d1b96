// kube-proxy as Talos deploys it: a DaemonSet kube-system/kube-proxy (with its ServiceAccount and the binding to
// system:node-proxier) rendered by each control plane from `cluster.proxy.image` into the bootstrap manifest
// "10-kube-proxy" (siderolabs/talos internal/app/machined/pkg/controllers/k8s/internal/k8stemplates/kube-proxy.go and
// manifest.go, v1.14.0-beta.1-84 ad88231; trimmed: no config map, volumes or node affinity). Talos' manifest apply
// controller only creates what is missing, so a changed image reaches the cluster when `talosctl upgrade-k8s` syncs the
// manifests (PerformManifestsSync) — the sim serves the manifest (sim/talos/resources.ts) and, with the `kubeProxy`
// option, creates the objects at start, as a bootstrapped cluster has them; the kubelet emulator runs its pods as
// pause pods.
import { isAlreadyExists, retrying, type Rest } from "./rest";

export const KUBE_PROXY_MANIFEST = "10-kube-proxy";
export const KUBE_PROXY_DS = "kube-proxy";

const labels = { tier: "node", "k8s-app": "kube-proxy" };

/** The objects of manifest "10-kube-proxy" for an image. */
export function kubeProxyObjects(image: string): Record<string, unknown>[] {
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "kube-proxy", namespace: "kube-system" } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: "kube-proxy" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:node-proxier" },
      subjects: [{ kind: "ServiceAccount", name: "kube-proxy", namespace: "kube-system" }],
    },
    kubeProxyDaemonSet(image),
  ];
}

export function kubeProxyDaemonSet(image: string): Record<string, unknown> {
  return {
    apiVersion: "apps/v1", kind: "DaemonSet",
    metadata: { name: KUBE_PROXY_DS, namespace: "kube-system", labels },
    spec: {
      selector: { matchLabels: labels },
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: "kube-proxy", image, command: ["/usr/local/bin/kube-proxy", "--config=/etc/kubernetes/kube-proxy/config.conf"] }],
          hostNetwork: true, priorityClassName: "system-cluster-critical", serviceAccountName: "kube-proxy",
          tolerations: [{ effect: "NoSchedule", operator: "Exists" }, { effect: "NoExecute", operator: "Exists" }],
        },
      },
    },
  };
}

const COLLECTIONS: Record<string, (o: { metadata: { namespace?: string } }) => string> = {
  ServiceAccount: (o) => `/api/v1/namespaces/${o.metadata.namespace}/serviceaccounts`,
  ClusterRoleBinding: () => "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
  DaemonSet: (o) => `/apis/apps/v1/namespaces/${o.metadata.namespace}/daemonsets`,
};

/** Creates the manifest's objects that are missing (Talos' manifest apply controller at bootstrap). */
export async function ensureKubeProxy(rest: Rest, image: string): Promise<void> {
  for (const o of kubeProxyObjects(image) as { kind: string; metadata: { name: string; namespace?: string } }[]) {
    try {
      await retrying(`create ${o.kind} ${o.metadata.name}`, () => rest.post(COLLECTIONS[o.kind](o), o));
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}
