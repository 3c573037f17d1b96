// The API server's version (`/version`), for the Cluster resource's kubernetesVersion output; and the Kubernetes
// versions a cluster runs, as Talos reads them, for the upgrade-path check at preview.
import * as k8s from "./k8s";
import type { KubeClients } from "./client";
import type { Machine } from "../rollout/ports";

export async function kubernetesVersion(kubeconfigText: string): Promise<string> {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfigText);
  return (await kc.makeApiClient(k8s.VersionApi).getCode()).gitVersion;
}

export interface KubernetesVersions {
  /**
   * The control plane's components, each version once with where it runs ("kube-apiserver on cp-1"): the tags of the
   * static pods' images, as Talos detects the running Kubernetes (siderolabs/talos pkg/cluster/kubernetes/detect.go
   * DetectLowestVersion, at v1.14.0-beta.1-84); without such pods, the API server's own `/version`.
   */
  controlPlane: Array<{ where: string; version: string }>;
  /** Each Node's `status.nodeInfo.kubeletVersion`. */
  kubelets: Array<{ node: string; version: string }>;
}

/** The control-plane apps Talos' DetectLowestVersion reads (the container named after the app, in kube-system). */
const CONTROL_PLANE_APPS = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"];

/** The tag of an image reference ("registry.k8s.io/kube-apiserver:v1.34.1@sha256:…" → "v1.34.1"). */
export function imageTag(image: string): string | undefined {
  const ref = image.split("@")[0];
  const m = /:([^:/]+)$/.exec(ref);
  return m?.[1];
}

type Pod = { spec?: { nodeName?: string; containers?: Array<{ name?: string; image?: string }> }; metadata?: { labels?: Record<string, string> } };

/** The versions; the kubelets' from `nodes` (every Node, as listed: a LIST of 1,000 Nodes is ~4 MB, made once). */
export async function readKubernetesVersions(c: KubeClients, nodes: Promise<readonly Machine[]>): Promise<KubernetesVersions> {
  const [pods, machines] = await Promise.all([
    c.objects.getRaw("/api/v1/namespaces/kube-system/pods", { labelSelector: `k8s-app in (${CONTROL_PLANE_APPS.join(",")})` }) as Promise<{ items: Pod[] }>,
    nodes,
  ]);
  const controlPlane: KubernetesVersions["controlPlane"] = [];
  for (const pod of pods.items) {
    const app = pod.metadata?.labels?.["k8s-app"] ?? "";
    const tag = imageTag(pod.spec?.containers?.find((x) => x.name === app)?.image ?? "");
    if (tag) controlPlane.push({ where: `${app} on ${pod.spec?.nodeName ?? "?"}`, version: tag });
  }
  if (controlPlane.length === 0) {
    const v = (await c.objects.getRaw("/version", {})) as { gitVersion?: string };
    if (v.gitVersion) controlPlane.push({ where: "the API server", version: v.gitVersion });
  }
  const kubelets = machines
    .map((m) => ({ node: m.name, version: m.kubeletVersion ?? "" }))
    .filter((k) => k.version !== "");
  return { controlPlane, kubelets };
}
