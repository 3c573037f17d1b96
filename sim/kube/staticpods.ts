// The mirror pods of a Talos control plane's static pods (kube-apiserver, kube-controller-manager, kube-scheduler),
// as its kubelet registers them: kube-system/<app>-<node>, with the labels of Talos' static pod manifests (siderolabs/talos
// internal/app/machined/pkg/controllers/k8s/internal/k8stemplates/apiserver.go and siblings, v1.14.0-beta.1-84), the
// `kubernetes.io/config.mirror` annotation and Talos' `talos.dev/config-version`, owned by the Node, the image the
// node's machine config names. They are how Talos reads the running Kubernetes (pkg/cluster/kubernetes/detect.go
// DetectLowestVersion) and how `talosctl upgrade-k8s` waits for an upgraded static pod (talos_managed.go
// checkPodStatus: the pod on the node's IP with the new config version, Ready): the sim's real kube-apiserver binary
// keeps its own version, so without them its `/version` would speak for the cluster.
//
// The Talos sim drives them (sim/talos/kubernetes.ts): a changed image makes the kubelet replace the mirror pod (a new
// pod, as a changed static pod manifest does), not ready until the static pod is; the kubelet emulator never runs a
// mirror pod, so its status is only what is written here (and not ready while its node is down, as the node lifecycle
// controller's MarkPodsNotReady would leave it).
import { createHash } from "node:crypto";
import { mapLimit } from "../../provider/mapLimit";
import { kubernetesVersionOfImage } from "../../provider/talos/kubernetes";
import { isAlreadyExists, isNotFound, nowTime, retrying, type Rest } from "./rest";
import { DEFAULT_KUBELET_VERSION, type MachineSpec } from "./nodes";

export const CONTROL_PLANE_APPS = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"] as const;
export type ControlPlaneApp = (typeof CONTROL_PLANE_APPS)[number];

/** A static pod as the node's kubelet runs it (what the Talos sim reports). */
export interface StaticPodState {
  component: ControlPlaneApp;
  image: string;
  ready: boolean;
  /** Talos' `talos.dev/config-version` of the static pod. */
  configVersion: string;
}

const podName = (app: string, node: string) => `${app}-${node}`;
const podPath = (app: string, node: string) => `/api/v1/namespaces/kube-system/pods/${podName(app, node)}`;

function mirrorPod(m: MachineSpec, nodeUid: string, s: StaticPodState) {
  const app = s.component;
  const version = kubernetesVersionOfImage(s.image) ?? "";
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: podName(app, m.name),
      namespace: "kube-system",
      labels: {
        tier: "control-plane", "k8s-app": app, component: app, "app.kubernetes.io/name": app,
        "app.kubernetes.io/version": version.replace(/^v/, ""), "app.kubernetes.io/component": "control-plane", "app.kubernetes.io/managed-by": "Talos",
      },
      annotations: {
        "kubernetes.io/config.mirror": createHash("md5").update(`${m.name}/${app}/${s.image}/${s.configVersion}`).digest("hex"),
        "kubernetes.io/config.source": "file",
        "talos.dev/config-version": s.configVersion,
      },
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name: m.name, uid: nodeUid, controller: true }],
    },
    spec: {
      nodeName: m.name,
      hostNetwork: true,
      priorityClassName: "system-cluster-critical",
      containers: [{ name: app, image: s.image }],
    },
  };
}

function mirrorStatus(m: MachineSpec, s: StaticPodState, ready: boolean, startedAt: string) {
  const cond = (type: string, ok: boolean) => ({ type, status: ok ? "True" : "False", lastProbeTime: null, lastTransitionTime: startedAt });
  return {
    phase: "Running",
    conditions: [cond("PodReadyToStartContainers", true), cond("Initialized", true), cond("Ready", ready), cond("ContainersReady", ready), cond("PodScheduled", true)],
    hostIP: m.address, hostIPs: [{ ip: m.address }], podIP: m.address, podIPs: [{ ip: m.address }], startTime: startedAt,
    containerStatuses: [{ name: s.component, image: s.image, imageID: "", ready, started: ready, restartCount: 0, state: { running: { startedAt } } }],
  };
}

/** The mirror pods of the control planes: registered at start, then following the static pods and the Nodes. */
export class StaticPodMirrors {
  private readonly machines = new Map<string, { m: MachineSpec; uid: string; pods: Map<ControlPlaneApp, StaticPodState & { startedAt: string }>; nodeReady: boolean }>();
  /** Updates of one node run in order. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly rest: Rest) {}

  /** Registers every control plane's mirror pods, on the version its kubelet reports (Running, Ready). */
  async register(machines: readonly MachineSpec[]): Promise<void> {
    const cps = machines.filter((m) => m.role === "controlplane");
    await mapLimit(cps, 8, async (m) => {
      const node = await retrying(`read Node ${m.name}`, () => this.rest.request<{ metadata: { uid: string } }>("GET", `/api/v1/nodes/${m.name}`));
      const version = m.kubeletVersion ?? DEFAULT_KUBELET_VERSION;
      const entry = { m, uid: node.metadata.uid, pods: new Map<ControlPlaneApp, StaticPodState & { startedAt: string }>(), nodeReady: true };
      this.machines.set(m.name, entry);
      for (const app of CONTROL_PLANE_APPS) {
        const s = { component: app, image: `registry.k8s.io/${app}:${version}`, ready: true, configVersion: "1", startedAt: nowTime() };
        entry.pods.set(app, s);
        try {
          await retrying(`create the mirror pod of ${app} on ${m.name}`, () => this.rest.request("POST", "/api/v1/namespaces/kube-system/pods", mirrorPod(m, entry.uid, s)));
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
        await this.writeStatus(m.name, app);
      }
    });
  }

  /** The static pod changed on the node: a new image replaces the mirror pod; readiness is written to its status. */
  update(node: string, s: StaticPodState): Promise<void> {
    return this.chain(node, async () => {
      const entry = this.machines.get(node);
      if (!entry) return;
      const prev = entry.pods.get(s.component);
      const replaced = !prev || prev.image !== s.image || prev.configVersion !== s.configVersion;
      entry.pods.set(s.component, { ...s, startedAt: replaced ? nowTime() : prev.startedAt });
      if (replaced) {
        // the kubelet deletes the old mirror pod and creates the new one (grace 0: nothing runs in a mirror pod)
        await retrying(`delete the mirror pod of ${s.component} on ${node}`, () => this.rest.delete(podPath(s.component, node), { gracePeriodSeconds: 0 }))
          .catch((err) => { if (!isNotFound(err)) throw err; });
        await retrying(`create the mirror pod of ${s.component} on ${node}`, () =>
          this.rest.request("POST", "/api/v1/namespaces/kube-system/pods", mirrorPod(entry.m, entry.uid, s)));
      }
      await this.writeStatus(node, s.component);
    });
  }

  /** The Node went down (its mirror pods are marked not ready) or came back. */
  nodeReadiness(node: string, ready: boolean): Promise<void> {
    return this.chain(node, async () => {
      const entry = this.machines.get(node);
      if (!entry || entry.nodeReady === ready) return;
      entry.nodeReady = ready;
      for (const app of entry.pods.keys()) await this.writeStatus(node, app);
    });
  }

  private chain(node: string, fn: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(node) ?? Promise.resolve()).catch(() => undefined).then(fn);
    this.chains.set(node, next);
    return next;
  }

  private async writeStatus(node: string, app: ControlPlaneApp): Promise<void> {
    const entry = this.machines.get(node)!;
    const s = entry.pods.get(app)!;
    const status = mirrorStatus(entry.m, s, s.ready && entry.nodeReady, s.startedAt);
    await retrying(`status of the mirror pod of ${app} on ${node}`, () => this.rest.mergePatch(`${podPath(app, node)}/status`, { status }));
  }
}
