/**
 * Simulated Talos nodes.
 *
 * Model: one in-process `SimNode` per machine (version, boot id, up/down, staged image, event buffer, platform,
 * schematic, fault knobs). Each control-plane node has its own mTLS gRPC listener — its apid, on its own endpoint
 * address (127.0.0.2, 127.0.0.3, ... on Linux; distinct ports on 127.0.0.1 elsewhere) — and the talosconfig lists
 * them all, like a real one. Each listener routes a call by its `node` header to the target node, exactly as a real
 * endpoint proxies to other nodes (talos-api.md §6.5). Workers have no listener: 1,000 nodes cost 1,000 small
 * objects and one socket per control plane. While a node reboots, calls for it through another endpoint fail like
 * apid's proxy to an unreachable target (`UNAVAILABLE "connection error: ... connect: connection refused"`) and its
 * open event streams break; a rebooting control plane's own listener is gone (connections drop, then are refused),
 * so a client must fail over to another endpoint. A sim without control planes serves from the first node.
 *
 * etcd (etcd.ts): one member per control plane, leader and quorum, member health that follows the node (a knob keeps
 * it unhealthy for a while after boot), the upgrade mutex, and Talos' own pre-upgrade refusals.
 *
 * Keepalive (keepalive.ts): every listener enforces gRPC-Go's default ping policy, as apid does.
 *
 * PKI (certs.ts): an Ed25519 OS CA issues each listener's server certificate (IP SANs: its endpoint address,
 * 127.0.0.1, ::1, the node's address) and client certificates with roles in `O=` and EKU clientAuth;
 * `talosconfig()` writes a talosconfig (endpoints + nodes, base64 PEM ca/crt/key, the key under Talos'
 * `ED25519 PRIVATE KEY` label). A foreign CA backs the certificate faults.
 *
 * Behaviour (node.ts): Version; legacy MachineService.Upgrade (validates the image synchronously, replies with an
 * actor id, then runs the `upgrade` sequence — cordon, drain via `hooks.beforeLegacyDown`, install, reboot — and
 * comes back with the image tag's version); ImageService.Pull + LifecycleService.Upgrade (only on >= 1.13, else
 * UNIMPLEMENTED) then Reboot, which activates the staged image; Events with the hello message and
 * `talos/runtime/machine.<Name>` payloads; Read of the boot id. Roles: Upgrade/Read/LifecycleService admin only.
 * Kubernetes (kubernetes.ts): each node's machine configuration (COSI, os:admin), ApplyConfiguration, the control
 * planes' static pods (StaticPodStatus) and the kubelet restarted by a changed image, kube-proxy's bootstrap manifest.
 *
 * The Kubernetes side of a simulated cluster listens to this EventEmitter:
 *   `cordon` (node)                               Talos cordoned itself (legacy upgrade, stage UPGRADING)
 *   `down`   (node, {reason, cordon})             the node stopped (Node NotReady; `cordon` = keep it cordoned)
 *   `up`     (node, {version, bootId, uncordon})  the node booted (Node Ready, osImage "Talos (<version>)")
 *   `staticPod` (node, SimStaticPod)              a control plane's static pod restarted on an image, or became ready
 *   `kubelet` (node, SimKubeletState)             the kubelet stopped for a new image, or runs again (its version)
 * and may drain in `hooks.beforeLegacyDown(node)`, which the legacy upgrade awaits before going down.
 */
import { writePrivateFile } from "../files";
import { EventEmitter } from "node:events";
import { stringify } from "yaml";
import { ClientCertOptions, SimPki } from "./certs";
import { EtcdKnobs, SimEtcd } from "./etcd";
import { GO_DEFAULT_KEEPALIVE_POLICY, KeepalivePolicy, KeepaliveViolation } from "./keepalive";
import { EndpointListener } from "./listener";
import type { SimKubeletState, SimStaticPod } from "./kubernetes";
import { DownReason, NodeHost, SimNode, SimNodeSpec, SimRole, SimTiming } from "./node";
import { simMsg } from "../messages";

export { SimPki, talosKeyLabel } from "./certs";
export type { ClientCertOptions, ClientCredentials } from "./certs";
export { formatMemberId, SimEtcd } from "./etcd";
export type { EtcdKnobs, EtcdMemberState } from "./etcd";
export { GO_DEFAULT_KEEPALIVE_POLICY } from "./keepalive";
export type { KeepalivePolicy, KeepaliveViolation } from "./keepalive";
export { SimNode } from "./node";
export { initialMachineConfig, SIM_CONFIG_SECRET, SIM_DEFAULT_KUBERNETES_VERSION } from "./kubernetes";
export type { KubernetesFaults, SimKubeletState, SimStaticPod } from "./kubernetes";
export type { DownReason, NodeFaults, SimExtension, SimNodeSpec, SimRole, SimTiming } from "./node";

export interface TalosSimHooks {
  /** Awaited in a legacy upgrade's drain step (Talos drains the node itself); a rejection fails the sequence. */
  beforeLegacyDown?: (node: SimNode) => Promise<void>;
}

export interface TalosSimOptions {
  /** Node specs, or a count of generated nodes (`cp-1..`, then `w-1..`, addresses 10.5.x.y). Default 3. */
  nodes?: number | SimNodeSpec[];
  /** Control planes among generated nodes, default 1. */
  controlPlanes?: number;
  /** Talos version of generated nodes, default v1.12.4. */
  version?: string;
  /** Kubernetes version every node's machine config starts on (unless its spec names one), default v1.34.1. */
  kubernetesVersion?: string;
  /** false: every node's machine config disables kube-proxy (unless its spec says otherwise); default true. */
  kubeProxy?: boolean;
  /**
   * Listen address of every endpoint (distinct ports). Default: one loopback address per control plane
   * (127.0.0.2, 127.0.0.3, ...) where the OS has them (Linux), else 127.0.0.1. Port default 0 (any free port; with
   * several endpoints on one host only the first may be given).
   */
  host?: string;
  port?: number;
  /** etcd knobs (e.g. `unhealthyAfterBootMs`). */
  etcd?: Partial<EtcdKnobs>;
  /** Ping policy the endpoints enforce; default gRPC-Go's (apid's): 5 minutes, not without calls. */
  keepalivePolicy?: KeepalivePolicy;
  timing?: Partial<SimTiming>;
  /** The endpoint presents a server certificate from a CA the talosconfig does not trust. */
  foreignServerCert?: boolean;
  hooks?: TalosSimHooks;
}

export interface DownInfo {
  reason: DownReason;
  /** The node stays cordoned while down (Talos cordoned it for a legacy upgrade). */
  cordon: boolean;
}

export interface UpInfo {
  version: string;
  bootId: string;
  /** Talos uncordons on boot a node it cordoned itself. */
  uncordon: boolean;
  /** Called by the Kubernetes side once the kubelet's Ready report of this boot is in the API server. */
  reported: () => void;
}

export interface TalosNodeSim {
  on(event: "staticPod", listener: (node: SimNode, pod: SimStaticPod) => void): this;
  on(event: "kubelet", listener: (node: SimNode, state: SimKubeletState) => void): this;
  on(event: "cordon", listener: (node: SimNode) => void): this;
  on(event: "down", listener: (node: SimNode, info: DownInfo) => void): this;
  on(event: "up", listener: (node: SimNode, info: UpInfo) => void): this;
  once(event: "staticPod", listener: (node: SimNode, pod: SimStaticPod) => void): this;
  once(event: "kubelet", listener: (node: SimNode, state: SimKubeletState) => void): this;
  once(event: "cordon", listener: (node: SimNode) => void): this;
  once(event: "down", listener: (node: SimNode, info: DownInfo) => void): this;
  once(event: "up", listener: (node: SimNode, info: UpInfo) => void): this;
}

/** Generated node specs: `cp-1..cp-N` then `w-1..`, addresses 10.5.<i/250>.<i%250+2>. */
export function generateNodes(count: number, controlPlanes = 1, version = "v1.12.4"): SimNodeSpec[] {
  return Array.from({ length: count }, (_, i) => {
    const role: SimRole = i < controlPlanes ? "controlplane" : "worker";
    return {
      name: role === "controlplane" ? `cp-${i + 1}` : `w-${i - controlPlanes + 1}`,
      address: `10.5.${Math.floor(i / 250)}.${(i % 250) + 2}`,
      role,
      version,
    };
  });
}

/** How long after its node goes down a control plane's listener stops. */
const APID_STOP_MS = 30;

/** The loopback address of the i-th endpoint: 127.0.0.2, 127.0.0.3, ... (all of 127/8 is loopback on Linux). */
function loopbackAddress(i: number): string {
  return `127.0.${Math.floor(i / 250)}.${(i % 250) + 2}`;
}

export class TalosNodeSim extends EventEmitter {
  readonly pki = new SimPki();
  readonly timing: SimTiming;
  hooks: TalosSimHooks;
  private readonly list: SimNode[];
  private readonly index = new Map<string, SimNode>();
  private readonly apids = new Map<SimNode, EndpointListener>();
  /** The cluster's etcd: one member per control-plane node. */
  readonly etcd: SimEtcd;
  /** Connections closed for too many pings (GOAWAY too_many_pings), in order. */
  readonly keepaliveViolations: KeepaliveViolation[] = [];
  /** The last error of a listener that could not listen again after its node booted. */
  listenerError?: Error;

  private constructor(private readonly opts: TalosSimOptions) {
    super();
    this.timing = { pullMs: 20, installMs: 20, downMs: 300, staticPodRestartMs: 200, kubeletRestartMs: 200, ...opts.timing };
    this.hooks = opts.hooks ?? {};
    const specs = Array.isArray(opts.nodes) ? opts.nodes : generateNodes(opts.nodes ?? 3, opts.controlPlanes ?? 1, opts.version);
    const host: NodeHost = {
      timing: this.timing,
      cordon: (n) => this.emit("cordon", n),
      drain: async (n) => { await this.hooks.beforeLegacyDown?.(n); },
      down: (n, info) => {
        this.etcd.nodeDown(n.name);
        // apid is among the last services to stop: an answer already sent (Reboot's) still gets out.
        const l = this.apids.get(n);
        if (l) setTimeout(() => !n.up && l.stop(), APID_STOP_MS);
        this.emit("down", n, info);
      },
      up: (n, info) => {
        this.etcd.nodeUp(n.name);
        const l = this.apids.get(n);
        if (l) l.start().catch((e: Error) => (this.listenerError = e));
        this.emit("up", n, info);
      },
      etcd: () => this.etcd,
      staticPod: (n, pod) => this.emit("staticPod", n, pod),
      kubelet: (n, state) => this.emit("kubelet", n, state),
    };
    const k8s = opts.kubernetesVersion;
    this.list = specs.map((s) => new SimNode({
      ...(k8s && !s.kubernetesVersion ? { ...s, kubernetesVersion: k8s } : s),
      ...(s.kubeProxy === undefined && opts.kubeProxy !== undefined ? { kubeProxy: opts.kubeProxy } : {}),
    }, host));
    for (const n of this.list) {
      if (this.index.has(n.address) || this.index.has(n.name)) throw new Error(simMsg.duplicateNode(n.name, n.address));
      this.index.set(n.address, n).set(n.name, n);
    }
    this.etcd = new SimEtcd(this.list.filter((n) => n.role === "controlplane"), opts.etcd);
  }

  /** Starts the endpoint listener and returns the running simulation. */
  static async start(opts: TalosSimOptions = {}): Promise<TalosNodeSim> {
    const sim = new TalosNodeSim(opts);
    await sim.listen();
    return sim;
  }

  /** Starts one listener per control plane (or for the first node when there is none). */
  private async listen(): Promise<void> {
    const cps = this.list.filter((n) => n.role === "controlplane");
    const endpointNodes = cps.length ? cps : this.list.slice(0, 1);
    let perNodeLoopback = this.opts.host === undefined;
    for (const [i, node] of endpointNodes.entries()) {
      const make = (host: string) => {
        const cert = this.pki.serverCert([...new Set([host, "127.0.0.1", "::1", "localhost", node.address])], { foreignCa: this.opts.foreignServerCert });
        return new EndpointListener({
          node, host, port: i === 0 ? this.opts.port ?? 0 : 0, cert, ca: this.pki.ca.certPem,
          lookup: (t) => this.index.get(t),
          keepalive: this.opts.keepalivePolicy ?? GO_DEFAULT_KEEPALIVE_POLICY,
          onKeepaliveViolation: (v) => this.keepaliveViolations.push(v),
        });
      };
      let listener = make(perNodeLoopback ? loopbackAddress(i) : this.opts.host ?? "127.0.0.1");
      try {
        await listener.start();
      } catch (err) {
        // Only Linux routes all of 127/8 to the loopback interface: elsewhere every endpoint shares 127.0.0.1.
        if (!perNodeLoopback || !/EADDRNOTAVAIL|address not available/i.test(String((err as Error).message))) throw err;
        perNodeLoopback = false;
        listener = make("127.0.0.1");
        await listener.start();
      }
      this.apids.set(node, listener);
    }
  }

  /** Port of the first endpoint. */
  get port(): number { return this.firstListener().port; }
  /** "host:port" of the first endpoint. */
  get endpoint(): string { return this.firstListener().endpoint; }
  /** "host:port" of every endpoint (one per control plane), as written to the talosconfig. */
  get endpoints(): string[] { return [...this.apids.values()].map((l) => l.endpoint); }

  /** The endpoint (listener) of a control-plane node, if it has one. */
  endpointOf(nameOrAddress: string): EndpointListener | undefined {
    return this.apids.get(this.node(nameOrAddress));
  }

  private firstListener(): EndpointListener {
    const l = this.apids.values().next().value;
    if (!l) throw new Error(simMsg.endpointsNotListening());
    return l;
  }

  nodes(): readonly SimNode[] { return this.list; }

  /** Node by name or address; throws if unknown. */
  node(nameOrAddress: string): SimNode {
    const n = this.index.get(nameOrAddress);
    if (!n) throw new Error(simMsg.noSuchNode(nameOrAddress));
    return n;
  }

  /** A talosconfig for this cluster (context "sim"); default role os:admin. */
  talosconfig(opts: ClientCertOptions & { context?: string } = {}): string {
    const { crt, key } = this.pki.clientCert(opts);
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    const context = opts.context ?? "sim";
    return stringify({
      context,
      contexts: {
        [context]: { endpoints: this.endpoints, nodes: this.list.map((n) => n.address), ca: b64(this.pki.ca.certPem), crt: b64(crt), key: b64(key) },
      },
    });
  }

  /** Writes `talosconfig(opts)` to `file` with mode 0600. */
  writeTalosconfig(file: string, opts: ClientCertOptions & { context?: string } = {}): void {
    writePrivateFile(file, this.talosconfig(opts));
  }

  /** Brings up a node left down by `faults.neverComesBack`. */
  recover(nameOrAddress: string): boolean {
    return this.node(nameOrAddress).recover();
  }

  /** Makes the static pods a fault held not ready ready, and starts a kubelet a fault kept stopped. */
  recoverKubernetes(nameOrAddress: string): void {
    this.node(nameOrAddress).kubernetes.recover();
  }

  /** Stops the listeners and all pending node and etcd timers. */
  async stop(): Promise<void> {
    for (const n of this.list) n.dispose();
    for (const l of this.apids.values()) l.stop();
    this.etcd.dispose();
    this.removeAllListeners();
  }
}
