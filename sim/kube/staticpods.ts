// The mirror pods of a Talos control plane's static pods (kube-apiserver, kube-controller-manager, kube-scheduler),
// as its kubelet registers them: kube-system/<app>-<node>, with the labels of Talos' static pod manifests (siderolabs/talos
// internal/app/machined/pkg/controllers/k8s/internal/k8stemplates/apiserver.go and siblings, v1.14.0-beta.1-84), the
// `kubernetes.io/config.mirror` annotation, owned by the Node, the image tagged with the cluster's Kubernetes version.
// They are how Talos reads the running Kubernetes (pkg/cluster/kubernetes/detect.go DetectLowestVersion): the sim's
// real kube-apiserver binary keeps its own version, so without them its `/version` would speak for the cluster.
import { createHash } from "node:crypto";
import { mapLimit } from "../../provider/mapLimit";
import { isAlreadyExists, retrying, type Rest } from "./rest";
import { DEFAULT_KUBELET_VERSION, type MachineSpec } from "./nodes";

export const CONTROL_PLANE_APPS = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"] as const;

function mirrorPod(m: MachineSpec, app: string, nodeUid: string, version: string) {
  const image = `registry.k8s.io/${app}:${version}`;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `${app}-${m.name}`,
      namespace: "kube-system",
      labels: {
        tier: "control-plane", "k8s-app": app, component: app, "app.kubernetes.io/name": app,
        "app.kubernetes.io/version": version.replace(/^v/, ""), "app.kubernetes.io/component": "control-plane", "app.kubernetes.io/managed-by": "Talos",
      },
      annotations: {
        "kubernetes.io/config.mirror": createHash("md5").update(`${m.name}/${app}/${image}`).digest("hex"),
        "kubernetes.io/config.source": "file",
      },
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name: m.name, uid: nodeUid, controller: true }],
    },
    spec: {
      nodeName: m.name,
      priorityClassName: "system-cluster-critical",
      containers: [{ name: app, image }],
    },
  };
}

/** Registers the static pods' mirrors of every control plane, on the version its kubelet reports. */
export async function registerStaticPods(rest: Rest, machines: readonly MachineSpec[]): Promise<void> {
  const cps = machines.filter((m) => m.role === "controlplane");
  await mapLimit(cps, 8, async (m) => {
    const node = await retrying(`read Node ${m.name}`, () => rest.request<{ metadata: { uid: string } }>("GET", `/api/v1/nodes/${m.name}`));
    for (const app of CONTROL_PLANE_APPS) {
      try {
        await retrying(`create the mirror pod of ${app} on ${m.name}`, () => rest.request("POST", "/api/v1/namespaces/kube-system/pods", mirrorPod(m, app, node.metadata.uid, m.kubeletVersion ?? DEFAULT_KUBELET_VERSION)));
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
  });
}
