// One simulated Talos node: its state (version, boot id, up/down, staged image, event buffer, platform, schematic and
// extensions) and the node-side sequences of the legacy upgrade (with Talos' own etcd checks on control planes), the
// new install + reboot flow, and the down/up cycle of a reboot. Cheap per node: a few fields, no timers or buffers
// until something happens.
import * as crypto from "node:crypto";
import { status as Status } from "@grpc/grpc-js";
import { AnyMessage } from "../../provider/talos/proto";
import { parseImageRef, versionFromImage } from "../../provider/talos/image";
import { preserveSkipsEtcdChecks, supportsLifecycleApi } from "../../provider/talos/version";
import { compareVersions } from "../../provider/version";
import type { SimEtcd } from "./etcd";
import { ErrorCode, ev, PhaseAction, SequenceAction, Stage, xid } from "./events";
import { preflightRefusal } from "./installer";
import { KubernetesFaults, NodeKubernetes, SIM_DEFAULT_KUBERNETES_VERSION, type SimKubeletState, type SimStaticPod } from "./kubernetes";
import { RpcError } from "./rpcerror";

export { RpcError } from "./rpcerror";

export type SimRole = "controlplane" | "worker";

/** Fault knobs of one node; tests set them at any time (`sim.node("w-1").faults.rollback = true`). */
export interface NodeFaults extends KubernetesFaults {
  /** Reject upgrades (legacy and LifecycleService) with this status; `true` = Talos-in-container's refusal. */
  rejectUpgrade?: boolean | { code: Status; message: string };
  /** Go down for an upgrade/reboot and never come back (until `sim.recover(node)`). */
  neverComesBack?: boolean;
  /** A/B rollback: come back after an upgrade on the old version (with a new boot id). */
  rollback?: boolean;
  /** Extra down time of every reboot. */
  slowBootMs?: number;
  /** An installation/upgrade is already in progress on the node. */
  locked?: boolean;
  /** The installer exits with this code (non-zero = failure). */
  installerExitCode?: number;
  /** Pulling any installer image fails (`true`, or the registry's error text). */
  pullFailure?: boolean | string;
  /** The node's apid presents a certificate from another CA (the endpoint cannot verify it). */
  certMismatch?: boolean;
  /** Calls to the node are accepted and never answered (a hung apid or a half-open route): only the caller's
   * deadline ends them. Takes effect whether the node is up or down. */
  unresponsive?: boolean;
  /**
   * The answer to Reboot (and to the legacy Upgrade) is lost: the node goes down before apid sends it, as real apid
   * does when the node goes down fast. The action itself happens. Through the node's own endpoint the connection
   * drops; through another endpoint the proxy answers UNAVAILABLE "error reading from server: EOF".
   * "unprocessed": the endpoint answers with the proxy's EOF error, and the node never acted on the request.
   */
  replyLost?: boolean | "unprocessed";
  /**
   * While the node is down, apid's proxy fails its TLS handshake with the node instead of being refused
   * (`transport: authentication handshake failed: EOF`, as when the node's apid port accepts before its TLS is up).
   */
  handshakeWhileDown?: boolean;
  /** The next N Reboot / legacy Upgrade calls are refused by the proxy ("connect: connection refused") and never reach the node. */
  refuseActions?: number;
}

/** A system extension as the ExtensionStatus resource reports it. */
export interface SimExtension {
  name: string;
  version: string;
}

export interface SimTiming {
  /** Image pull time. */
  pullMs: number;
  /** Installer run time. */
  installMs: number;
  /** Time a rebooting node is down (refuses connections). */
  downMs: number;
  /** Time a static pod whose image changed stays not ready before it is ready (fault `staticPodNeverReady`: forever). */
  staticPodRestartMs: number;
  /** Time the kubelet is stopped when its image changed (fault `kubeletNeverReturns`: forever). */
  kubeletRestartMs: number;
}

export type DownReason = "upgrade" | "reboot";

/** What the node does that the Kubernetes side of a simulated cluster mirrors. */
export interface NodeHost {
  readonly timing: SimTiming;
  /** Talos cordoned the node (legacy upgrade, stage UPGRADING). */
  cordon(node: SimNode): void;
  /** The node's drain step of a legacy upgrade (the Kubernetes side evicts pods). */
  drain(node: SimNode): Promise<void>;
  down(node: SimNode, info: { reason: DownReason; cordon: boolean }): void;
  /** `reported`: the Kubernetes side calls it once the kubelet's Ready report of this boot is in the API server. */
  up(node: SimNode, info: { version: string; bootId: string; uncordon: boolean; reported: () => void }): void;
  /** The cluster's etcd (Talos' pre-upgrade checks on control planes). */
  etcd(): SimEtcd | undefined;
  /** A control-plane static pod changed (restarted with a new image, became ready). */
  staticPod(node: SimNode, pod: SimStaticPod): void;
  /** The kubelet stopped or started (with its version). */
  kubelet(node: SimNode, state: SimKubeletState): void;
}

export interface SimNodeSpec {
  name: string;
  /** Address used in the `node` header (the Kubernetes Node's InternalIP). */
  address: string;
  role?: SimRole;
  /** Talos version tag, e.g. "v1.12.4". */
  version: string;
  /** Version API platform name, default "metal". */
  platform?: string;
  /** Image Factory schematic id the node was installed from (its `schematic` extension); none: not from Image Factory. */
  schematic?: string;
  /** System extensions other than `schematic`. */
  extensions?: SimExtension[];
  /** SecurityState.secure_boot. */
  secureBoot?: boolean;
  /** The machine config's `machine.install.image` (the image the node was installed from); default the vanilla installer. */
  installImage?: string;
  /** The Kubernetes version the node's machine config names (static pod and kubelet images), default v1.34.1. */
  kubernetesVersion?: string;
  /** false: its machine config disables kube-proxy (`cluster.proxy.disabled`), so a control plane renders no manifest of it. */
  kubeProxy?: boolean;
}

/** Platform mode reported with a platform name (Talos: metal, container, or cloud). */
export function platformMode(platform: string): string {
  return platform === "metal" || platform === "container" ? platform : "cloud";
}

/** Whether `preserve` makes the legacy Upgrade skip the etcd mutex and checks (the rule and its sources: provider/talos/version.ts). */
export { preserveSkipsEtcdChecks } from "../../provider/talos/version";

export interface EventRecord {
  id: string;
  actorId: string;
  at: number;
  data: AnyMessage;
}

export type EventSink = (e: EventRecord) => void;

const EVENT_BUFFER = 1000;
const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const uuid = () => crypto.randomUUID();

export class SimNode {
  readonly name: string;
  readonly address: string;
  readonly role: SimRole;
  private _version: string;
  private _bootId = uuid();
  private _up = true;
  private _bootedAt = Date.now();
  /** Fault knobs; mutate freely. */
  faults: NodeFaults = {};
  /** Requests this node received (whatever became of them): to prove an action was not sent twice. */
  readonly received = { upgrade: 0, reboot: 0, install: 0 };
  /** Installer images this node ran (legacy upgrade sequences started, LifecycleService installs that succeeded). */
  readonly installedImages: string[] = [];
  private staged?: string;
  private pulled?: Set<string>;
  private installing = false;
  private sequence?: string;
  private buffer?: EventRecord[];
  private sinks?: Set<EventSink>;
  private downSinks?: Set<() => void>;
  private timer?: NodeJS.Timeout;
  private pendingBoot?: () => void;
  private cordoned = false;
  readonly platform: string;
  readonly secureBoot: boolean;
  /** machine.install.image of the node's machine config. */
  readonly installImage: string;
  private _schematic?: string;
  private _extensions: SimExtension[];
  /** The machine configuration and what Talos runs from it: static pods, kubelet (sim/talos/kubernetes.ts). */
  readonly kubernetes: NodeKubernetes;

  readonly kubeProxy: boolean;
  constructor(spec: SimNodeSpec, private readonly host: NodeHost) {
    this.name = spec.name;
    this.address = spec.address;
    this.role = spec.role ?? "worker";
    this._version = spec.version;
    this.platform = spec.platform ?? "metal";
    this.secureBoot = spec.secureBoot ?? false;
    this.installImage = spec.installImage ?? `ghcr.io/siderolabs/installer:${spec.version}`;
    this.kubeProxy = spec.kubeProxy ?? true;
    this._schematic = spec.schematic;
    this._extensions = spec.extensions ?? [];
    this.kubernetes = new NodeKubernetes(this, spec.kubernetesVersion ?? SIM_DEFAULT_KUBERNETES_VERSION, {
      timing: host.timing,
      staticPod: (pod) => host.staticPod(this, pod),
      kubelet: (state) => host.kubelet(this, state),
    });
  }

  /** The cluster's etcd, for the etcd calls of a control plane. */
  etcd(): SimEtcd {
    const etcd = this.host.etcd();
    if (!etcd || !etcd.member(this.name)) throw new RpcError(Status.UNIMPLEMENTED, "etcd is not running on this node");
    return etcd;
  }

  /** The Image Factory schematic the running image came from, if any. */
  get schematic(): string | undefined { return this._schematic; }
  get extensions(): readonly SimExtension[] { return this._extensions; }

  get version(): string { return this._version; }
  get bootId(): string { return this._bootId; }
  get up(): boolean { return this._up; }
  /** When the running boot started (epoch ms). */
  get bootedAt(): number { return this._bootedAt; }
  /** Image installed by LifecycleService.Upgrade, active after the next reboot. */
  get stagedImage(): string | undefined { return this.staged; }
  get hasLifecycleApi(): boolean { return supportsLifecycleApi(this._version); }

  // --- events

  publish(data: AnyMessage, actorId = ""): void {
    const e: EventRecord = { id: xid(), actorId, at: Date.now(), data };
    (this.buffer ??= []).push(e);
    if (this.buffer.length > EVENT_BUFFER) this.buffer.shift();
    this.sinks?.forEach((s) => s(e));
  }

  /** Buffered events for a new stream (tail semantics of §2.5). */
  tail(req: { tail_events: number; tail_id: string; tail_seconds: number }): EventRecord[] {
    const buf = this.buffer ?? [];
    if (req.tail_events < 0) return [...buf];
    if (req.tail_events > 0) return buf.slice(-req.tail_events);
    if (req.tail_id) {
      const i = buf.findIndex((e) => e.id === req.tail_id);
      return i >= 0 ? buf.slice(i + 1) : [];
    }
    if (req.tail_seconds > 0) return buf.filter((e) => e.at >= Date.now() - req.tail_seconds * 1000);
    return [];
  }

  /** Subscribes to new events; `onDown` runs when the node goes down. Returns the unsubscribe function. */
  subscribe(sink: EventSink, onDown: () => void): () => void {
    (this.sinks ??= new Set()).add(sink);
    (this.downSinks ??= new Set()).add(onDown);
    return () => {
      this.sinks?.delete(sink);
      this.downSinks?.delete(onDown);
      if (this.sinks?.size === 0) this.sinks = undefined;
      if (this.downSinks?.size === 0) this.downSinks = undefined;
    };
  }

  // --- RPC behaviour (the server has checked routing, up/down and roles)

  /** Legacy MachineService.Upgrade: synchronous validation, then the `upgrade` sequence in the background. */
  async legacyUpgrade(req: { image: string; stage: boolean; force?: boolean; preserve?: boolean }): Promise<{ ack: string; actorId: string }> {
    const calledAt = Date.now();
    this.upgradeCallAt ??= calledAt;
    const reject = this.faults.rejectUpgrade;
    if (reject) throw reject === true ? new RpcError(Status.FAILED_PRECONDITION, "method is not supported in container mode") : new RpcError(reject.code, reject.message);
    await delay(this.host.timing.pullMs);
    const target = versionFromImage(req.image);
    if (this.faults.pullFailure || !target) {
      throw new RpcError(Status.UNKNOWN, `error validating installer image "${req.image}": ${this.pullError(req.image)}`);
    }
    // Talos' control-plane checks (v1alpha1_server.go Upgrade): the etcd upgrade mutex, then ValidateForUpgrade.
    const etcd = this.host.etcd();
    if (this.role === "controlplane" && etcd && !req.force && (!req.preserve || !preserveSkipsEtcdChecks(this._version))) {
      etcd.validateForUpgrade({ preserve: !!req.preserve, legacyOneMemberRule: compareVersions(this._version, "v1.8.0") < 0 });
    }
    const actorId = uuid();
    if (this.sequence || this.faults.locked) {
      setImmediate(() => this.publish(ev.sequence(req.stage ? "stageUpgrade" : "upgrade", SequenceAction.NOOP, { code: ErrorCode.LOCKED, message: "sequence not started: locked" })));
    } else {
      this.sequence = "upgrade";
      // From this call on the node upgrades and reboots by itself (Talos' own drain included): all its own time. Not
      // from an earlier call (a Pull refused as unimplemented, a refused attempt): the caller drained or paused since.
      this.rebootAskedAt ??= calledAt;
      this.installedImages.push(req.image);
      setImmediate(() => void this.runLegacyUpgrade(actorId, req.image, target, req.stage));
    }
    return { ack: "Upgrade request received", actorId };
  }

  private async runLegacyUpgrade(actorId: string, image: string, target: string, stage: boolean): Promise<void> {
    const seq = stage ? "stageUpgrade" : "upgrade";
    const p = (d: AnyMessage) => this.publish(d, actorId);
    p(ev.sequence(seq, SequenceAction.START));
    p(ev.status(Stage.UPGRADING, false));
    this.cordoned = true;
    this.host.cordon(this);
    if (!stage) {
      p(ev.phase("drain", PhaseAction.START));
      p(ev.task("cordonAndDrainNode", PhaseAction.START));
      try {
        await this.host.drain(this);
      } catch (err) {
        const message = `sequence failed: error running phase 2 in ${seq} sequence: task 1/1: failed, ${(err as Error).message}`;
        p(ev.sequence(seq, SequenceAction.NOOP, { code: ErrorCode.FATAL, message }));
        this.sequence = undefined;
        return;
      }
      p(ev.task("cordonAndDrainNode", PhaseAction.STOP));
      p(ev.phase("drain", PhaseAction.STOP));
    }
    for (const phase of ["cleanup", "stopServices", "unmount"]) {
      p(ev.phase(phase, PhaseAction.START));
      p(ev.phase(phase, PhaseAction.STOP));
    }
    p(ev.phase("upgrade", PhaseAction.START));
    await delay(this.host.timing.installMs);
    const refused = preflightRefusal(this._version, image);
    const exit = refused ? 1 : this.faults.installerExitCode ?? 0;
    if (exit !== 0) {
      const detail = refused ? `${refused}: exit status ${exit}` : `exit status ${exit}`;
      const message = `sequence failed: error running phase 12 in ${seq} sequence: task 1/1: failed, failed to run installer: ${detail}`;
      p(ev.sequence(seq, SequenceAction.NOOP, { code: ErrorCode.FATAL, message }));
      p(ev.status(Stage.REBOOTING, false));
      this.goDown("upgrade", this._version, 1); // a FATAL sequence reboots the node, on the old version
      return;
    }
    p(ev.phase("upgrade", PhaseAction.STOP));
    p(ev.phase("kexec", PhaseAction.START));
    p(ev.status(Stage.REBOOTING, false));
    p(ev.task("stopAllServices", PhaseAction.START));
    this.goDown("upgrade", this.faults.rollback ? this._version : target, stage ? 2 : 1, this.faults.rollback ? undefined : image);
  }

  /**
   * Each upgrade of this node: its first upgrade call (Pull / legacy Upgrade) → booted again (`ms`), and of that span
   * the node's own part (`ownMs`): the pull and install calls while they ran, and the reboot (Reboot or the legacy
   * Upgrade → booted). What lies between — the caller's drain before its Reboot, its pauses between calls — is the
   * caller's. The rollout bench subtracts `ownMs` as node time (measured, so a sim slowed by load is not counted as
   * talos-gate's, and talos-gate's drain is not counted as the node's). `at` is the call's epoch ms, so the bench can
   * place each span in the rollout's waves and timeline. `reportedMs`: booted → the kubelet's Ready report of that boot
   * accepted by the API server (set when it lands; the bench's breakdown shows it, the overhead does not subtract it).
   */
  readonly upgradeTimes: Array<{ at: number; ms: number; ownMs: number; reportedMs?: number }> = [];
  private upgradeCallAt: number | undefined;
  /** The node's own time so far in the current upgrade, and when its reboot was asked (the last own part). */
  private ownMs = 0;
  private rebootAskedAt: number | undefined;

  /** Counts `fn`'s time as the node's own (a call of the current upgrade while it runs). */
  private async own<T>(fn: () => Promise<T>): Promise<T> {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      if (this.upgradeCallAt !== undefined) this.ownMs += Date.now() - t0;
    }
  }

  /** ImageService.Pull: progress, then the digest-pinned name. */
  pull(ref: string, send: (msg: object) => void): Promise<void> {
    this.upgradeCallAt ??= Date.now();
    return this.own(() => this.pullImage(ref, send));
  }

  private async pullImage(ref: string, send: (msg: object) => void): Promise<void> {
    if (!this.hasLifecycleApi) throw new RpcError(Status.UNIMPLEMENTED, "unknown service machine.ImageService");
    if (!ref) throw new RpcError(Status.INVALID_ARGUMENT, "image reference is required");
    if (this.faults.pullFailure || !versionFromImage(ref)) throw new RpcError(Status.NOT_FOUND, `error pulling image: ${this.pullError(ref)}`);
    const layer = "sha256:" + crypto.createHash("sha256").update("layer:" + ref).digest("hex");
    send({ pull_progress: { layer_id: layer, progress: { status: 0, offset: "0", total: "1048576" } } });
    await delay(this.host.timing.pullMs);
    send({ pull_progress: { layer_id: layer, progress: { status: 3, offset: "1048576", total: "1048576" } } });
    const name = `${ref.split("@")[0]}@sha256:${crypto.createHash("sha256").update(ref).digest("hex")}`;
    (this.pulled ??= new Set()).add(ref).add(name);
    send({ name });
  }

  /** LifecycleService.Upgrade: installs the pulled image (no reboot); log lines, then exactly one exit code. */
  lifecycleUpgrade(image: string, send: (msg: object) => void): Promise<void> {
    return this.own(() => this.install(image, send));
  }

  private async install(image: string, send: (msg: object) => void): Promise<void> {
    if (!this.hasLifecycleApi) throw new RpcError(Status.UNIMPLEMENTED, "unknown service machine.LifecycleService");
    const reject = this.faults.rejectUpgrade;
    if (reject) throw reject === true ? new RpcError(Status.FAILED_PRECONDITION, "upgrade is not supported in container mode") : new RpcError(reject.code, reject.message);
    if (!image) throw new RpcError(Status.INVALID_ARGUMENT, "installer image name is required");
    if (this.installing || this.faults.locked) throw new RpcError(Status.FAILED_PRECONDITION, "another installation/upgrade is already in progress");
    if (!this.pulled?.has(image)) throw new RpcError(Status.INTERNAL, `upgrade failed: installer image "${image}" not found in containerd store`);
    this.installing = true;
    try {
      send({ progress: { message: `running installer ${image}` } });
      await delay(this.host.timing.installMs);
      const refused = preflightRefusal(this._version, image);
      if (refused) send({ progress: { message: refused } });
      const exit = refused ? 1 : this.faults.installerExitCode ?? 0;
      if (exit === 0) {
        send({ progress: { message: `installed Talos ${versionFromImage(image)} to the inactive boot slot` } });
        this.staged = image;
        this.installedImages.push(image);
      } else {
        send({ progress: { message: `error: installation failed (exit status ${exit})` } });
      }
      send({ progress: { exit_code: exit } });
    } finally {
      this.installing = false;
    }
  }

  /** MachineService.Reboot: the `reboot` sequence, then down/up; the staged image (if any) becomes active. */
  reboot(): { actorId: string } {
    const actorId = uuid();
    if (this.sequence) {
      setImmediate(() => this.publish(ev.sequence("reboot", SequenceAction.NOOP, { code: ErrorCode.LOCKED, message: "sequence not started: locked" })));
      return { actorId };
    }
    this.sequence = "reboot";
    this.rebootAskedAt ??= Date.now();
    setImmediate(() => {
      this.publish(ev.sequence("reboot", SequenceAction.START), actorId);
      this.publish(ev.status(Stage.REBOOTING, false), actorId);
      this.publish(ev.task("stopAllServices", PhaseAction.START), actorId);
      const staged = this.staged && versionFromImage(this.staged);
      const activate = staged && !this.faults.rollback;
      this.goDown("reboot", activate ? staged : this._version, 1, activate ? this.staged : undefined);
    });
    return { actorId };
  }

  /** Read: only the boot id exists. */
  read(path: string): Buffer {
    if (path === "/proc/sys/kernel/random/boot_id") return Buffer.from(this._bootId + "\n");
    throw new RpcError(Status.NOT_FOUND, `open ${path}: no such file or directory`);
  }

  // --- down/up cycle

  /** Goes down; boots `nextVersion` (from installer `image`, if one was installed) after the down time. */
  private goDown(reason: DownReason, nextVersion: string, boots: number, image?: string): void {
    this._up = false;
    this.downSinks?.forEach((f) => f());
    this.sinks = undefined;
    this.downSinks = undefined;
    this.host.down(this, { reason, cordon: reason === "upgrade" });
    this.pendingBoot = () => this.comeUp(nextVersion, image);
    if (this.faults.neverComesBack) return;
    const ms = boots * this.host.timing.downMs + (this.faults.slowBootMs ?? 0);
    this.timer = setTimeout(() => this.pendingBoot?.(), ms);
  }

  private comeUp(version: string, image?: string): void {
    if (image) this.applyImage(image);
    this.timer = undefined;
    this.pendingBoot = undefined;
    this._version = version;
    this._bootId = uuid();
    this._bootedAt = Date.now();
    let span: SimNode["upgradeTimes"][number] | undefined;
    if (this.upgradeCallAt !== undefined) {
      const rebooting = this._bootedAt - (this.rebootAskedAt ?? this._bootedAt);
      span = { at: this.upgradeCallAt, ms: this._bootedAt - this.upgradeCallAt, ownMs: this.ownMs + rebooting };
      this.upgradeTimes.push(span);
    }
    this.upgradeCallAt = undefined;
    this.ownMs = 0;
    this.rebootAskedAt = undefined;
    this.buffer = undefined;
    this.staged = undefined;
    this.sequence = undefined;
    this.installing = false;
    this._up = true;
    this.kubernetes.booted();
    this.publish(ev.sequence("initialize", SequenceAction.START));
    this.publish(ev.status(Stage.BOOTING, false));
    this.publish(ev.sequence("boot", SequenceAction.START));
    this.publish(ev.sequence("boot", SequenceAction.STOP));
    this.publish(ev.status(Stage.RUNNING, false, [{ name: "nodeReady", reason: "node not ready" }]));
    this.publish(ev.status(Stage.RUNNING, true));
    const uncordon = this.cordoned;
    this.cordoned = false;
    const reported = () => {
      if (span && span.reportedMs === undefined) span.reportedMs = Date.now() - (span.at + span.ms);
    };
    this.host.up(this, { version, bootId: this._bootId, uncordon, reported });
  }

  /**
   * The booted image decides the schematic, as on a real node: an Image Factory installer
   * (`<host>/[<platform>-]installer[-secureboot]/<schematic>:<version>`) carries its schematic's extensions; the
   * vanilla ghcr.io installer carries none (a node installed from Image Factory loses its extensions); another image
   * is assumed to carry the extensions the node had.
   */
  private applyImage(image: string): void {
    const { repository } = parseImageRef(image);
    const factory = /^[^/]+\/(?:[a-z0-9]+-)?installer(?:-secureboot)?\/([0-9a-f]{64})$/.exec(repository);
    if (factory) {
      if (factory[1] !== this._schematic) this._extensions = [];
      this._schematic = factory[1];
    } else if (repository === "ghcr.io/siderolabs/installer") {
      this._schematic = undefined;
      this._extensions = [];
    }
  }

  /** Brings a node that was left down (fault `neverComesBack`) up now; false if it is not down. */
  recover(): boolean {
    if (this._up || !this.pendingBoot) return false;
    clearTimeout(this.timer);
    this.pendingBoot();
    return true;
  }

  /** Keeps a node that is down now from booting (never-comes-back set mid-reboot); false if it is not down. */
  stayDown(): boolean {
    if (this._up || !this.pendingBoot) return false;
    clearTimeout(this.timer);
    this.timer = undefined;
    return true;
  }

  /** Cancels pending timers (sim shutdown). */
  dispose(): void {
    this.kubernetes.dispose();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.downSinks?.forEach((f) => f());
    this.sinks = undefined;
    this.downSinks = undefined;
  }

  private pullError(ref: string): string {
    const f = this.faults.pullFailure;
    return typeof f === "string" ? f : `failed to pull image "${ref}": ${ref}: not found`;
  }
}
