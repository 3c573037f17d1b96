/**
 * Simulated Talos nodes.
 *
 * Model: one in-process `SimNode` per machine (version, boot id, up/down, staged image, event buffer, fault knobs)
 * behind ONE mTLS gRPC listener that plays the role of the talosconfig endpoint's apid: each call is routed by its
 * `node` header to the target node, exactly as a real endpoint proxies to other nodes (talos-api.md §6.5). So
 * 1,000 nodes cost 1,000 small objects and one socket; no per-node listener, timer or buffer exists until a node
 * does something. While a node reboots, calls for it fail like apid's proxy to an unreachable target:
 * `UNAVAILABLE "connection error: ... connect: connection refused"`, and its open event streams break.
 *
 * PKI (certs.ts): an Ed25519 OS CA issues the endpoint's server certificate (IP SANs 127.0.0.1, ::1) and client
 * certificates with roles in `O=` and EKU clientAuth; `talosconfig()` writes a talosconfig (endpoints + nodes, base64
 * PEM ca/crt/key, the key under Talos' `ED25519 PRIVATE KEY` label). A foreign CA backs the certificate faults.
 *
 * Behaviour (node.ts): Version; legacy MachineService.Upgrade (validates the image synchronously, replies with an
 * actor id, then runs the `upgrade` sequence — cordon, drain via `hooks.beforeLegacyDown`, install, reboot — and
 * comes back with the image tag's version); ImageService.Pull + LifecycleService.Upgrade (only on >= 1.13, else
 * UNIMPLEMENTED) then Reboot, which activates the staged image; Events with the hello message and
 * `talos/runtime/machine.<Name>` payloads; Read of the boot id. Roles: Upgrade/Read/LifecycleService admin only.
 *
 * The Kubernetes side of a simulated cluster listens to this EventEmitter:
 *   `cordon` (node)                               Talos cordoned itself (legacy upgrade, stage UPGRADING)
 *   `down`   (node, {reason, cordon})             the node stopped (Node NotReady; `cordon` = keep it cordoned)
 *   `up`     (node, {version, bootId, uncordon})  the node booted (Node Ready, osImage "Talos (<version>)")
 * and may drain in `hooks.beforeLegacyDown(node)`, which the legacy upgrade awaits before going down.
 */
import { EventEmitter } from "node:events";
import * as fs from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { stringify } from "yaml";
import { ClientCertOptions, SimPki } from "./certs";
import { DownReason, NodeHost, SimNode, SimNodeSpec, SimRole, SimTiming } from "./node";
import { addTalosServices } from "./server";

export { SimPki, talosKeyLabel } from "./certs";
export type { ClientCertOptions, ClientCredentials } from "./certs";
export { SimNode } from "./node";
export type { DownReason, NodeFaults, SimNodeSpec, SimRole, SimTiming } from "./node";

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
  /** Listen address, default 127.0.0.1; port default 0 (any free port). */
  host?: string;
  port?: number;
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
}

export interface TalosNodeSim {
  on(event: "cordon", listener: (node: SimNode) => void): this;
  on(event: "down", listener: (node: SimNode, info: DownInfo) => void): this;
  on(event: "up", listener: (node: SimNode, info: UpInfo) => void): this;
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

export class TalosNodeSim extends EventEmitter {
  readonly pki = new SimPki();
  readonly timing: SimTiming;
  hooks: TalosSimHooks;
  private readonly list: SimNode[];
  private readonly index = new Map<string, SimNode>();
  private server?: grpc.Server;
  private _port = 0;

  private constructor(private readonly opts: TalosSimOptions) {
    super();
    this.timing = { pullMs: 20, installMs: 20, downMs: 300, ...opts.timing };
    this.hooks = opts.hooks ?? {};
    const specs = Array.isArray(opts.nodes) ? opts.nodes : generateNodes(opts.nodes ?? 3, opts.controlPlanes ?? 1, opts.version);
    const host: NodeHost = {
      timing: this.timing,
      cordon: (n) => this.emit("cordon", n),
      drain: async (n) => { await this.hooks.beforeLegacyDown?.(n); },
      down: (n, info) => this.emit("down", n, info),
      up: (n, info) => this.emit("up", n, info),
    };
    this.list = specs.map((s) => new SimNode(s, host));
    for (const n of this.list) {
      if (this.index.has(n.address) || this.index.has(n.name)) throw new Error(`duplicate simulated node ${n.name} (${n.address})`);
      this.index.set(n.address, n).set(n.name, n);
    }
  }

  /** Starts the endpoint listener and returns the running simulation. */
  static async start(opts: TalosSimOptions = {}): Promise<TalosNodeSim> {
    const sim = new TalosNodeSim(opts);
    await sim.listen();
    return sim;
  }

  private async listen(): Promise<void> {
    const host = this.opts.host ?? "127.0.0.1";
    const { cert, key } = this.pki.serverCert(["127.0.0.1", "::1", "localhost", host], { foreignCa: this.opts.foreignServerCert });
    const creds = grpc.ServerCredentials.createSsl(Buffer.from(this.pki.ca.certPem), [{ private_key: Buffer.from(key), cert_chain: Buffer.from(cert) }], true);
    const server = new grpc.Server({ "grpc.max_concurrent_streams": 10000 });
    addTalosServices(server, { lookup: (t) => this.index.get(t), endpointNode: () => this.list[0] });
    this._port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host.includes(":") ? `[${host}]` : host}:${this.opts.port ?? 0}`, creds, (e, port) => (e ? reject(e) : resolve(port))));
    this.server = server;
  }

  get port(): number { return this._port; }
  /** "host:port" of the endpoint, as written to the talosconfig. */
  get endpoint(): string {
    const host = this.opts.host ?? "127.0.0.1";
    return `${host.includes(":") ? `[${host}]` : host}:${this._port}`;
  }

  nodes(): readonly SimNode[] { return this.list; }

  /** Node by name or address; throws if unknown. */
  node(nameOrAddress: string): SimNode {
    const n = this.index.get(nameOrAddress);
    if (!n) throw new Error(`no simulated Talos node "${nameOrAddress}"`);
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
        [context]: { endpoints: [this.endpoint], nodes: this.list.map((n) => n.address), ca: b64(this.pki.ca.certPem), crt: b64(crt), key: b64(key) },
      },
    });
  }

  /** Writes `talosconfig(opts)` to `file` with mode 0600. */
  writeTalosconfig(file: string, opts: ClientCertOptions & { context?: string } = {}): void {
    fs.writeFileSync(file, this.talosconfig(opts), { mode: 0o600 });
  }

  /** Brings up a node left down by `faults.neverComesBack`. */
  recover(nameOrAddress: string): boolean {
    return this.node(nameOrAddress).recover();
  }

  /** Stops the listener and all pending node timers. */
  async stop(): Promise<void> {
    for (const n of this.list) n.dispose();
    const server = this.server;
    this.server = undefined;
    server?.forceShutdown();
    this.removeAllListeners();
  }
}
