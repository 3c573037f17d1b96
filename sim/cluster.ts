// A whole simulated Talos cluster in one process: a real control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler), the Kubernetes side (Node objects, the kubelet emulator, workload objects) and simulated Talos nodes,
// each control plane with its own mTLS endpoint. The two sides are wired as on a real cluster: a node going down for an
// upgrade flips its Node NotReady (and, for a legacy upgrade, Talos cordons and drains it first); a node booting flips
// it Ready with the new osImage — or, with the kubelet knobs, the Node stays Ready on its old osImage through a fast
// reboot and the kubelet reports late. With `apiBehindControlPlane` the user's kubeconfig reaches the API server only
// while that control plane is up (sim/apiproxy.ts).
import { writePrivateFile } from "./files";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startApiProxy } from "./apiproxy";
import { ControlPlane, startControlPlane } from "./controlplane";
import { defaultKubernetesImages } from "../provider/talos/kubernetes";
import { DEFAULT_KUBELET_VERSION, KubeletKnobs, KubeSim, KubeSimOptions, startKubeSim } from "./kube";
import { EtcdKnobs, generateNodes, SimNodeSpec, TalosNodeSim } from "./talos";

export interface SimClusterOptions {
  controlPlanes?: number;
  workers?: number;
  /** Talos version every node starts on. */
  version?: string;
  /**
   * Kubernetes version of every node at start (machine config images, static pods, mirror pods, kubeletVersion);
   * default v1.34.1. The real kube-apiserver binary keeps its own version (sim/kube/README.md).
   */
  kubernetesVersion?: string;
  /** kube-proxy's DaemonSet in kube-system, as Talos bootstraps it (default false: one more pod per node). */
  kubeProxy?: boolean;
  /** How long a rebooting node is down. */
  bootSeconds?: number;
  workloadPodsPerNode?: number;
  /**
   * Control planes take workload pods (no `node-role.kubernetes.io/control-plane:NoSchedule` taint), as with Talos'
   * `cluster.allowSchedulingOnControlPlanes`; default: when there are no workers (a single node is both).
   */
  allowSchedulingOnControlPlanes?: boolean;
  /** A PodDisruptionBudget (minAvailable 1) over the workload pods; default: when there are no workers (issue 25). */
  workloadBudget?: boolean;
  /** Where kubeconfig and talosconfig are written; a temp dir (removed on stop) if omitted. */
  dir?: string;
  /** Image pull and installer run times of the simulated nodes. */
  pullMs?: number;
  installMs?: number;
  /** Per node name: platform, schematic, extensions, SecureBoot (the Talos side of Image Factory installs). */
  nodes?: Record<string, Partial<Pick<SimNodeSpec, "platform" | "schematic" | "extensions" | "secureBoot">>>;
  /** etcd knobs, e.g. a member unhealthy for a while after its node boots. */
  etcd?: Partial<EtcdKnobs>;
  /**
   * Kubelet knobs (sim/kube/README.md): unpullable images and back-offs of the emulator, and the timing of its Node
   * reports (staleWhileDown, reportDelayMs; also changeable later through `SimCluster.kubelet`).
   */
  kubelet?: Pick<KubeSimOptions, "unpullableImages" | "imagePullBackoffMs" | "containerRestartBackoffMs"> & Partial<KubeletKnobs>;
  /**
   * A fresh control plane started beforehand (e.g. while a previous test ran), used instead of starting one; the sim
   * owns it from then on and stops it with itself.
   */
  controlPlane?: Promise<ControlPlane>;
  /**
   * The kubeconfig's API server is behind this control plane (true: the first one): unreachable while that node is
   * down, as on a real cluster whose kubeconfig names one control plane (`sim up` does this; sim/apiproxy.ts).
   */
  apiBehindControlPlane?: boolean | string;
}

export interface SimMachine {
  name: string;
  role: "controlplane" | "worker";
  address: string;
  version: string;
}

export interface SimCluster {
  dir: string;
  kubeconfigPath: string;
  talosconfigPath: string;
  /** The user's kubeconfig (its server is the API proxy with `apiBehindControlPlane`). */
  kubeconfig: string;
  talosconfig: string;
  /** The API server address of `kubeconfig`. */
  server: string;
  /** The control plane the API server is behind (`apiBehindControlPlane`), if any. */
  apiNode?: string;
  controlPlane: ControlPlane;
  talos: TalosNodeSim;
  kube: KubeSim;
  machines: SimMachine[];
  /** Kubelet timing knobs, read at every reboot: change them to make Nodes stay Ready on the old osImage or report late. */
  kubelet: KubeletKnobs;
  /** Resolves when every Talos event so far has been mirrored to the Node objects. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSimCluster(opts: SimClusterOptions = {}): Promise<SimCluster> {
  const controlPlanes = opts.controlPlanes ?? 3;
  const workers = opts.workers ?? 2;
  const version = opts.version ?? "v1.12.4";
  const ownsDir = !opts.dir;
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-sim-"));
  fs.mkdirSync(dir, { recursive: true });
  const stoppers: (() => Promise<void>)[] = [];
  const stop = async () => {
    while (stoppers.length) await stoppers.pop()!().catch(() => undefined);
    if (ownsDir) fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const started = opts.controlPlane;
    if (started) stoppers.push(async () => (await started).stop());
    const controlPlane = await (started ?? startControlPlane({ dir: path.join(dir, "control-plane") }));
    if (!started) stoppers.push(() => controlPlane.stop());
    const specs = generateNodes(controlPlanes + workers, controlPlanes, version).map((s) => ({ ...s, ...opts.nodes?.[s.name] }));
    const kubernetesVersion = opts.kubernetesVersion ?? DEFAULT_KUBELET_VERSION;
    const talos = await TalosNodeSim.start({
      nodes: specs,
      kubernetesVersion,
      // Without kube-proxy's DaemonSet the nodes' configs disable it, as on a real cluster (nothing renders it).
      kubeProxy: !!opts.kubeProxy,
      timing: { downMs: Math.round((opts.bootSeconds ?? 3) * 1000), pullMs: opts.pullMs ?? 200, installMs: opts.installMs ?? 300 },
      etcd: opts.etcd,
    });
    stoppers.push(() => talos.stop());
    const machines: SimMachine[] = specs.map((s) => ({ name: s.name, role: s.role ?? "worker", address: s.address, version: s.version }));
    const kube = await startKubeSim({
      kubeconfig: controlPlane.kubeconfig,
      machines: machines.map((m) => ({ name: m.name, role: m.role, address: m.address, talosVersion: m.version, kubeletVersion: kubernetesVersion })),
      ...(opts.kubeProxy ? { kubeProxyImage: defaultKubernetesImages(kubernetesVersion).proxy } : {}),
      workloadPodsPerNode: opts.workloadPodsPerNode ?? 2,
      controlPlaneTaint: !(opts.allowSchedulingOnControlPlanes ?? workers === 0),
      workloadBudget: opts.workloadBudget ?? workers === 0,
      workDir: path.join(dir, "kube-sim"),
      ...(opts.kubelet?.unpullableImages ? { unpullableImages: opts.kubelet.unpullableImages } : {}),
      ...(opts.kubelet?.imagePullBackoffMs !== undefined ? { imagePullBackoffMs: opts.kubelet.imagePullBackoffMs } : {}),
      ...(opts.kubelet?.containerRestartBackoffMs !== undefined ? { containerRestartBackoffMs: opts.kubelet.containerRestartBackoffMs } : {}),
    });
    stoppers.push(() => kube.stop());
    const kubelet: KubeletKnobs = {
      staleWhileDown: opts.kubelet?.staleWhileDown ?? false, reportDelayMs: opts.kubelet?.reportDelayMs ?? 0,
    };
    const lifecycle = kube.attachLifecycle(talos, kubelet);
    stoppers.push(async () => lifecycle.detach());
    // Talos drains the node itself in a legacy upgrade; here that is the kube side's eviction-based drain.
    talos.hooks.beforeLegacyDown = async (node) => {
      await kube.drainForTalos(node.name);
    };
    let server = controlPlane.server;
    let apiNode: string | undefined;
    if (opts.apiBehindControlPlane) {
      const node = typeof opts.apiBehindControlPlane === "string" ? opts.apiBehindControlPlane : specs.find((x) => x.role === "controlplane")!.name;
      const proxy = await startApiProxy(controlPlane.server, node, talos);
      stoppers.push(() => proxy.close());
      server = proxy.server;
      apiNode = node;
    }
    const kubeconfig = controlPlane.kubeconfig.replace(controlPlane.server, server);
    const kubeconfigPath = path.join(dir, "kubeconfig");
    const talosconfigPath = path.join(dir, "talosconfig");
    writePrivateFile(kubeconfigPath, kubeconfig);
    talos.writeTalosconfig(talosconfigPath);
    return {
      dir, kubeconfigPath, talosconfigPath,
      kubeconfig, server, ...(apiNode ? { apiNode } : {}),
      talosconfig: fs.readFileSync(talosconfigPath, "utf8"),
      controlPlane, talos, kube, machines, kubelet,
      settled: () => lifecycle.idle(),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
