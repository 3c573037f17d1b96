// Node objects for the simulated machines, written the way a kubelet registers and reports them (plus the bits the
// node lifecycle controller adds: not-ready/unreachable and unschedulable taints).
import { randomUUID } from "node:crypto";
import { SIM_DEFAULT_KUBERNETES_VERSION } from "../talos/kubernetes";
import { mapLimit } from "../../provider/mapLimit";
import { KubeError, Rest, isAlreadyExists, nowTime, retrying } from "./rest";
import { Condition, Node, nodePath } from "./types";

export interface MachineSpec {
  name: string;
  role: "controlplane" | "worker";
  /** InternalIP of the node. */
  address: string;
  /** Talos version, e.g. "v1.12.1" (osImage becomes "Talos (v1.12.1)"). */
  talosVersion: string;
  /** Defaults to DEFAULT_KUBELET_VERSION. */
  kubeletVersion?: string;
}

/** The Kubernetes version a simulated node starts on unless told otherwise (one value for the Talos and kube sides). */
export const DEFAULT_KUBELET_VERSION = SIM_DEFAULT_KUBERNETES_VERSION;
export const TALOS_CORDONED_ANNOTATION = "talos.dev/cordoned";
export const CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane";
export const UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable";
export const UNREACHABLE_TAINT = "node.kubernetes.io/unreachable";
export const NOT_READY_TAINT = "node.kubernetes.io/not-ready";

/**
 * Kernel and containerd versions per Talos minor (approximately what each Talos release ships; the sim only needs
 * plausible, version-dependent values).
 */
const TALOS_COMPONENTS: Record<string, { kernel: string; containerd: string }> = {
  "1.6": { kernel: "6.1.82", containerd: "1.7.13" },
  "1.7": { kernel: "6.6.33", containerd: "1.7.18" },
  "1.8": { kernel: "6.6.54", containerd: "2.0.0" },
  "1.9": { kernel: "6.12.6", containerd: "2.0.1" },
  "1.10": { kernel: "6.12.25", containerd: "2.0.5" },
  "1.11": { kernel: "6.12.48", containerd: "2.1.4" },
  "1.12": { kernel: "6.17.7", containerd: "2.1.5" },
  "1.13": { kernel: "6.18.2", containerd: "2.2.0" },
};

export function talosComponents(talosVersion: string): { kernelVersion: string; containerRuntimeVersion: string } {
  const m = /^v?(\d+)\.(\d+)/.exec(talosVersion);
  const c = (m && TALOS_COMPONENTS[`${m[1]}.${m[2]}`]) ?? { kernel: "6.12.48", containerd: "2.1.4" };
  return { kernelVersion: `${c.kernel}-talos`, containerRuntimeVersion: `containerd://${c.containerd}` };
}

export const osImage = (talosVersion: string) => `Talos (${talosVersion.startsWith("v") ? talosVersion : `v${talosVersion}`})`;

/** The four conditions a healthy kubelet posts. */
function healthyConditions(now: string): Condition[] {
  return [
    { type: "MemoryPressure", status: "False", reason: "KubeletHasSufficientMemory", message: "kubelet has sufficient memory available", lastHeartbeatTime: now, lastTransitionTime: now },
    { type: "DiskPressure", status: "False", reason: "KubeletHasNoDiskPressure", message: "kubelet has no disk pressure", lastHeartbeatTime: now, lastTransitionTime: now },
    { type: "PIDPressure", status: "False", reason: "KubeletHasSufficientPID", message: "kubelet has sufficient PID available", lastHeartbeatTime: now, lastTransitionTime: now },
    { type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status", lastHeartbeatTime: now, lastTransitionTime: now },
  ];
}

function podCidr(index: number): string {
  return `10.${244 + Math.floor(index / 256)}.${index % 256}.0/24`;
}

export function nodeObject(m: MachineSpec, index: number, controlPlaneTaint: boolean): Node {
  const now = nowTime();
  const labels: Record<string, string> = {
    "beta.kubernetes.io/arch": "amd64",
    "beta.kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    "kubernetes.io/hostname": m.name,
    "kubernetes.io/os": "linux",
  };
  if (m.role === "controlplane") labels[CONTROL_PLANE_LABEL] = "";
  const cidr = podCidr(index);
  const comps = talosComponents(m.talosVersion);
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: m.name,
      labels,
      annotations: { "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true" },
    } as unknown as Node["metadata"],
    spec: {
      podCIDR: cidr,
      podCIDRs: [cidr],
      ...(m.role === "controlplane" && controlPlaneTaint ? { taints: [{ key: CONTROL_PLANE_LABEL, effect: "NoSchedule" }] } : {}),
    },
    status: {
      addresses: [
        { type: "InternalIP", address: m.address },
        { type: "Hostname", address: m.name },
      ],
      capacity: { cpu: "4", "ephemeral-storage": "102626232Ki", memory: "8129100Ki", pods: "110" },
      allocatable: { cpu: "3950m", "ephemeral-storage": "94580335255", memory: "7670348Ki", pods: "110" },
      conditions: healthyConditions(now),
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        architecture: "amd64",
        bootID: randomUUID(),
        machineID: randomUUID().replace(/-/g, ""),
        systemUUID: randomUUID(),
        operatingSystem: "linux",
        osImage: osImage(m.talosVersion),
        kernelVersion: comps.kernelVersion,
        containerRuntimeVersion: comps.containerRuntimeVersion,
        kubeletVersion: m.kubeletVersion ?? DEFAULT_KUBELET_VERSION,
        kubeProxyVersion: "",
      },
    },
  };
}

export interface DownOptions {
  /**
   * "unknown" (default): the kubelet stopped posting (reboot, power off) and the node lifecycle controller marks all
   * conditions Unknown with reason NodeStatusUnknown and taints the node unreachable. "notready": the kubelet posts
   * Ready=False with reason KubeletNotReady and the node is tainted not-ready.
   */
  mode?: "unknown" | "notready";
  message?: string;
}

export interface UpOptions {
  talosVersion?: string;
  kubeletVersion?: string;
  bootId?: string;
  /** Called when the Ready report is in (the status write answered), before the taints are lifted. */
  reported?: () => void;
}

export interface CordonOptions {
  /** Cordoned by Talos itself (legacy upgrade): adds talos.dev/cordoned=true. */
  byTalos?: boolean;
}

export interface UncordonOptions {
  /** Like Talos on boot: uncordon only if Talos cordoned it (the annotation is present). */
  onlyIfTalos?: boolean;
}

/** The Nodes as an informer holds them (sim/kube/reflector.ts Reflector<Node>). */
export interface NodeLister {
  get(ns: undefined, name: string): Node | undefined;
  when(ns: undefined, name: string, pred: (n: Node) => boolean, timeoutMs: number): Promise<Node | undefined>;
}

/**
 * How long the node lifecycle side waits for its informer to show a status just written before it reads instead (the
 * read decides as well: the wait only saves it; a write by someone else delivered before the wait began ends there).
 */
const LISTER_WAIT_MS = 2000;

const READINESS_TAINTS: ReadonlySet<string> = new Set([UNREACHABLE_TAINT, NOT_READY_TAINT]);

const readyStatus = (n: Node): string | undefined => (n.status?.conditions as Condition[] | undefined)?.find((c) => c.type === "Ready")?.status;

/** The Node's taints with `want` as its only readiness (NoSchedule) taint, or undefined when they are so already. */
function readinessTaintsFor(n: Node, want: string | undefined): { key: string; effect: string; timeAdded?: string }[] | undefined {
  const taints: { key: string; effect: string; timeAdded?: string }[] = n.spec?.taints ?? [];
  const isReadiness = (t: { key: string; effect: string }) => t.effect === "NoSchedule" && READINESS_TAINTS.has(t.key);
  const kept = taints.filter((t) => !isReadiness(t) || t.key === want);
  const has = kept.some((t) => isReadiness(t));
  if (kept.length === taints.length && (has || !want)) return undefined;
  return want && !has ? [...kept, { key: want, effect: "NoSchedule", timeAdded: nowTime() }] : kept;
}

/** Reads and flips the sim's Node objects. */
export class NodeSim {
  constructor(
    private readonly rest: Rest,
    /** What the kubelets' and the node lifecycle controller's informers show of the Nodes (the sim's Node reflector). */
    private readonly lister: NodeLister,
    private readonly opts: { controlPlaneTaint?: boolean; concurrency?: number } = {},
  ) {}

  /** Registers the machines as Nodes (create with status, like a kubelet; existing Nodes are brought to Ready). */
  async register(machines: readonly MachineSpec[]): Promise<void> {
    await mapLimit(machines, this.opts.concurrency ?? 16, async (m, i) => {
      const body = nodeObject(m, i, this.opts.controlPlaneTaint ?? true);
      try {
        let created = await retrying(`register node ${m.name}`, () => this.rest.post<Node>(nodePath(), body));
        // The API server keeps the status of a created Node; post it via /status when it did not.
        if (!(created.status?.conditions ?? []).length) created = await this.rest.mergePatch(`${nodePath(m.name)}/status`, { status: body.status });
        // The TaintNodesByCondition admission plugin taints every new Node not-ready; the node lifecycle controller
        // removes the taint once the node is Ready.
        const taints: { key: string }[] = created.spec?.taints ?? [];
        if (taints.some((t) => t.key === NOT_READY_TAINT)) {
          created.spec.taints = taints.filter((t) => t.key !== NOT_READY_TAINT);
          if (!created.spec.taints.length) delete created.spec.taints;
          try {
            await this.rest.put(nodePath(m.name), created);
          } catch {
            await this.setTaint(m.name, NOT_READY_TAINT, false);
          }
        }
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        await this.up(m.name, { talosVersion: m.talosVersion, kubeletVersion: m.kubeletVersion });
      }
    });
  }

  get(name: string): Promise<Node> {
    return this.rest.get<Node>(nodePath(name));
  }

  /** Read-modify-write of a Node (spec/metadata) with optimistic concurrency. */
  private async updateNode(name: string, mutate: (n: Node) => boolean): Promise<Node> {
    return retrying(`update node ${name}`, async () => {
      const node = await this.get(name);
      if (!mutate(node)) return node;
      return this.rest.put<Node>(nodePath(name), node);
    });
  }

  /**
   * A status write, read first from the lister like the writer it stands for, and from etcd when tried again.
   * - The kubelet's report (`by: "kubelet"`): kubernetes v1.36.3 pkg/kubelet/kubelet_node_status.go tryUpdateNodeStatus
   *   reads its first try from its own Node lister (Node reads and writes from there "are the majority of load on
   *   apiserver and etcd" in large clusters), later tries from etcd, and PatchNodeStatus (component-helpers
   *   node/util/status.go) sends a two-way merge patch with no resourceVersion. A read a little behind loses nothing:
   *   the report sets every condition the kubelet owns and only the nodeInfo fields it changes (`up`).
   * - The node lifecycle controller's (`by: "controller"`): v1.36.3 pkg/controller/nodelifecycle monitorNodeHealth
   *   updates the Node from its lister with UpdateStatus, which carries the resourceVersion read; after a conflict it
   *   reads the Node from etcd.
   */
  private async writeStatus(name: string, by: "kubelet" | "controller", mutate: (n: Node, now: string) => unknown): Promise<Node> {
    let tries = 0;
    return retrying(`update status of node ${name}`, async () => {
      const node = (tries++ === 0 ? this.lister.get(undefined, name) : undefined) ?? await this.rest.get<Node>(nodePath(name));
      const status = mutate(node, nowTime());
      const metadata = by === "controller" ? { metadata: { resourceVersion: node.metadata.resourceVersion } } : {};
      return this.rest.mergePatch<Node>(`${nodePath(name)}/status`, { ...metadata, status });
    });
  }

  /**
   * The node lifecycle controller's NoSchedule taint for the Ready condition just written (`written`): v1.36.3
   * pkg/controller/nodelifecycle doNoScheduleTaintingPass runs when its informer shows the Node, decides on that
   * Node and sends nothing when its taints already match; otherwise (pkg/controller/controller_utils.go
   * AddOrUpdateTaintOnNode / RemoveTaintOffNode / PatchNodeTaints) it reads the Node from the API server's cache
   * (resourceVersion 0) and patches the taints with that resourceVersion, reading etcd after a conflict. (The real
   * controller adds and removes in two calls; the sim's Nodes only ever go from no readiness taint to one and back.)
   */
  private async readinessTaint(name: string, written: Node): Promise<void> {
    const ready = readyStatus(written);
    // The very write (the watch delivers every event in order): a Node before it may show the same condition.
    const rv = written.metadata.resourceVersion;
    const seen = await this.lister.when(undefined, name, (n) => n.metadata.resourceVersion === rv, LISTER_WAIT_MS);
    const want = ready === "Unknown" ? UNREACHABLE_TAINT : ready === "True" ? undefined : NOT_READY_TAINT;
    if (seen && !readinessTaintsFor(seen, want)) return;
    let tries = 0;
    await retrying(`taint node ${name}`, async () => {
      const node = await this.rest.get<Node>(nodePath(name), tries++ === 0 ? { resourceVersion: "0" } : undefined);
      const taints = readinessTaintsFor(node, want);
      if (!taints) return;
      await this.rest.mergePatch(nodePath(name), { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: taints.length ? taints : null } });
    });
  }

  /** The sim's own cordon taint, and a registration's leftover not-ready taint: read from etcd, written with a precondition. */
  private async setTaint(name: string, taintKey: string, present: boolean, effect = "NoSchedule"): Promise<void> {
    await this.updateNode(name, (n) => {
      const taints: { key: string; effect: string; timeAdded?: string }[] = n.spec?.taints ?? [];
      const has = taints.some((t) => t.key === taintKey && t.effect === effect);
      if (has === present) return false;
      n.spec = n.spec ?? {};
      n.spec.taints = present ? [...taints, { key: taintKey, effect, timeAdded: nowTime() }] : taints.filter((t) => !(t.key === taintKey && t.effect === effect));
      if (!n.spec.taints.length) delete n.spec.taints;
      return true;
    });
  }

  /** The node stops being Ready (see DownOptions). */
  async down(name: string, opts: DownOptions = {}): Promise<void> {
    const mode = opts.mode ?? "unknown";
    const written = await this.writeStatus(name, "controller", (n, now) => {
      const conds: Condition[] = n.status?.conditions ?? healthyConditions(now);
      return {
        conditions: conds.map((c) => {
          if (mode === "unknown") {
            return { ...c, status: "Unknown", reason: "NodeStatusUnknown", message: opts.message ?? "Kubelet stopped posting node status.", lastTransitionTime: c.status === "Unknown" ? c.lastTransitionTime : now };
          }
          if (c.type !== "Ready") return { ...c, lastHeartbeatTime: now };
          return { ...c, status: "False", reason: "KubeletNotReady", message: opts.message ?? "container runtime status check may not have completed yet", lastHeartbeatTime: now, lastTransitionTime: c.status === "False" ? c.lastTransitionTime : now };
        }),
      };
    });
    await this.readinessTaint(name, written);
  }

  /** The kubelet posts Ready again, optionally after booting a new Talos version (osImage, kernel, bootID change). */
  async up(name: string, opts: UpOptions = {}): Promise<void> {
    const written = await this.writeStatus(name, "kubelet", (n, now) => {
      // Only what this report sets (a merge patch merges nodeInfo): a read a little behind must not write back an
      // older value of another field, e.g. the kubeletVersion of a restart reported just before.
      const info: Record<string, string> = {};
      if (opts.talosVersion) Object.assign(info, { osImage: osImage(opts.talosVersion) }, talosComponents(opts.talosVersion));
      if (opts.kubeletVersion) info.kubeletVersion = opts.kubeletVersion;
      if (opts.bootId) info.bootID = opts.bootId;
      const old: Condition[] = n.status?.conditions ?? [];
      const conditions = healthyConditions(now).map((c) => {
        const prev = old.find((o) => o.type === c.type);
        return prev && prev.status === c.status ? { ...c, lastTransitionTime: prev.lastTransitionTime } : c;
      });
      return { conditions, nodeInfo: info };
    });
    opts.reported?.();
    await this.readinessTaint(name, written);
  }

  /** The kubelet restarted on another version (Talos applied a new `machine.kubelet.image`): it reports it in nodeInfo. */
  async setKubeletVersion(name: string, version: string): Promise<void> {
    await this.writeStatus(name, "kubelet", () => ({ nodeInfo: { kubeletVersion: version } }));
  }

  /** spec.unschedulable = true (+ talos.dev/cordoned when Talos cordons) and the unschedulable taint. */
  async cordon(name: string, opts: CordonOptions = {}): Promise<void> {
    let changed = false;
    await this.updateNode(name, (n) => {
      changed = false; // decided again on every attempt's fresh read
      // Like Talos' Cordon: a node that is already unschedulable is left alone (no annotation added).
      if (n.spec?.unschedulable) return false;
      n.spec = { ...(n.spec ?? {}), unschedulable: true };
      if (opts.byTalos) n.metadata.annotations = { ...(n.metadata.annotations ?? {}), [TALOS_CORDONED_ANNOTATION]: "true" };
      changed = true;
      return true;
    });
    // Only with the cordon it set: a node someone else cordoned (talos-gate's drain, an administrator) keeps what it
    // has, and their uncordon — a plain spec patch, no node lifecycle controller here — would leave this taint behind.
    if (changed) await this.setTaint(name, UNSCHEDULABLE_TAINT, true);
  }

  /** Makes the node schedulable again; with onlyIfTalos, only when Talos cordoned it (what Talos does on boot). */
  async uncordon(name: string, opts: UncordonOptions = {}): Promise<boolean> {
    let changed = false;
    await this.updateNode(name, (n) => {
      const byTalos = n.metadata.annotations?.[TALOS_CORDONED_ANNOTATION] === "true";
      if (opts.onlyIfTalos && !byTalos) return false;
      if (!n.spec?.unschedulable && !byTalos) return false;
      delete n.spec.unschedulable;
      if (n.metadata.annotations) delete n.metadata.annotations[TALOS_CORDONED_ANNOTATION];
      changed = true;
      return true;
    });
    if (changed) await this.setTaint(name, UNSCHEDULABLE_TAINT, false);
    return changed;
  }
}

export function nodeError(node: string, err: unknown): Error {
  const msg = err instanceof KubeError ? err.message : String(err);
  return new Error(`kube sim: node ${node}: ${msg}`);
}
