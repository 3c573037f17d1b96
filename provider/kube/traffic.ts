// Bytes read from the API server, counted on the sockets of the HTTP agents the port uses (the shared keep-alive agent,
// each watch's agent, client-node's own agent where ours is not used). A socket's `bytesRead` is what the HTTP layer
// read from it: status lines, headers and bodies as sent (gzip-compressed where the API server compressed them), after
// TLS decryption, so TLS records and handshakes are not counted.
import type * as http from "node:http";
import type * as net from "node:net";

type CreateConnection = (...args: unknown[]) => net.Socket | undefined;

export class ByteCounter {
  /** Bytes of the sockets already closed. */
  private closed = 0;
  /** Connections opened (each a TLS handshake on HTTPS). */
  connections = 0;
  private readonly live = new Set<net.Socket>();
  private readonly attached = new WeakSet<http.Agent>();

  /** Counts every socket `agent` opens from now on (once per agent; returns the agent). */
  attach<A extends http.Agent>(agent: A): A {
    if (this.attached.has(agent)) return agent;
    this.attached.add(agent);
    const a = agent as unknown as { createConnection: CreateConnection };
    const create = a.createConnection;
    if (typeof create !== "function") return agent;
    a.createConnection = (...args: unknown[]) => {
      // Agents may hand the socket back through a callback instead of returning it.
      const last = args.length - 1;
      if (typeof args[last] === "function") {
        const cb = args[last] as (err: Error | null, s?: net.Socket) => void;
        args[last] = (err: Error | null, s?: net.Socket) => {
          if (s) this.track(s);
          cb(err, s);
        };
      }
      const socket = create.apply(agent, args);
      if (socket) this.track(socket);
      return socket;
    };
    return agent;
  }

  /** Bytes read so far: closed sockets plus what the open ones have read. */
  get bytesRead(): number {
    let n = this.closed;
    for (const s of this.live) n += s.bytesRead;
    return n;
  }

  private track(socket: net.Socket): void {
    if (this.live.has(socket)) return;
    this.live.add(socket);
    this.connections++;
    // A closed socket keeps its final count in bytesRead.
    socket.once("close", () => {
      if (this.live.delete(socket)) this.closed += socket.bytesRead;
    });
  }
}
