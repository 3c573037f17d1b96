// The Kubernetes side of the simulated cluster: Node objects for the machines, and the controllers a real cluster
// would run — kubelet (sim/kube/kubelet.ts), Job controller (jobcontroller.ts), disruption controller
// (disruption.ts), a scheduler/binder (scheduler.ts) and ReplicaSet/DaemonSet-like workload owners (workloads.ts) —
// against a real kube-apiserver, so real clients see what they would see on a real cluster.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { toolPath } from "../tools";
import { DisruptionController } from "./disruption";
import { DrainOptions, DrainReport, drainForTalos } from "./drain";
import { JobController } from "./jobcontroller";
import { Kubelet } from "./kubelet";
import { KubeletKnobs, LifecycleAttachment, NodeLifecycleEvents, attachLifecycle } from "./lifecycle";
import { MachineSpec, NodeSim } from "./nodes";
import { Reflector } from "./reflector";
import { Rest, sleep } from "./rest";
import { NodeScheduler, PodBinder } from "./scheduler";
import { Job, Node, Pdb, Pod } from "./types";
import { Workloads } from "./workloads";

export type { MachineSpec } from "./nodes";
export type { KubeletKnobs, NodeLifecycleEvents, NodeDownInfo, NodeUpInfo, LifecycleAttachment } from "./lifecycle";
export type { DrainOptions, DrainReport } from "./drain";
export { attachLifecycle } from "./lifecycle";
export { TALOS_CORDONED_ANNOTATION, osImage } from "./nodes";
export { WORKLOAD_NAMESPACE, WORKLOAD_RS, WORKLOAD_DS } from "./workloads";

export interface KubeSimOptions {
  /** Admin kubeconfig text of the cluster (ControlPlane.kubeconfig). */
  kubeconfig: string;
  machines: readonly MachineSpec[];
  /** ReplicaSet pods per eligible node (default 2; 0 = none). */
  workloadPodsPerNode?: number;
  /** One DaemonSet pod per node (default true). */
  daemonSetPods?: boolean;
  /** KUBECONFIG for Job processes; by default the kubeconfig is written to a 0600 file in the sim's work dir. */
  jobKubeconfigPath?: string;
  /** Control-plane nodes carry the node-role.kubernetes.io/control-plane:NoSchedule taint (Talos default: true). */
  controlPlaneTaint?: boolean;
  /** Base of the Job pod-failure back-off (real controller: 10000 ms). */
  podFailureBackoffMs?: number;
  /** First crash back-off of a restarting container (restartPolicy OnFailure; kubelet: 10000 ms, doubling, ≤ 5 min). */
  containerRestartBackoffMs?: number;
  /** Per-pod directories, logs and the job kubeconfig; a temp dir (removed on stop) by default. */
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
  jobs: number;
  pdbs: number;
  runningProcesses: number;
  processesStarted: number;
  jobPodsCreated: number;
  workloadPodsCreated: number;
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
  let jobKubeconfigPath = opts.jobKubeconfigPath;
  if (!jobKubeconfigPath) {
    jobKubeconfigPath = path.join(workDir, "kubeconfig");
    fs.writeFileSync(jobKubeconfigPath, opts.kubeconfig, { mode: 0o600 });
  }
  const names = opts.machines.map((m) => m.name);
  const owned = new Set(names);
  if (owned.size !== names.length) throw new Error("kube sim: machine names must be unique (each becomes a Node name)");
  const rest = await Rest.fromKubeconfig(opts.kubeconfig, opts.maxInflight ?? 24);
  const nodes = new NodeSim(rest, { controlPlaneTaint: opts.controlPlaneTaint });
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
    await nodes.register(opts.machines);
    const nodeR = new Reflector<Node>(rest, { path: "/api/v1/nodes", name: "nodes", log });
    const podR = new Reflector<Pod>(rest, { path: "/api/v1/pods", name: "pods", log });
    const jobR = new Reflector<Job>(rest, { path: "/apis/batch/v1/jobs", name: "jobs", log });
    const pdbR = new Reflector<Pdb>(rest, { path: "/apis/policy/v1/poddisruptionbudgets", name: "pdbs", log });
    for (const r of [nodeR, podR, jobR, pdbR]) stoppers.push(() => r.stop());
    await nodeR.start();
    await podR.start();
    const scheduler = new NodeScheduler(nodeR, owned);
    const kubelet = new Kubelet({ rest, pods: podR, nodes: nodeR, owned, jobKubeconfigPath, toolsBin: path.dirname(toolPath("kubectl")), workDir: path.join(workDir, "pods"), server: rest.server, log, crashBackoffMs: opts.containerRestartBackoffMs });
    kubelet.start();
    stoppers.push(() => kubelet.stop());
    const binder = new PodBinder({ rest, pods: podR, nodes: nodeR, scheduler, log });
    binder.start();
    stoppers.push(() => binder.stop());
    const jobs = new JobController({ rest, jobs: jobR, pods: podR, scheduler, log, podFailureBackoffMs: opts.podFailureBackoffMs });
    jobs.start();
    stoppers.push(() => jobs.stop());
    const disruption = new DisruptionController({ rest, pdbs: pdbR, pods: podR, log });
    disruption.start();
    stoppers.push(() => disruption.stop());
    await Promise.all([jobR.start(), pdbR.start()]);
    const workloads = new Workloads({
      rest, pods: podR, nodes: nodeR, scheduler, owned: names, perNode: opts.workloadPodsPerNode ?? 2, daemonSet: opts.daemonSetPods ?? true, log,
    });
    stoppers.push(() => workloads.stop());
    await workloads.start();
    // Ready when every workload pod runs (its kubelet posted Running).
    const deadline = Date.now() + (opts.startTimeoutMs ?? 5 * 60 * 1000);
    for (;;) {
      const { rs, ds } = workloads.livePods();
      const running = [...rs, ...ds].filter((p) => p.status?.phase === "Running").length;
      if (running >= workloads.expected()) break;
      if (Date.now() > deadline) throw new Error(`kube sim: only ${running} of ${workloads.expected()} workload pods are Running after ${opts.startTimeoutMs ?? 300000} ms`);
      await sleep(50);
    }
    if (workloads.expected() > 0) await workloads.writeOwnerStatus();
    return {
      nodes,
      nodeNames: () => [...names],
      drainForTalos: (node, o) => drainForTalos(rest, nodes, node, o),
      attachLifecycle: (source, kubelet) => attachLifecycle(source, { nodes }, { log, kubelet }),
      workloads: () => {
        const { rs, ds } = workloads.livePods();
        return { namespace: workloads.namespace, replicaSetPods: rs.length, daemonSetPods: ds.length };
      },
      stats: () => {
        const k = kubelet.stats();
        return {
          nodes: names.length,
          pods: podR.size,
          jobs: jobR.size,
          pdbs: pdbR.size,
          runningProcesses: k.runningProcesses,
          processesStarted: k.processesStarted,
          jobPodsCreated: jobs.podsCreated,
          workloadPodsCreated: workloads.podsCreated,
          apiRequests: rest.requests,
          relists: nodeR.relists + podR.relists + jobR.relists + pdbR.relists,
          rewatches: nodeR.rewatches + podR.rewatches + jobR.rewatches + pdbR.rewatches,
        };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
