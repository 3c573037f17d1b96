// gRPC-Go's server keepalive enforcement, which apid runs with its defaults (it sets no EnforcementPolicy):
// MinTime 5 minutes, PermitWithoutStream false, at most 2 ping strikes. A client that pings more often earns a
// GOAWAY ENHANCE_YOUR_CALM "too_many_pings" and the connection is closed, failing every call on it
// (google.golang.org/grpc internal/transport/http2_server.go handlePing). grpc-js servers enforce nothing, so the
// simulated endpoints do it here, per HTTP/2 session.
import * as http2 from "node:http2";
import type * as grpc from "@grpc/grpc-js";

export interface KeepalivePolicy {
  /** Minimum time between client pings while calls are active (Go: keepalive.EnforcementPolicy.MinTime). */
  minTimeMs: number;
  /** Pings without an active call are allowed (Go default false: then they must be 2 hours apart). */
  permitWithoutStream: boolean;
}

/** gRPC-Go's defaults, as apid runs them. */
export const GO_DEFAULT_KEEPALIVE_POLICY: KeepalivePolicy = { minTimeMs: 5 * 60_000, permitWithoutStream: false };

/** Go: maxPingStrikes; the third offending ping closes the connection. */
const MAX_PING_STRIKES = 2;
/** Go: defaultPingTimeout, the spacing required of pings while no call is active and they are not permitted. */
const NO_STREAM_PING_MS = 2 * 60 * 60_000;

export interface KeepaliveViolation {
  at: number;
  pings: number;
}

/**
 * Enforces `policy` on every HTTP/2 session of a bound grpc-js server; `onViolation` sees each connection closed.
 * grpc-js keeps its HTTP/2 servers private: if that changes, this throws rather than silently enforcing nothing.
 */
export function enforceKeepalivePolicy(server: grpc.Server, policy: KeepalivePolicy, onViolation?: (v: KeepaliveViolation) => void): void {
  const servers = (server as unknown as { http2Servers?: Map<http2.Http2SecureServer, unknown> }).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0) {
    throw new Error("sim: cannot reach the HTTP/2 servers of this grpc-js version to enforce the keepalive policy");
  }
  for (const h2 of servers.keys()) h2.on("session", (session: http2.ServerHttp2Session) => watchSession(session, policy, onViolation));
}

function watchSession(session: http2.ServerHttp2Session, policy: KeepalivePolicy, onViolation?: (v: KeepaliveViolation) => void): void {
  let active = 0;
  let maxStreamId = 0;
  let strikes = 0;
  let pings = 0;
  let lastPingAt = -Infinity;
  // Go resets the strikes when the server sends headers or data: a call that streams answers may be pinged freely.
  let sentSincePing = false;
  session.on("stream", (stream: http2.ServerHttp2Stream) => {
    active++;
    maxStreamId = Math.max(maxStreamId, stream.id ?? 0);
    stream.once("close", () => active--);
    const respond = stream.respond.bind(stream);
    stream.respond = (...args: Parameters<typeof stream.respond>) => {
      sentSincePing = true;
      return respond(...args);
    };
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    (stream as unknown as { write: (...a: unknown[]) => boolean }).write = (...args: unknown[]) => {
      sentSincePing = true;
      return write(...args);
    };
  });
  session.on("ping", () => {
    const now = Date.now();
    pings++;
    const last = lastPingAt;
    lastPingAt = now;
    if (sentSincePing) {
      sentSincePing = false;
      strikes = 0;
      return;
    }
    const spacing = active < 1 && !policy.permitWithoutStream ? NO_STREAM_PING_MS : policy.minTimeMs;
    if (last + spacing > now) strikes++;
    if (strikes > MAX_PING_STRIKES && !session.destroyed) {
      onViolation?.({ at: now, pings });
      // Last stream id = the highest seen, as Go's loopy writer sends it: the calls in flight were processed.
      session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, maxStreamId, Buffer.from("too_many_pings"));
      // Go closes the connection after the GOAWAY (closeConn): every call on it fails.
      setImmediate(() => session.destroy());
    }
  });
}
