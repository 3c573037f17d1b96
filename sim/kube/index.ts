// The Kubernetes side of the simulated cluster: Node objects for the machines and the kubelet of every node
// (sim/kube/kubelet.ts), against a real control plane (sim/controlplane.ts: kube-apiserver, kube-controller-manager,
// kube-scheduler), plus workload objects for drains to move and Talos' own drain. Everything a real controller does
// is done by the real controller; this directory only plays the kubelet (see README.md).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { toolPath } from "../tools";
import { DrainOptions, DrainReport, drainForTalos } from "./drain";
import { Kubelet } from "./kubelet";
import { KubeletKnobs, LifecycleAttachment, NodeLifecycleEvents, attachLifecycle } from "./lifecycle";
import { MachineSpec, NodeSim } from "./nodes";
import { Reflector } from "./reflector";
import { Rest, sleep } from "./rest";
import { ensureKubeProxy } from "./kubeproxy";
import { StaticPodMirrors } from "./staticpods";
import { Node, Pod, controllerOf, isTerminal } from "./types";
import { WORKLOAD_NAMESPACE, ensureWorkloads } from "./workloads";
import { simMsg } from "../messages";

export type { MachineSpec } from "./nodes";
export type { KubeletKnobs, KubeletInfo, NodeLifecycleEvents, NodeDownInfo, NodeUpInfo, LifecycleAttachment, StaticPodInfo } from "./lifecycle";
export { KUBE_PROXY_DS, KUBE_PROXY_MANIFEST, kubeProxyObjects } from "./kubeproxy";
export { CONTROL_PLANE_APPS } from "./staticpods";
export { DEFAULT_KUBELET_VERSION } from "./nodes";
export type { DrainOptions, DrainReport } from "./drain";
export { attachLifecycle } from "./lifecycle";
export { TALOS_CORDONED_ANNOTATION, osImage } from "./nodes";
export { WORKLOAD_NAMESPACE, WORKLOAD_RS, WORKLOAD_DS } from "./workloads";

export interface KubeSimOptions {
  /** Admin kubeconfig text of the cluster (ControlPlane.kubeconfig): the kubelets' and the drain's credentials. */
  kubeconfig: string;
  machines: readonly MachineSpec[];
  /** ReplicaSet replicas per worker (default 2; 0 = none). */
  workloadPodsPerNode?: number;
  /** One DaemonSet pod per node (default true). */
  daemonSetPods?: boolean;
  /** A PodDisruptionBudget (minAvailable 1) over the ReplicaSet's pods (default false). */
  workloadBudget?: boolean;
  /**
   * kube-proxy's DaemonSet (with its ServiceAccount and binding) created at start with this image, as a bootstrapped
   * Talos cluster has it (default: none, so the simulated clusters stay small; sim/kube/kubeproxy.ts).
   */
  kubeProxyImage?: string;
  /** Control-plane nodes carry the node-role.kubernetes.io/control-plane:NoSchedule taint (Talos default: true). */
  controlPlaneTaint?: boolean;
  /** First crash back-off of a restarting container (restartPolicy OnFailure; kubelet: 10000 ms, doubling, ≤ 5 min). */
  containerRestartBackoffMs?: number;
  /** Images the kubelets cannot pull, besides any image from a `*.invalid` registry (see images.ts). */
  unpullableImages?: readonly string[];
  /** First image pull back-off (kubelet: 10000 ms, doubling, ≤ 5 min). */
  imagePullBackoffMs?: number;
  /** Per-pod directories (logs, service-account volume, kubeconfig); a temp dir (removed on stop) by default. */
  workDir?: string;
  /** Maximum concurrent API requests (default 24). */
  maxInflight?: number;
  /** How long start waits for the workload pods to be Running (default 5 minutes). */
  startTimeoutMs?: number;
  /** Diagnostics (default: silent unless TALOS_GATE_SIM_DEBUG is set). */
  log?: (msg: string) => void;
}

export interface KubeSimStats {
  nodes: number;
  pods: number;
  runningProcesses: number;
  processesStarted: number;
  apiRequests: number;
  relists: number;
  rewatches: number;
}

export interface KubeSim {
  /** Node flips: down/up/cordon/uncordon/get (see NodeSim). */
  nodes: NodeSim;
  nodeNames(): string[];
  /** Talos' legacy-upgrade drain: cordon (talos.dev/cordoned) + evictions through the Eviction API. */
  drainForTalos(node: string, opts?: DrainOptions): Promise<DrainReport>;
  /** Follows a Talos sim's down/up events (see lifecycle.ts). */
  attachLifecycle(source: NodeLifecycleEvents, kubelet?: Partial<KubeletKnobs>): LifecycleAttachment;
  /** The workload namespace and live workload pod counts. */
  workloads(): { namespace: string; replicaSetPods: number; daemonSetPods: number };
  stats(): KubeSimStats;
  /** Kills every process the sim started and closes every watch. */
  stop(): Promise<void>;
}

export async function startKubeSim(opts: KubeSimOptions): Promise<KubeSim> {
  const log = opts.log ?? (process.env.TALOS_GATE_SIM_DEBUG ? (m: string) => process.stderr.write(`[kube-sim] ${m}\n`) : () => undefined);
  const ownsWorkDir = !opts.workDir;
  const workDir = opts.workDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-kube-sim-"));
  fs.mkdirSync(workDir, { recursive: true });
  const names = opts.machines.map((m) => m.name);
  const owned = new Set(names);
  if (owned.size !== names.length) throw new Error(simMsg.machineNamesNotUnique());
  const rest = await Rest.fromKubeconfig(opts.kubeconfig, opts.maxInflight ?? 24);
  const stoppers: (() => Promise<void> | void)[] = [];
  const stop = async () => {
    while (stoppers.length) {
      try {
        await stoppers.pop()!();
      } catch (err) {
        log(`stop: ${(err as Error).message}`);
      }
    }
  };
  stoppers.push(() => {
    rest.close();
    if (ownsWorkDir) fs.rmSync(workDir, { recursive: true, force: true });
  });
  try {
    // The Node informer the sim's kubelets and node lifecycle side read their Nodes from (sim/kube/nodes.ts). It
    // retries a failing LIST for ever, so the registration's writes go first: an API server that refuses the sim's
    // credentials fails the start at once, as before.
    const nodeR = new Reflector<Node>(rest, { path: "/api/v1/nodes", name: "nodes", log });
    stoppers.push(() => nodeR.stop());
    const nodesListed = nodeR.start();
    const nodes = new NodeSim(rest, nodeR, { controlPlaneTaint: opts.controlPlaneTaint });
    await nodes.register(opts.machines);
    await nodesListed;
    const mirrors = new StaticPodMirrors(rest);
    await mirrors.register(opts.machines);
    if (opts.kubeProxyImage) await ensureKubeProxy(rest, opts.kubeProxyImage);
    const podR = new Reflector<Pod>(rest, { path: "/api/v1/pods", name: "pods", log });
    stoppers.push(() => podR.stop());
    await podR.start();
    const kubelet = new Kubelet({
      rest, pods: podR, nodes: nodeR, owned, toolsBin: path.dirname(toolPath("kubectl")), workDir: path.join(workDir, "pods"), server: rest.server, log,
      crashBackoffMs: opts.containerRestartBackoffMs, unpullableImages: opts.unpullableImages, imagePullBackoffMs: opts.imagePullBackoffMs,
    });
    kubelet.start();
    stoppers.push(() => kubelet.stop());
    const cpTainted = opts.controlPlaneTaint ?? true;
    const workerCount = opts.machines.filter((m) => m.role === "worker" || !cpTainted).length;
    const replicas = (opts.workloadPodsPerNode ?? 2) * workerCount;
    const daemonSet = opts.daemonSetPods ?? true;
    const owners = await ensureWorkloads(rest, { replicas, daemonSet, budget: opts.workloadBudget ?? false });
    const livePods = () => {
      const rs: Pod[] = [];
      const ds: Pod[] = [];
      for (const p of podR.list()) {
        if (p.metadata.namespace !== owners.namespace || p.metadata.deletionTimestamp || isTerminal(p)) continue;
        const uid = controllerOf(p)?.uid;
        if (uid && uid === owners.replicaSetUid) rs.push(p);
        else if (uid && uid === owners.daemonSetUid) ds.push(p);
      }
      return { rs, ds };
    };
    // Ready when every workload pod runs (the controllers created them, the scheduler bound them, a kubelet posted Running).
    const expected = replicas + (daemonSet ? names.length : 0);
    const deadline = Date.now() + (opts.startTimeoutMs ?? 5 * 60 * 1000);
    for (;;) {
      const { rs, ds } = livePods();
      const running = [...rs, ...ds].filter((p) => p.status?.phase === "Running").length;
      if (running >= expected) break;
      if (Date.now() > deadline) throw new Error(simMsg.workloadNotRunning(running, expected, opts.startTimeoutMs ?? 300000));
      await sleep(50);
    }
    return {
      nodes,
      nodeNames: () => [...names],
      drainForTalos: (node, o) => drainForTalos(rest, nodes, node, o),
      attachLifecycle: (source, kubelet) => attachLifecycle(source, { nodes, mirrors }, { log, kubelet }),
      workloads: () => {
        const { rs, ds } = livePods();
        return { namespace: owners.namespace ?? WORKLOAD_NAMESPACE, replicaSetPods: rs.length, daemonSetPods: ds.length };
      },
      stats: () => {
        const k = kubelet.stats();
        return {
          nodes: names.length,
          pods: podR.size,
          runningProcesses: k.runningProcesses,
          processesStarted: k.processesStarted,
          apiRequests: rest.requests,
          relists: nodeR.relists + podR.relists,
          rewatches: nodeR.rewatches + podR.rewatches,
        };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
