// Low-level Talos machine API client: one mTLS channel per talosconfig endpoint, with failover between them, the
// `node` header on every call, and typed wrappers for Version, Upgrade (legacy), Reboot, Events, Read, the etcd
// calls, ImageService.Pull, LifecycleService.Upgrade and the COSI resource API (State Get/List).
import * as net from "node:net";
import * as tls from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { classify, TalosError } from "./errors";
import { msg } from "./messages";
import { DecodedPayload, unpackEvent, wire } from "./proto";
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

export interface VersionInfo {
  tag: string;
  sha: string;
  built: string;
  goVersion: string;
  os: string;
  arch: string;
  platform: { name: string; mode: string };
}

export interface LegacyUpgradeRequest {
  image: string;
  preserve: boolean;
  stage: boolean;
  force: boolean;
  /** 0 DEFAULT, 1 POWERCYCLE */
  rebootMode?: 0 | 1;
}

export interface TalosEvent {
  id: string;
  actorId: string;
  /** Payload name without package, e.g. "SequenceEvent"; "" for the hello event. */
  type: string;
  payload: Record<string, any>;
}

export interface EventsRequest {
  tailEvents?: number;
  tailId?: string;
  tailSeconds?: number;
  withActorId?: string;
}

/** An open Events stream: iterate it; `cancel()` ends it. */
export interface EventStream extends AsyncIterable<TalosEvent> {
  cancel(): void;
}

/** One etcd member as EtcdMemberList reports it; ids in Talos' `%016x` form. */
export interface EtcdMemberInfo {
  id: string;
  /** Member name (the node's hostname); "" for a member that never started. */
  name: string;
  peerUrls: string[];
  clientUrls: string[];
  learner: boolean;
}

/** EtcdStatus of the member on one control-plane node. */
export interface EtcdMemberStatusInfo {
  memberId: string;
  /** The leader's member id as this member sees it; "" when it knows no leader. */
  leaderId: string;
  raftIndex: string;
  raftTerm: string;
  /** etcd's own errors (e.g. "etcdserver: no leader", alarms). */
  errors: string[];
  learner: boolean;
  protocolVersion: string;
}

/** A COSI resource as Talos serves it: metadata and the protobuf-encoded spec (plus its YAML form). */
export interface TalosResource {
  namespace: string;
  type: string;
  id: string;
  version: string;
  phase: string;
  protoSpec: Buffer;
  yamlSpec: string;
}

export const BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id";

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

type MethodDef = grpc.MethodDefinition<any, any>;

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

/** uint64 (decimal string on the wire with `longs: String`) in Talos' `%016x` member-id form; "" for 0. */
const memberId = (v: string | number | undefined): string => {
  const n = BigInt(v ?? 0);
  return n === 0n ? "" : n.toString(16).padStart(16, "0");
};

interface Attempt {
  /** Whether the call may be sent again to another endpoint after the connection dropped mid-call. */
  idempotent: boolean;
}

export class TalosClient {
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
      return { endpoint, client: new grpc.Client(endpoint.target, creds, options) };
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

  private method(service: "MachineService" | "ImageService" | "LifecycleService" | "State", name: string): MethodDef {
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

  private unary<Req, Res>(node: string, op: string, m: MethodDef, req: Req, a: Attempt, opts?: CallOptions): Promise<Res> {
    if (opts?.signal?.aborted) return Promise.reject(new TalosError("ABORTED", msg.aborted(node), node));
    // Each endpoint tried gets the whole timeout: one that takes no packets must not eat the next one's time.
    return this.failover(node, op, a, (ch) => new Promise<Res>((resolve, reject) => {
      const call = ch.client.makeUnaryRequest(m.path, m.requestSerialize, m.responseDeserialize, req, this.meta(node), { deadline: this.deadline(opts) },
        (err, res) => {
          opts?.signal?.removeEventListener("abort", onAbort);
          if (err) reject(err);
          else resolve(res as Res);
        });
      const onAbort = () => call.cancel();
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
    }), opts?.signal);
  }

  /**
   * Opens a server stream on the first endpoint that takes it: a stream that fails before its first message
   * because its endpoint is unreachable (or, when idempotent, dropped) is opened again on the next endpoint.
   * `onMessage` sees each message; the promise settles when the stream ends (or fails, classified).
   */
  private serverStream<Req, Res>(node: string, op: string, m: MethodDef, req: Req, a: Attempt,
    o: { timeoutMs?: number; signal?: AbortSignal; onMessage: (r: Res) => void; onOpen?: (cancel: () => void) => void }): Promise<void> {
    return this.failover(node, op, a, (ch) => new Promise<void>((resolve, reject) => {
      const call = ch.client.makeServerStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, req, this.meta(node),
        o.timeoutMs !== undefined ? { deadline: new Date(Date.now() + o.timeoutMs) } : {});
      let cancelled = false;
      const cancel = () => {
        cancelled = true;
        call.cancel();
      };
      const onAbort = cancel;
      o.signal?.addEventListener("abort", onAbort, { once: true });
      o.onOpen?.(cancel);
      let received = false, failed = false;
      call.on("data", (r: Res) => {
        received = true;
        o.onMessage(r);
      });
      call.on("error", (err: grpc.ServiceError) => {
        failed = true;
        o.signal?.removeEventListener("abort", onAbort);
        if (cancelled) return reject(new TalosError("CANCELLED", msg.cancelled(node, op), node, grpc.status.CANCELLED));
        // Once data has flowed the stream is not restarted elsewhere: its caller has seen part of it.
        if (received && endpointFailure(err, ch) !== undefined) reject(Object.assign(new Error(err.message), { code: err.code, details: err.details, afterData: true }));
        else reject(err);
      });
      call.on("end", () => {
        o.signal?.removeEventListener("abort", onAbort);
        if (!failed) resolve();
      });
    }).catch((err) => {
      // A stream that broke after data is the caller's failure, not a reason to try another endpoint.
      if ((err as { afterData?: boolean }).afterData) throw classify(err, node, op);
      throw err;
    }), o.signal);
  }

  /** Collects a whole server stream (`onMessage` sees each message as it arrives). */
  private async collect<Req, Res>(node: string, op: string, m: MethodDef, req: Req, a: Attempt, opts?: CallOptions & { onMessage?: (r: Res) => void }): Promise<Res[]> {
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

  async version(node: string, opts?: CallOptions): Promise<VersionInfo> {
    const res = await this.unary<object, any>(node, "Version", this.method("MachineService", "Version"), {}, { idempotent: true }, opts);
    const m = res?.messages?.[0];
    if (!m?.version) throw new TalosError("STREAM_ENDED", msg.streamEnded(node, "Version"), node);
    const v = m.version;
    return {
      tag: v.tag, sha: v.sha, built: v.built, goVersion: v.go_version, os: v.os, arch: v.arch,
      platform: { name: m.platform?.name ?? "", mode: m.platform?.mode ?? "" },
    };
  }

  /**
   * Legacy MachineService.Upgrade; resolves with the ack and the actor id of the upgrade sequence. Never sent twice:
   * if the connection drops before the answer, the error is marked `maybeProcessed` (the upgrade may be running).
   */
  async upgrade(node: string, req: LegacyUpgradeRequest, opts?: CallOptions): Promise<{ ack: string; actorId: string }> {
    const res = await this.unary<object, any>(node, "upgrade", this.method("MachineService", "Upgrade"), {
      image: req.image, preserve: req.preserve, stage: req.stage, force: req.force, reboot_mode: req.rebootMode ?? 0,
    }, { idempotent: false }, opts);
    const m = res?.messages?.[0] ?? {};
    return { ack: m.ack ?? "", actorId: m.actor_id ?? "" };
  }

  /** MachineService.Reboot; mode 0 DEFAULT, 1 POWERCYCLE, 2 FORCE. Never sent twice (see `upgrade`). */
  async reboot(node: string, mode: 0 | 1 | 2 = 0, opts?: CallOptions): Promise<{ actorId: string }> {
    const res = await this.unary<object, any>(node, "reboot", this.method("MachineService", "Reboot"), { mode }, { idempotent: false }, opts);
    return { actorId: res?.messages?.[0]?.actor_id ?? "" };
  }

  /** MachineService.Read of a whole file. */
  async read(node: string, path: string, opts?: CallOptions): Promise<Buffer> {
    const chunks = await this.collect<object, any>(node, `read ${path}`, this.method("MachineService", "Read"), { path }, { idempotent: true }, opts);
    return Buffer.concat(chunks.map((c) => Buffer.from(c.bytes ?? [])));
  }

  async bootId(node: string, opts?: CallOptions): Promise<string> {
    const id = (await this.read(node, BOOT_ID_PATH, opts)).toString("utf8").trim();
    if (!id) throw new TalosError("STREAM_ENDED", msg.streamEnded(node, "read boot id"), node);
    return id;
  }

  /** ImageService.Pull into the system containerd (as talosctl upgrade does); resolves with the digest-pinned name. */
  async pull(node: string, imageRef: string, opts?: CallOptions & { onProgress?: (p: any) => void }): Promise<string> {
    let name: string | undefined;
    await this.collect<object, any>(node, `pull ${imageRef}`, this.method("ImageService", "Pull"), {
      containerd: { driver: 1, namespace: 1 }, image_ref: imageRef,
    }, { idempotent: true }, {
      ...opts,
      onMessage: (r) => {
        if (r.response === "name") name = r.name;
        else if (r.pull_progress) opts?.onProgress?.(r.pull_progress);
      },
    });
    if (!name) throw new TalosError("STREAM_ENDED", msg.streamEnded(node, `pull ${imageRef}`), node);
    return name;
  }

  /** LifecycleService.Upgrade (install only, no reboot); resolves with the installer's exit code and output. */
  async lifecycleUpgrade(node: string, imageName: string, opts?: CallOptions & { onMessage?: (line: string) => void }): Promise<{ exitCode: number; log: string[] }> {
    const log: string[] = [];
    let exitCode: number | undefined;
    await this.collect<object, any>(node, "install", this.method("LifecycleService", "Upgrade"), {
      containerd: { driver: 1, namespace: 1 }, source: { image_name: imageName },
    }, { idempotent: false }, {
      ...opts,
      onMessage: (r) => {
        const p = r.progress;
        if (p?.response === "exit_code") exitCode = p.exit_code;
        else if (p?.response === "message") {
          log.push(p.message);
          opts?.onMessage?.(p.message);
        }
      },
    });
    if (exitCode === undefined) throw new TalosError("STREAM_ENDED", msg.streamEnded(node, "install"), node);
    return { exitCode, log };
  }

  /** EtcdMemberList through control-plane `node` (the whole cluster's members, as etcd reports them). */
  async etcdMemberList(node: string, opts?: CallOptions): Promise<EtcdMemberInfo[]> {
    const res = await this.unary<object, any>(node, "etcd member list", this.method("MachineService", "EtcdMemberList"), { query_local: false }, { idempotent: true }, opts);
    const members: any[] = res?.messages?.[0]?.members ?? [];
    return members.map((m) => ({
      id: memberId(m.id), name: m.hostname ?? "", peerUrls: m.peer_urls ?? [], clientUrls: m.client_urls ?? [], learner: !!m.is_learner,
    }));
  }

  /** EtcdStatus of the member running on control-plane `node`. */
  async etcdStatus(node: string, opts?: CallOptions): Promise<EtcdMemberStatusInfo> {
    const res = await this.unary<object, any>(node, "etcd status", this.method("MachineService", "EtcdStatus"), {}, { idempotent: true }, opts);
    const s = res?.messages?.[0]?.member_status;
    if (!s) throw new TalosError("STREAM_ENDED", msg.streamEnded(node, "etcd status"), node);
    return {
      memberId: memberId(s.member_id), leaderId: memberId(s.leader), raftIndex: String(s.raft_index ?? "0"), raftTerm: String(s.raft_term ?? "0"),
      errors: s.errors ?? [], learner: !!s.is_learner, protocolVersion: s.protocol_version ?? "",
    };
  }

  /** EtcdForfeitLeadership on control-plane `node`: the new leader's member name, or "" if `node` was not the leader. */
  async etcdForfeitLeadership(node: string, opts?: CallOptions): Promise<string> {
    const res = await this.unary<object, any>(node, "etcd forfeit leadership", this.method("MachineService", "EtcdForfeitLeadership"), {}, { idempotent: false }, opts);
    return res?.messages?.[0]?.member ?? "";
  }

  /** COSI State.List: every resource of `type` in `namespace` on `node`. */
  async listResources(node: string, namespace: string, type: string, opts?: CallOptions): Promise<TalosResource[]> {
    const items = await this.collect<object, any>(node, `list ${type}`, this.method("State", "List"), { namespace, type }, { idempotent: true }, opts);
    return items.map((r) => toResource(r.resource));
  }

  /** COSI State.Get of one resource (NOT_FOUND if it does not exist). */
  async getResource(node: string, namespace: string, type: string, id: string, opts?: CallOptions): Promise<TalosResource> {
    const res = await this.unary<object, any>(node, `get ${type}/${id}`, this.method("State", "Get"), { namespace, type, id }, { idempotent: true }, opts);
    return toResource(res?.resource);
  }

  /** MachineService.Events; the hello event is delivered too (type ""), so callers know the stream is live. */
  events(node: string, req: EventsRequest = {}, opts: { signal?: AbortSignal } = {}): EventStream {
    const m = this.method("MachineService", "Events");
    const queue: TalosEvent[] = [];
    let done = false, failure: TalosError | undefined, cancelled = false;
    let cancelCall: (() => void) | undefined;
    let wake: (() => void) | undefined;
    const notify = () => { const w = wake; wake = undefined; w?.(); };
    const cancel = () => {
      cancelled = true;
      if (!done) cancelCall?.();
    };
    opts.signal?.addEventListener("abort", cancel, { once: true });
    this.serverStream<object, any>(node, "events", m, {
      tail_events: req.tailEvents ?? 0, tail_id: req.tailId ?? "", tail_seconds: req.tailSeconds ?? 0, with_actor_id: req.withActorId ?? "",
    }, { idempotent: true }, {
      signal: opts.signal,
      onOpen: (c) => {
        cancelCall = c;
        if (cancelled) c();
      },
      onMessage: (e) => {
        const decoded: DecodedPayload | undefined = unpackEvent(e.data);
        queue.push({ id: e.id, actorId: e.actor_id, type: decoded?.name ?? "", payload: decoded?.payload ?? {} });
        notify();
      },
    }).then(() => undefined, (err: TalosError) => {
      if (!cancelled && err.code !== "CANCELLED" && err.code !== "ABORTED") failure = err;
    }).finally(() => {
      done = true;
      notify();
    });
    return {
      cancel,
      async *[Symbol.asyncIterator]() {
        try {
          for (;;) {
            if (queue.length) { yield queue.shift()!; continue; }
            if (done) {
              if (failure) throw failure;
              return;
            }
            await new Promise<void>((r) => (wake = r));
          }
        } finally {
          opts.signal?.removeEventListener("abort", cancel);
          cancel();
        }
      },
    };
  }

  close(): void {
    for (const c of this.channels) c.client.close();
  }
}

function toResource(r: any): TalosResource {
  const md = r?.metadata ?? {};
  return {
    namespace: md.namespace ?? "", type: md.type ?? "", id: md.id ?? "", version: md.version ?? "", phase: md.phase ?? "",
    protoSpec: Buffer.from(r?.spec?.proto_spec ?? []), yamlSpec: r?.spec?.yaml_spec ?? "",
  };
}
