// The Talos machine API transport: one mTLS channel per talosconfig endpoint (certificate checks for IP endpoints),
// the `node` header, per-call deadlines, failover between endpoints (a call resent only when it is idempotent or was
// never sent), and grpc-js errors mapped to TalosError (with a TLS probe telling a refused certificate from an
// endpoint that is down); calls capture no caller stack (callerStack.ts). The named calls (Version, Upgrade, Reboot,
// etcd, COSI…) are in client.ts.
import * as net from "node:net";
import * as tls from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { whenAborted } from "../abort";
import { withoutCallerStack } from "../callerStack";
import { classify, TalosError } from "./errors";
import { msg } from "./messages";
import { wire } from "./proto";
import { Endpoint, TalosConfig } from "./talosconfig";
import { probeTls, ProbeResult } from "./tlsprobe";

export interface TalosClientOptions {
  /** Deadline of unary calls and of short streams, default 30 s. */
  callTimeoutMs?: number;
  /** TLS server name to verify instead of the endpoint host (`grpc.ssl_target_name_override`). */
  serverName?: string;
  /** Extra grpc-js channel options (override the defaults). */
  channelOptions?: grpc.ChannelOptions;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * Channel options for nodes that reboot: fast reconnects, and keepalive pings within what apid accepts. apid runs
 * gRPC-Go's default enforcement (a client pinging more often than every 5 minutes while calls are active, or at all
 * without calls, gets GOAWAY too_many_pings, which fails every call on the connection), so pings are 6 minutes apart
 * and only during calls; a dead connection is found sooner by each call's own deadline.
 */
export const DEFAULT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.initial_reconnect_backoff_ms": 250,
  "grpc.max_reconnect_backoff_ms": 5000,
  "grpc.keepalive_time_ms": 6 * 60_000,
  "grpc.keepalive_timeout_ms": 20_000,
  "grpc.keepalive_permit_without_calls": 0,
  "grpc.max_receive_message_length": 32 * 1024 * 1024,
  "grpc.max_send_message_length": 32 * 1024 * 1024,
};

/**
 * A failed call's status reaches grpc-js' own listener with stack capture off: grpc-js makes its error there (two
 * `new Error`s, one stack read), and under Pulumi each stack is formatted through source-map-support — a rebooting
 * node's failed polls and every stream ended by a cancel did so thousands of times a rollout (~7 % of what the provider
 * allocated at 1,000 nodes, issue 23). The error keeps its code, details and message; only its frames, which name
 * grpc-js' internals, are gone. What runs inside with them off is grpc-js' listener and ours (unary's callback, a
 * stream's error handler), which only settle the call: the errors a user sees are made later, with frames.
 */
export const failuresWithoutStack: grpc.Interceptor = (options, nextCall) => new grpc.InterceptingCall(nextCall(options), {
  start(metadata, _listener, next) {
    next(metadata, {
      onReceiveStatus(status, nextStatus) {
        if (status.code === grpc.status.OK) nextStatus(status);
        else withoutCallerStack(() => nextStatus(status));
      },
    });
  },
});

interface Channel {
  client: grpc.Client;
  endpoint: Endpoint;
  /** Last TLS diagnosis of this endpoint (reused for 2 s, so a rebooting endpoint is not probed in a loop). */
  probe?: { at: number; result: Promise<ProbeResult> };
}

/** grpc-js' detail when it could not connect at all (the request was never sent). */
const NO_CONNECTION = /No connection established|Failed to connect/i;
/** grpc-js' details when the connection to the endpoint itself broke during a call (the request may have been processed). */
const CONNECTION_BROKE = /Connection dropped|RST_STREAM|ECONNRESET|Connection closed|GOAWAY|socket hang up|Stream refused|read ECONN/i;

/** How a failed call relates to the endpoint it was sent to. */
type EndpointFailure = "not-sent" | "dropped" | undefined;

/**
 * Classifies a grpc-js error as a failure of the endpoint connection (not an answer from a live endpoint). A deadline
 * that passed while the channel was not connected (an endpoint that takes no packets, e.g. powered off) counts as a
 * dropped connection: the call most likely never left, but that cannot be proven.
 */
function endpointFailure(err: unknown, ch?: Channel): EndpointFailure {
  const e = err as grpc.ServiceError | undefined;
  if (!e || typeof e.code !== "number") return undefined;
  const detail = e.details ?? e.message ?? "";
  if (e.code === grpc.status.UNAVAILABLE && NO_CONNECTION.test(detail)) return "not-sent";
  if (e.code === grpc.status.DEADLINE_EXCEEDED && ch && ch.client.getChannel().getConnectivityState(false) !== grpc.connectivityState.READY) {
    return "dropped";
  }
  if ((e.code === grpc.status.UNAVAILABLE || e.code === grpc.status.INTERNAL || e.code === grpc.status.CANCELLED) && CONNECTION_BROKE.test(detail)) {
    return "dropped";
  }
  // grpc-js' mapping of GOAWAY ENHANCE_YOUR_CALM (apid's too_many_pings): the connection was closed under the call
  if (e.code === grpc.status.RESOURCE_EXHAUSTED && /Bandwidth exhausted/i.test(detail)) return "dropped";
  // This client cancels calls only for its caller (reported as such, never classified here): any other CANCELLED is
  // the stream reset by an endpoint going away under the call.
  if (e.code === grpc.status.CANCELLED) return "dropped";
  return undefined;
}

/** TLS server name sent to IP endpoints (apid does not use SNI; the certificate is checked against the IP). */
const SNI_PLACEHOLDER = "talos-apid";

// grpc-js method definitions are untyped (built at run time from the .proto by proto-loader): the library boundary.
export type MethodDef = grpc.MethodDefinition<any, any>;

export interface Attempt {
  /** Whether the call may be sent again to another endpoint after the connection dropped mid-call. */
  idempotent: boolean;
}

export class TalosTransport {
  private readonly channels: Channel[];
  /** The endpoint calls go to first: the last one that answered (sticky), moved on when it fails. */
  private current = 0;
  private readonly timeoutMs: number;
  private readonly serverName?: string;

  constructor(readonly config: TalosConfig, opts: TalosClientOptions = {}) {
    this.timeoutMs = opts.callTimeoutMs ?? 30000;
    this.serverName = opts.serverName;
    this.channels = config.endpoints.map((endpoint) => {
      // An IP endpoint is verified against the certificate's IP SANs, as talosctl does; but a TLS server name (SNI)
      // may not be an IP (Node warns, DEP0123), so the SNI is a placeholder and the identity check names the IP.
      const ipEndpoint = !opts.serverName && net.isIP(endpoint.host) !== 0;
      let creds: grpc.ChannelCredentials;
      try {
        creds = grpc.credentials.createSsl(config.ca, config.key, config.crt, ipEndpoint
          ? { checkServerIdentity: (_sni: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(endpoint.host, cert) }
          : undefined);
      } catch (err) {
        throw new TalosError("CONFIG", msg.configBadCredentials(config.context, String((err as Error).message)));
      }
      const serverName = opts.serverName ?? (ipEndpoint ? SNI_PLACEHOLDER : undefined);
      const options: grpc.ChannelOptions = {
        ...DEFAULT_CHANNEL_OPTIONS,
        ...(serverName ? { "grpc.ssl_target_name_override": serverName } : {}),
        ...opts.channelOptions,
      };
      return { endpoint, client: new grpc.Client(endpoint.target, creds, { ...options, interceptors: [failuresWithoutStack] }) };
    });
  }

  /** The endpoint calls currently go to first ("host:port"). */
  get currentEndpoint(): string {
    return this.channels[this.current].endpoint.target;
  }

  /** Endpoint indexes in the order a call tries them: the current one first, then the others round the list. */
  private order(): number[] {
    const n = this.channels.length;
    const start = this.current;
    return Array.from({ length: n }, (_, i) => (start + i) % n);
  }

  /**
   * Classifies a failed call. When grpc-js could not connect without saying why, a TLS probe of the endpoint tells a
   * rejected/unverifiable certificate (permanent) from an unreachable endpoint (retryable).
   */
  private async explain(err: unknown, ch: Channel, node: string, op: string): Promise<TalosError> {
    const e = classify(err, node, op);
    if (e.code !== "UNAVAILABLE" || !NO_CONNECTION.test(e.message)) return e;
    const r = await this.probe(ch);
    if (r.kind !== "certificate") return e;
    return new TalosError("CERTIFICATE", msg.certificate(node, op, `endpoint ${ch.endpoint.target}: ${r.detail}`), node, grpc.status.UNAVAILABLE);
  }

  private probe(ch: Channel): Promise<ProbeResult> {
    if (!ch.probe || Date.now() - ch.probe.at > 2000) {
      ch.probe = {
        at: Date.now(),
        result: probeTls(ch.endpoint, { ca: this.config.ca, cert: this.config.crt, key: this.config.key, serverName: this.serverName }),
      };
    }
    return ch.probe.result;
  }

  /**
   * The error of a call that failed on every endpoint it tried. A certificate problem is reported only when no
   * endpoint was merely unreachable (an endpoint rebooting is a reason to wait, not to stop).
   */
  private async explainAll(failures: { err: unknown; ch: Channel }[], node: string, op: string, maybeProcessed: boolean): Promise<TalosError> {
    const explained = await Promise.all(failures.map((f) => this.explain(f.err, f.ch, node, op)));
    const reachable = explained.find((e) => e.code !== "CERTIFICATE");
    const chosen = reachable ?? explained[explained.length - 1];
    const delivery = { maybeProcessed, unsent: !maybeProcessed };
    if (chosen.code !== "UNAVAILABLE" || failures.length < 2) return chosen.with(delivery);
    const detail = failures.map((f, i) => `${f.ch.endpoint.target}: ${explained[i].detail ?? explained[i].message}`).join("; ");
    return new TalosError("UNAVAILABLE", msg.unavailable(node, op, msg.noEndpoint(detail)), node, grpc.status.UNAVAILABLE, { detail, ...delivery });
  }

  /**
   * Runs `attempt` on the endpoints in order until one answers. A call that could not reach an endpoint (no
   * connection, TLS refused) goes to the next one; a call whose connection dropped mid-way goes to the next one only
   * if it is idempotent — otherwise the error says it may have been processed. Errors answered by a live endpoint
   * (including a proxied "target unreachable") are returned as they are. The endpoint that answered becomes current.
   */
  private async failover<T>(node: string, op: string, a: Attempt, attempt: (ch: Channel) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const failures: { err: unknown; ch: Channel }[] = [];
    let maybeProcessed = false;
    for (const idx of this.order()) {
      const ch = this.channels[idx];
      try {
        const res = await attempt(ch);
        this.current = idx;
        return res;
      } catch (err) {
        if (signal?.aborted) throw new TalosError("ABORTED", msg.aborted(node), node);
        const f = endpointFailure(err, ch);
        if (f === undefined) throw await this.explain(err, ch, node, op);
        failures.push({ err, ch });
        if (this.current === idx) this.current = (idx + 1) % this.channels.length;
        if (f === "dropped") {
          maybeProcessed = true;
          if (!a.idempotent) break;
        }
      }
    }
    throw await this.explainAll(failures, node, op, maybeProcessed);
  }

  method(service: "MachineService" | "ImageService" | "LifecycleService" | "State", name: string): MethodDef {
    return (wire()[service] as Record<string, MethodDef>)[name];
  }

  private meta(node: string): grpc.Metadata {
    const md = new grpc.Metadata();
    md.set("node", node);
    return md;
  }

  private deadline(opts?: CallOptions): Date {
    return new Date(Date.now() + (opts?.timeoutMs ?? this.timeoutMs));
  }

  unary<Req, Res>(node: string, op: string, m: MethodDef, req: Req, a: Attempt, opts?: CallOptions): Promise<Res> {
    if (opts?.signal?.aborted) return Promise.reject(new TalosError("ABORTED", msg.aborted(node), node));
    // Each endpoint tried gets the whole timeout: one that takes no packets must not eat the next one's time.
    return this.failover(node, op, a, (ch) => new Promise<Res>((resolve, reject) => {
      const call = withoutCallerStack(() => ch.client.makeUnaryRequest(m.path, m.requestSerialize, m.responseDeserialize, req, this.meta(node),
        { deadline: this.deadline(opts) }, (err, res) => {
          opts?.signal?.removeEventListener("abort", onAbort);
          if (err) reject(err);
          else resolve(res as Res);
        }));
      const onAbort = () => call.cancel();
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
    }), opts?.signal);
  }

  /**
   * Opens a server stream on the first endpoint that takes it: a stream that fails before its first message
   * because its endpoint is unreachable (or, when idempotent, dropped) is opened again on the next endpoint.
   * `onMessage` sees each message; the promise settles when the stream ends (or fails, classified).
   */
  serverStream<Req, Res>(node: string, op: string, m: MethodDef, req: Req, a: Attempt,
    o: { timeoutMs?: number; signal?: AbortSignal; onMessage: (r: Res) => void; onOpen?: (cancel: () => void) => void }): Promise<void> {
    return this.failover(node, op, a, (ch) => new Promise<void>((resolve, reject) => {
      const call = withoutCallerStack(() => ch.client.makeServerStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, req, this.meta(node),
        o.timeoutMs !== undefined ? { deadline: new Date(Date.now() + o.timeoutMs) } : {}));
      let cancelled = false;
      const cancel = () => {
        cancelled = true;
        call.cancel();
      };
      const forget = whenAborted(o.signal, cancel); // at once for a signal that aborted before the stream opened
      o.onOpen?.(cancel);
      let received = false, failed = false;
      call.on("data", (r: Res) => {
        received = true;
        o.onMessage(r);
      });
      call.on("error", (err: grpc.ServiceError) => {
        failed = true;
        forget();
        if (cancelled) return reject(new TalosError("CANCELLED", msg.cancelled(node, op), node, grpc.status.CANCELLED));
        // Once data has flowed the stream is not restarted elsewhere: its caller has seen part of it.
        if (received && endpointFailure(err, ch) !== undefined) reject(Object.assign(new Error(err.message), { code: err.code, details: err.details, afterData: true }));
        else reject(err);
      });
      call.on("end", () => {
        forget();
        if (!failed) resolve();
      });
    }).catch((err) => {
      // A stream that broke after data is the caller's failure, not a reason to try another endpoint.
      if ((err as { afterData?: boolean }).afterData) throw classify(err, node, op);
      throw err;
    }), o.signal);
  }

  /** Collects a whole server stream (`onMessage` sees each message as it arrives). */
  async collect<Req, Res>(node: string, op: string, m: MethodDef, req: Req, a: Attempt, opts?: CallOptions & { onMessage?: (r: Res) => void }): Promise<Res[]> {
    if (opts?.signal?.aborted) throw new TalosError("ABORTED", msg.aborted(node), node);
    const out: Res[] = [];
    await this.serverStream<Req, Res>(node, op, m, req, a, {
      timeoutMs: opts?.timeoutMs ?? this.timeoutMs,
      signal: opts?.signal,
      onMessage: (r) => {
        out.push(r);
        opts?.onMessage?.(r);
      },
    });
    return out;
  }

  close(): void {
    for (const c of this.channels) c.client.close();
  }
}
