// One control-plane node's apid listener: an mTLS gRPC server on the node's own endpoint address, proxying calls by
// their `node` header to the other simulated nodes (server.ts). It exists only while its node is up: when the node
// goes down the listener is shut down (open connections drop, new ones are refused), and it listens again on the
// same address and port when the node has booted, with the same server certificate.
import * as grpc from "@grpc/grpc-js";
import { enforceKeepalivePolicy, KeepalivePolicy, KeepaliveViolation } from "./keepalive";
import type { SimNode } from "./node";
import { addTalosServices, NodeDirectory } from "./server";

export interface ListenerOptions {
  node: SimNode;
  host: string;
  /** 0: any free port (chosen on the first start, kept for restarts). */
  port: number;
  cert: { cert: string; key: string };
  ca: string;
  lookup: NodeDirectory["lookup"];
  keepalive: KeepalivePolicy;
  onKeepaliveViolation?: (v: KeepaliveViolation) => void;
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class EndpointListener {
  private server?: grpc.Server;
  private _port: number;
  /** Bumped on every start/stop, so a start that finishes after a stop does not leave a server running. */
  private generation = 0;

  constructor(private readonly opts: ListenerOptions) {
    this._port = opts.port;
  }

  get node(): SimNode { return this.opts.node; }
  get host(): string { return this.opts.host; }
  get port(): number { return this._port; }
  get listening(): boolean { return this.server !== undefined; }
  /** "host:port" as written to a talosconfig. */
  get endpoint(): string {
    return `${this.opts.host.includes(":") ? `[${this.opts.host}]` : this.opts.host}:${this._port}`;
  }

  /** Listens (again); a no-op while listening. */
  async start(): Promise<void> {
    if (this.server) return;
    const gen = ++this.generation;
    const o = this.opts;
    const creds = grpc.ServerCredentials.createSsl(Buffer.from(o.ca), [{ private_key: Buffer.from(o.cert.key), cert_chain: Buffer.from(o.cert.cert) }], true);
    for (let attempt = 0; ; attempt++) {
      const server = new grpc.Server({ "grpc.max_concurrent_streams": 10000 });
      addTalosServices(server, { lookup: o.lookup, endpointNode: () => o.node });
      try {
        this._port = await new Promise<number>((resolve, reject) =>
          server.bindAsync(`${o.host.includes(":") ? `[${o.host}]` : o.host}:${this._port}`, creds, (e, port) => (e ? reject(e) : resolve(port))));
      } catch (err) {
        server.forceShutdown();
        // The port of the previous boot can take a moment to be released.
        if (attempt < 40 && this._port !== 0 && /EADDRINUSE|address already in use/i.test(String((err as Error).message))) {
          await delay(50);
          if (gen !== this.generation) return;
          continue;
        }
        throw err;
      }
      if (gen !== this.generation) {
        server.forceShutdown();
        return;
      }
      enforceKeepalivePolicy(server, o.keepalive, o.onKeepaliveViolation);
      this.server = server;
      return;
    }
  }

  /** Shuts the listener down at once: open connections drop, in-flight calls get no answer. */
  stop(): void {
    this.generation++;
    const server = this.server;
    this.server = undefined;
    server?.forceShutdown();
  }
}
