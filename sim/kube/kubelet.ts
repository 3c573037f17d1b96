// The kubelet of every simulated node. For each pod bound (by the real kube-scheduler, or by spec.nodeName) to one of
// the sim's nodes it writes the status a kubelet would write, through pods/status:
// - Job pods (controller kind Job) run the FIRST container's command + args as a local process (the image is
//   ignored, unless it is one the kubelet cannot pull: see images.ts): Pending → Running (startTime, conditions,
//   containerStatuses running) → terminated (exit code, reason Completed/Error, startedAt/finishedAt, termination
//   message per terminationMessagePolicy with the kubelet's limits), phase Succeeded/Failed; restartPolicy OnFailure
//   restarts the container in the same pod after the crash back-off (restartCount, lastState, CrashLoopBackOff);
//   the process gets the pod's service-account token (serviceaccount.ts), never the sim's admin credentials;
// - every other pod (ReplicaSet, DaemonSet, bare pods) is a "pause" pod: Running and Ready, nothing is executed.
// It starts nothing on a node that is not Ready, finalizes deletions on its nodes (graceful deletion: stop the
// process with the grace period, write the final status, then delete with gracePeriodSeconds 0 and a UID
// precondition; the Job controller removes its batch.kubernetes.io/job-tracking finalizer afterwards), and marks pods
// not Ready while their node is not Ready (the node lifecycle controller's MarkPodsNotReady; that controller does not
// run in the sim, see README.md).
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { ContainerConfigError, containerEnv, expand } from "./containerenv";
import { imageId, normalizeImage, pullBackoffMs, pullFailure } from "./images";
import { ExitInfo, LocalProcess } from "./process";
import { Reflector } from "./reflector";
import { Rest, isNotFound, nowTime, retrying } from "./rest";
import { MountError, ServiceAccountMount, mountServiceAccount } from "./serviceaccount";
import { terminationMessage } from "./termination";
import { Condition, Node, Pod, controllerOf, isTerminal, nodeReady, podPath } from "./types";

const MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

export interface KubeletOptions {
  rest: Rest;
  pods: Reflector<Pod>;
  nodes: Reflector<Node>;
  /** Names of the sim's nodes: only their pods are handled. */
  owned: ReadonlySet<string>;
  /** Prepended to PATH of the processes (kubectl lives there). */
  toolsBin: string;
  /** Per-pod directories (termination message file, log, HOME) go under it. */
  workDir: string;
  /** Used for KUBERNETES_SERVICE_HOST/PORT. */
  server: string;
  log: (msg: string) => void;
  /** First crash back-off before restarting a container (restartPolicy OnFailure/Always); kubelet: 10 s, doubling, ≤ 5 min. */
  crashBackoffMs?: number;
  /** Delay before re-trying a pod whose env or volume references a missing ConfigMap/Secret/ServiceAccount. */
  configRetryMs?: number;
  /** Images that cannot be pulled besides `*.invalid` registries (see images.ts). */
  unpullableImages?: readonly string[];
  /** First image pull back-off (kubelet: 10 s, doubling, ≤ 5 min). */
  imagePullBackoffMs?: number;
}

type Phase = "Pending" | "Running" | "Succeeded" | "Failed";
type ContainerState =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | { terminated: { exitCode: number; reason: string; message?: string; startedAt?: string; finishedAt?: string; containerID?: string; signal?: number } };

const PULL_REASONS = new Set(["ErrImagePull", "ImagePullBackOff"]);

/** The waiting state of a container whose image cannot be pulled, in the kubelet's words. */
function pullState(reason: string, image: string | undefined, failure: string): ContainerState {
  const message = reason === "ImagePullBackOff" ? `Back-off pulling image "${image}": ErrImagePull: ${failure}` : failure;
  return { waiting: { reason, message } };
}

/** What the kubelet reports for a container of a terminated pod it cannot find (status manager, TerminatePod). */
const UNKNOWN_TERMINATION = "The container could not be located when the pod was terminated";

class PodWorker {
  pod: Pod;
  phase: Phase = "Pending";
  state: "new" | "starting" | "running" | "terminated" | "finalizing" | "gone" = "new";
  container: ContainerState = { waiting: { reason: "ContainerCreating" } };
  proc?: LocalProcess;
  startTime?: string;
  containerID = `containerd://${randomBytes(32).toString("hex")}`;
  restartCount = 0;
  lastState?: ContainerState;
  podIP?: string;
  dir?: string;
  serviceAccount?: ServiceAccountMount;
  pullAttempts = 0;
  private chain: Promise<void> = Promise.resolve();

  constructor(pod: Pod, readonly runsProcess: boolean) {
    this.pod = pod;
  }

  get uid(): string {
    return this.pod.metadata.uid;
  }

  /** Serializes status writes of one pod (a terminated container never goes back to running). */
  enqueue(fn: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(fn, fn);
    return this.chain;
  }
}

export class Kubelet {
  private readonly workers = new Map<string, PodWorker>();
  /** The workers of each node (a pod's node never changes once bound): a node's readiness change looks at its own pods
   * only, not at every pod of the cluster (at 1,000 nodes, ~2,000 of them for each of ~2,000 changes a rollout). */
  private readonly workersOn = new Map<string, Set<PodWorker>>();
  private readonly ipCounters = new Map<string, number>();
  private stopped = false;
  started = 0;
  processes = 0;

  constructor(private readonly o: KubeletOptions) {}

  start(): void {
    fs.mkdirSync(this.o.workDir, { recursive: true });
    this.o.pods.on("add", (p) => this.onPod(p));
    this.o.pods.on("update", (p) => this.onPod(p));
    this.o.pods.on("delete", (p) => this.onPodGone(p));
    this.o.nodes.on("update", (n, old) => {
      if (!this.o.owned.has(n.metadata.name)) return;
      if (old && nodeReady(old) === nodeReady(n)) return;
      this.onNodeReadiness(n.metadata.name, nodeReady(n));
    });
    for (const p of this.o.pods.list()) this.onPod(p);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const exits: Promise<ExitInfo>[] = [];
    for (const w of this.workers.values()) {
      if (w.proc?.running) {
        w.proc.kill();
        exits.push(w.proc.exited);
      }
    }
    await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 5000))]);
    fs.rmSync(this.o.workDir, { recursive: true, force: true });
  }

  stats() {
    let running = 0;
    for (const w of this.workers.values()) if (w.proc?.running) running++;
    return { pods: this.workers.size, runningProcesses: running, processesStarted: this.processes };
  }

  private nodeOf(pod: Pod): Node | undefined {
    const n = pod.spec?.nodeName;
    return n && this.o.owned.has(n) ? this.o.nodes.get(undefined, n) : undefined;
  }

  private onPod(pod: Pod): void {
    if (this.stopped) return;
    const nodeName = pod.spec?.nodeName;
    if (!nodeName || !this.o.owned.has(nodeName)) return;
    // A mirror pod only shows a static pod the kubelet runs from a file: its status comes from the static pod
    // (sim/kube/staticpods.ts, following the Talos sim), never from running it here.
    if (pod.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined) return;
    let w = this.workers.get(pod.metadata.uid);
    if (!w) {
      w = new PodWorker(pod, controllerOf(pod)?.kind === "Job");
      this.workers.set(pod.metadata.uid, w);
      let onNode = this.workersOn.get(nodeName);
      if (!onNode) this.workersOn.set(nodeName, (onNode = new Set()));
      onNode.add(w);
      if (isTerminal(pod)) {
        w.state = "terminated";
        w.phase = pod.status.phase;
      } else if (w.runsProcess && pod.status?.containerStatuses?.[0]?.state?.running) {
        // Running before this kubelet started (the sim was restarted): its process is gone, and the kubelet reports
        // what it reports for a container it can no longer find.
        w.startTime = pod.status.startTime;
        w.state = "running";
        void this.finishUnknown(w, "The container could not be located when the pod was deleted.  The container used to be Running");
      } else if (!w.runsProcess && pod.status?.phase === "Running") {
        w.state = "running";
        w.phase = "Running";
        w.startTime = pod.status.startTime;
        w.podIP = pod.status.podIP;
        w.container = pod.status.containerStatuses?.[0]?.state ?? { running: { startedAt: pod.status.startTime } };
      }
    }
    w.pod = pod;
    if (pod.metadata.deletionTimestamp) {
      void this.terminate(w);
      return;
    }
    if (w.state === "new") {
      const node = this.nodeOf(pod);
      // A kubelet that is down does not start pods; they start when their node is Ready again.
      if (node && !nodeReady(node)) return;
      w.state = "starting";
      if (w.runsProcess) void this.runProcess(w);
      else void this.runPause(w);
    }
  }

  private onPodGone(pod: Pod): void {
    const w = this.workers.get(pod.metadata.uid);
    if (!w) return;
    this.workers.delete(pod.metadata.uid);
    const node = w.pod.spec?.nodeName;
    const onNode = node === undefined ? undefined : this.workersOn.get(node);
    if (onNode?.delete(w) && onNode.size === 0) this.workersOn.delete(node as string);
    const prev = w.state;
    w.state = "gone";
    w.serviceAccount?.close();
    if (w.proc?.running) {
      // Deleted behind the kubelet's back (force delete): stop the process anyway.
      this.o.log(`kubelet: pod ${pod.metadata.namespace}/${pod.metadata.name} deleted while its process runs (${prev}); killing it`);
      w.proc.kill();
    }
    if (w.dir) {
      const dir = w.dir;
      const rm = () => fs.rmSync(dir, { recursive: true, force: true });
      if (w.proc) void w.proc.exited.then(rm);
      else rm();
    }
  }

  private onNodeReadiness(node: string, ready: boolean): void {
    for (const w of [...(this.workersOn.get(node) ?? [])]) {
      if (w.pod.metadata.deletionTimestamp) continue;
      if (w.state === "new" && ready) {
        this.onPod(w.pod);
        continue;
      }
      if (w.state !== "running") continue;
      void this.writeStatus(w, `node ${node} ${ready ? "Ready" : "not Ready"}`);
    }
  }

  private allocateIp(node: Node | undefined): string {
    const cidr: string = node?.spec?.podCIDR ?? "10.244.0.0/24";
    const prefix = cidr.replace(/\.0\/24$/, ".");
    const n = (this.ipCounters.get(cidr) ?? 0) + 1;
    this.ipCounters.set(cidr, n);
    return `${prefix}${(n % 252) + 2}`;
  }

  private buildStatus(w: PodWorker): any {
    const pod = w.pod;
    const node = this.nodeOf(pod);
    const now = nowTime();
    const hostIP: string | undefined = node?.status?.addresses?.find((a: { type: string }) => a.type === "InternalIP")?.address;
    const running = "running" in w.container;
    const finished = w.phase === "Succeeded" || w.phase === "Failed";
    const ready = running && !!node && nodeReady(node);
    const prev: Condition[] = pod.status?.conditions ?? [];
    const cond = (type: string, status: boolean, reason?: string): Condition => {
      const s = status ? "True" : "False";
      const old = prev.find((c) => c.type === type);
      const c: Condition = { type, status: s, lastProbeTime: null, lastTransitionTime: old && old.status === s ? old.lastTransitionTime : now };
      if (reason) c.reason = reason;
      return c;
    };
    const conditions: Condition[] = [
      cond("PodReadyToStartContainers", !finished),
      cond("Initialized", true),
      cond("Ready", ready, finished ? "PodCompleted" : ready ? undefined : "ContainersNotReady"),
      cond("ContainersReady", ready, finished ? "PodCompleted" : ready ? undefined : "ContainersNotReady"),
      cond("PodScheduled", true),
    ];
    const containers: any[] = pod.spec?.containers ?? [];
    const containerStatuses = containers.map((c, i) => {
      let state: ContainerState = w.container;
      if ("waiting" in w.container && PULL_REASONS.has(w.container.waiting.reason)) {
        // No container starts until every image is there: the unpullable ones report the pull, the others wait.
        const failure = pullFailure(c.image, this.o.unpullableImages);
        state = failure ? pullState(w.container.waiting.reason, c.image, failure) : { waiting: { reason: "ContainerCreating" } };
      } else if (i > 0 && w.runsProcess && "terminated" in w.container) {
        // Only the first container runs; the others mirror it and end with it, successfully.
        const t = w.container.terminated;
        state = t.reason === "ContainerStatusUnknown" ? { terminated: { ...t } }
          : { terminated: { exitCode: 0, reason: "Completed", startedAt: t.startedAt, finishedAt: t.finishedAt } };
      }
      const image = normalizeImage(c.image);
      const st: any = {
        name: c.name,
        image,
        imageID: "waiting" in state ? "" : imageId(image),
        ready: "running" in state && ready,
        restartCount: i === 0 ? w.restartCount : 0,
        started: "running" in state,
        state,
      };
      if (i === 0 && w.lastState) st.lastState = w.lastState;
      if (!("waiting" in state) && !("terminated" in state && state.terminated.reason === "ContainerStatusUnknown")) st.containerID = i === 0 ? w.containerID : `${w.containerID.slice(0, -2)}${String(i).padStart(2, "0")}`;
      return st;
    });
    const status: any = { phase: w.phase, conditions, containerStatuses, qosClass: pod.status?.qosClass ?? "BestEffort" };
    if (hostIP) {
      status.hostIP = hostIP;
      status.hostIPs = [{ ip: hostIP }];
    }
    if (w.podIP) {
      status.podIP = w.podIP;
      status.podIPs = [{ ip: w.podIP }];
    }
    if (w.startTime) status.startTime = w.startTime;
    return status;
  }

  /** Writes the worker's current status (merge patch with a UID precondition, like the kubelet's status manager). */
  private writeStatus(w: PodWorker, why: string): Promise<void> {
    return w.enqueue(async () => {
      if (this.stopped || w.state === "gone") return;
      const status = this.buildStatus(w);
      const ns = w.pod.metadata.namespace!;
      try {
        await retrying(`kubelet: status of pod ${ns}/${w.pod.metadata.name} (${why})`, () =>
          this.o.rest.mergePatch(`${podPath(ns, w.pod.metadata.name)}/status`, { metadata: { uid: w.uid }, status }),
        { isStopped: () => this.stopped || w.state === "gone" });
      } catch (err) {
        if (isNotFound(err) || this.stopped || (w.state as string) === "gone") return;
        this.o.log((err as Error).message);
      }
    });
  }

  private async runPause(w: PodWorker): Promise<void> {
    // An unpullable image keeps a pause pod Pending in ErrImagePull too (e.g. a DaemonSet rollout that cannot
    // finish); the list is fixed at start, so no retry would pull it: the pod stays there.
    const unpullable = (w.pod.spec?.containers ?? []).find((c: { image?: string }) => pullFailure(c.image, this.o.unpullableImages));
    if (unpullable) {
      w.container = pullState("ErrImagePull", unpullable.image, pullFailure(unpullable.image, this.o.unpullableImages)!);
      await this.writeStatus(w, "image pull failed");
      return;
    }
    this.started++;
    w.startTime = nowTime();
    w.podIP = this.allocateIp(this.nodeOf(w.pod));
    w.container = { running: { startedAt: w.startTime } };
    w.phase = "Running";
    w.state = "running";
    await this.writeStatus(w, "running");
  }

  private podDir(w: PodWorker): string {
    const dir = path.join(this.o.workDir, `${w.pod.metadata.namespace}_${w.pod.metadata.name}_${w.uid.slice(0, 8)}`);
    fs.mkdirSync(path.join(dir, "home"), { recursive: true });
    w.dir = dir;
    return dir;
  }

  /** Tries again later what the kubelet's pod worker would retry (volume, config); the pod stays Pending. */
  private retryLater(w: PodWorker, ms: number): void {
    setTimeout(() => {
      if (w.state === "starting" && !this.stopped && !w.pod.metadata.deletionTimestamp) void this.runProcess(w);
    }, ms).unref();
  }

  private async runProcess(w: PodWorker): Promise<void> {
    const pod = w.pod;
    const container = pod.spec?.containers?.[0];
    w.startTime ??= nowTime();
    w.podIP ??= this.allocateIp(this.nodeOf(pod));
    const dir = w.dir ?? this.podDir(w);
    const messageFile = path.join(dir, "termination-log");
    fs.writeFileSync(messageFile, "");
    // 1. Volumes: the service-account token (TokenRequest bound to this pod), the cluster CA, the namespace.
    if (!w.serviceAccount) {
      try {
        w.serviceAccount = await mountServiceAccount(this.o.rest, pod, container, dir, this.o.log);
      } catch (err) {
        if (w.state !== "starting" || this.stopped) return;
        if (!(err instanceof MountError)) this.o.log(`kubelet: volumes of pod ${pod.metadata.namespace}/${pod.metadata.name}: ${(err as Error).message}`);
        w.container = { waiting: { reason: "ContainerCreating" } };
        await this.writeStatus(w, "volume not ready");
        this.retryLater(w, this.o.configRetryMs ?? 2000);
        return;
      }
      if (w.state !== "starting" || this.stopped) return w.serviceAccount.close();
    }
    // 2. Images: an unpullable one keeps the pod Pending in ErrImagePull / ImagePullBackOff, with the kubelet's back-off.
    const unpullable = (pod.spec?.containers ?? []).find((c: { image?: string }) => pullFailure(c.image, this.o.unpullableImages));
    if (unpullable) {
      const failure = pullFailure(unpullable.image, this.o.unpullableImages)!;
      w.container = pullState("ErrImagePull", unpullable.image, failure);
      await this.writeStatus(w, "image pull failed");
      const backoff = pullBackoffMs(w.pullAttempts++, this.o.imagePullBackoffMs ?? 10000);
      // The next pod sync (about a second later) finds the image in back-off.
      setTimeout(() => {
        if (w.state !== "starting" || this.stopped || w.pod.metadata.deletionTimestamp) return;
        w.container = pullState("ImagePullBackOff", unpullable.image, failure);
        void this.writeStatus(w, "image pull back-off");
      }, Math.min(1000, backoff / 2)).unref();
      this.retryLater(w, backoff);
      return;
    }
    // 3. The container: its command, its environment, then the process.
    if (!container?.command?.length) {
      w.phase = "Failed";
      w.state = "terminated";
      const at = nowTime();
      w.container = {
        terminated: {
          exitCode: 128,
          reason: "StartError",
          message: `talos-gate sim: container "${container?.name ?? "?"}" has no command; the simulated kubelet runs the first container's command + args as a local process and ignores the image (${container?.image ?? "no image"}), so set spec.containers[0].command`,
          startedAt: at,
          finishedAt: at,
        },
      };
      w.serviceAccount.close();
      await this.writeStatus(w, "no command");
      return;
    }
    const u = new URL(this.o.server);
    const base: Record<string, string> = {
      PATH: `${this.o.toolsBin}:${process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin"}`,
      HOME: path.join(dir, "home"),
      HOSTNAME: pod.metadata.name,
      KUBECONFIG: w.serviceAccount.kubeconfigPath,
      KUBERNETES_SERVICE_HOST: u.hostname,
      KUBERNETES_SERVICE_PORT: u.port || "443",
      ...(w.serviceAccount.dir ? { SERVICE_ACCOUNT_DIR: w.serviceAccount.dir } : {}),
    };
    let env: Record<string, string>;
    try {
      env = { ...base, ...(await containerEnv(this.o.rest, pod, container, base)) };
    } catch (err) {
      if (w.state !== "starting" || this.stopped) return;
      const message = err instanceof ContainerConfigError ? err.message : (err as Error).message;
      w.container = { waiting: { reason: "CreateContainerConfigError", message } };
      await this.writeStatus(w, "config error");
      // Like the kubelet's pod worker: try again later (the ConfigMap/Secret may appear).
      this.retryLater(w, this.o.configRetryMs ?? 2000);
      return;
    }
    env.TERMINATION_MESSAGE_PATH = messageFile;
    if (w.state !== "starting" || this.stopped) return;
    this.started++;
    const argv = [...(container.command ?? []), ...(container.args ?? [])].map((a: string) => expand(String(a), env));
    const cwd = container.workingDir && fs.existsSync(container.workingDir) ? container.workingDir : dir;
    await this.launch(w, argv, env, cwd, container.name);
  }

  private async launch(w: PodWorker, argv: string[], env: Record<string, string>, cwd: string, name: string): Promise<void> {
    const dir = w.dir!;
    fs.mkdirSync(path.join(dir, "home"), { recursive: true });
    const proc = new LocalProcess(argv, { env, cwd, logFile: path.join(dir, `${name}.log`) });
    w.proc = proc;
    this.processes++;
    w.state = "running";
    w.phase = "Running";
    w.container = { running: { startedAt: nowTime(proc.startedAt) } };
    void this.writeStatus(w, "running");
    const exit = await proc.exited;
    if (w.state !== "running") return;
    const policy = w.pod.spec?.restartPolicy ?? "Always";
    if (!exit.startError && (policy === "Always" || (policy === "OnFailure" && exit.exitCode !== 0))) {
      await this.restartLater(w, exit, () => this.launch(w, argv, env, cwd, name));
      return;
    }
    await this.finishProcess(w, exit);
  }

  /** restartPolicy OnFailure/Always: the container restarts in the same pod after the kubelet's crash back-off. */
  private async restartLater(w: PodWorker, exit: ExitInfo, relaunch: () => Promise<void>): Promise<void> {
    const container = w.pod.spec?.containers?.[0] ?? {};
    w.lastState = { terminated: this.terminatedState(w, exit) };
    const delay = Math.min((this.o.crashBackoffMs ?? 10000) * 2 ** w.restartCount, 5 * 60 * 1000);
    w.restartCount++;
    const msg = `back-off ${Math.round(delay / 1000)}s restarting failed container=${container.name} pod=${w.pod.metadata.name}_${w.pod.metadata.namespace}(${w.uid})`;
    w.container = { waiting: { reason: "CrashLoopBackOff", message: msg } };
    fs.writeFileSync(path.join(w.dir!, "termination-log"), "");
    await this.writeStatus(w, "crash back-off");
    setTimeout(() => {
      if (w.state === "running" && !this.stopped && !w.pod.metadata.deletionTimestamp) void relaunch();
    }, delay).unref();
  }

  private terminatedState(w: PodWorker, exit: ExitInfo, messageOverride?: string): any {
    const container = w.pod.spec?.containers?.[0] ?? {};
    const startedAt = "running" in w.container ? w.container.running.startedAt : w.startTime ?? nowTime(exit.finishedAt);
    let message = messageOverride ?? exit.startError;
    if (message === undefined && w.dir && w.proc) {
      message = terminationMessage({ policy: container.terminationMessagePolicy, messageFile: path.join(w.dir, "termination-log"), exitCode: exit.exitCode, logs: w.proc.output() });
    }
    const terminated: any = {
      exitCode: exit.exitCode,
      reason: exit.startError ? "StartError" : exit.exitCode === 0 ? "Completed" : "Error",
      startedAt: exit.startError ? nowTime(exit.finishedAt) : startedAt,
      finishedAt: nowTime(exit.finishedAt),
    };
    if (exit.signal) {
      const signo = ({ SIGTERM: 15, SIGKILL: 9, SIGINT: 2 } as Record<string, number>)[exit.signal];
      if (signo) terminated.signal = signo;
    }
    if (message) terminated.message = message;
    terminated.containerID = w.containerID;
    return terminated;
  }

  private async finishProcess(w: PodWorker, exit: ExitInfo, messageOverride?: string): Promise<void> {
    if (w.state === "terminated" || w.state === "gone") return;
    const terminated = this.terminatedState(w, exit, messageOverride);
    w.container = { terminated };
    w.phase = exit.exitCode === 0 ? "Succeeded" : "Failed";
    // The container's filesystem is gone (kubectl's discovery cache lives in HOME); its log stays until the pod goes.
    if (w.dir) fs.rmSync(path.join(w.dir, "home"), { recursive: true, force: true });
    if (w.state !== "finalizing") w.state = "terminated";
    w.serviceAccount?.close();
    await this.writeStatus(w, w.phase);
  }

  /** The pod ends without a container the kubelet can report on: exit 137, ContainerStatusUnknown, phase Failed. */
  private async finishUnknown(w: PodWorker, message = UNKNOWN_TERMINATION): Promise<void> {
    if (w.state === "terminated" || w.state === "gone") return;
    w.container = { terminated: { exitCode: 137, reason: "ContainerStatusUnknown", message } };
    w.phase = "Failed";
    if (w.state !== "finalizing") w.state = "terminated";
    w.serviceAccount?.close();
    await this.writeStatus(w, "terminated without a container");
  }

  /** Graceful deletion: stop the process within the grace period, post the final status, delete for good. */
  private async terminate(w: PodWorker): Promise<void> {
    if (w.state === "finalizing" || w.state === "gone") return;
    const prev = w.state;
    w.state = "finalizing";
    const pod = w.pod;
    const graceS = pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    if (w.proc?.running) {
      const exit = await w.proc.stop(graceS * 1000);
      w.state = "running";
      await this.finishProcess(w, exit);
      w.state = "finalizing";
    } else if (prev === "running" && w.runsProcess && w.lastState && "terminated" in w.lastState) {
      // Deleted while waiting to restart a crashed container: the pod ends with that container's last termination.
      w.container = { terminated: w.lastState.terminated };
      w.phase = w.lastState.terminated.exitCode === 0 ? "Succeeded" : "Failed";
      await this.writeStatus(w, w.phase);
    } else if ((prev === "starting" || prev === "running") && w.runsProcess) {
      // Deleted before its container started (volume, image pull, ConfigMap): nothing ran, nothing to report.
      w.state = "running";
      await this.finishUnknown(w);
      w.state = "finalizing";
    }
    await w.enqueue(async () => undefined);
    if (this.stopped) return;
    const ns = pod.metadata.namespace!;
    try {
      await retrying(`kubelet: delete pod ${ns}/${pod.metadata.name}`, () =>
        this.o.rest.delete(podPath(ns, pod.metadata.name), { apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0, preconditions: { uid: w.uid } }),
      { isStopped: () => this.stopped });
    } catch (err) {
      if (!isNotFound(err) && !this.stopped && (err as { code?: number }).code !== 409) this.o.log((err as Error).message);
    }
  }
}
