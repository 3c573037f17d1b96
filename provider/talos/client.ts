// Low-level Talos machine API client: one mTLS channel per endpoint, the `node` header on every call, and typed
// wrappers for Version, Upgrade (legacy), Reboot, Events, Read, ImageService.Pull and LifecycleService.Upgrade.
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

export const BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id";

/** Channel options for nodes that reboot: fast reconnects, modest keepalive (apid enforces gRPC-Go's defaults). */
export const DEFAULT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.initial_reconnect_backoff_ms": 250,
  "grpc.max_reconnect_backoff_ms": 5000,
  "grpc.keepalive_time_ms": 30000,
  "grpc.keepalive_timeout_ms": 10000,
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

/** grpc-js' detail when it could not connect at all, without saying why. */
const NO_CONNECTION = /No connection established|Failed to connect/i;

/** TLS server name sent to IP endpoints (apid does not use SNI; the certificate is checked against the IP). */
const SNI_PLACEHOLDER = "talos-apid";

export class TalosClient {
  private readonly channels: Channel[];
  private next = 0;
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

  /** Round-robin over the endpoints, like the Go client. */
  private pick(): Channel {
    const c = this.channels[this.next % this.channels.length];
    this.next++;
    return c;
  }

  /**
   * Classifies a failed call. When grpc-js could not connect without saying why, a TLS probe of the endpoint tells a
   * rejected/unverifiable certificate (permanent) from an unreachable endpoint (retryable).
   */
  private async explain(err: unknown, ch: Channel, node: string, op: string): Promise<TalosError> {
    const e = classify(err, node, op);
    if (e.code !== "UNAVAILABLE" || !NO_CONNECTION.test(e.message)) return e;
    if (!ch.probe || Date.now() - ch.probe.at > 2000) {
      ch.probe = {
        at: Date.now(),
        result: probeTls(ch.endpoint, { ca: this.config.ca, cert: this.config.crt, key: this.config.key, serverName: this.serverName }),
      };
    }
    const r = await ch.probe.result;
    if (r.kind !== "certificate") return e;
    return new TalosError("CERTIFICATE", msg.certificate(node, op, `endpoint ${ch.endpoint.target}: ${r.detail}`), node, grpc.status.UNAVAILABLE);
  }

  private method(service: "MachineService" | "ImageService" | "LifecycleService", name: string): MethodDef {
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

  private unary<Req, Res>(node: string, op: string, m: MethodDef, req: Req, opts?: CallOptions): Promise<Res> {
    return new Promise((resolve, reject) => {
      if (opts?.signal?.aborted) return reject(new TalosError("ABORTED", msg.aborted(node), node));
      const ch = this.pick();
      const call = ch.client.makeUnaryRequest(
        m.path, m.requestSerialize, m.responseDeserialize, req, this.meta(node), { deadline: this.deadline(opts) },
        (err, res) => {
          opts?.signal?.removeEventListener("abort", onAbort);
          if (err && opts?.signal?.aborted) reject(new TalosError("ABORTED", msg.aborted(node), node));
          else if (err) this.explain(err, ch, node, op).then(reject);
          else resolve(res as Res);
        },
      );
      const onAbort = () => call.cancel();
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Collects a whole server stream (`onMessage` sees each message as it arrives). */
  private collect<Req, Res>(node: string, op: string, m: MethodDef, req: Req, opts?: CallOptions & { onMessage?: (r: Res) => void }): Promise<Res[]> {
    return new Promise((resolve, reject) => {
      if (opts?.signal?.aborted) return reject(new TalosError("ABORTED", msg.aborted(node), node));
      const out: Res[] = [];
      const ch = this.pick();
      const call = ch.client.makeServerStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, req, this.meta(node), {
        deadline: this.deadline(opts),
      });
      const onAbort = () => call.cancel();
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
      let failed = false;
      call.on("data", (r: Res) => {
        out.push(r);
        opts?.onMessage?.(r);
      });
      call.on("error", (err) => {
        failed = true;
        opts?.signal?.removeEventListener("abort", onAbort);
        if (opts?.signal?.aborted) reject(new TalosError("ABORTED", msg.aborted(node), node));
        else this.explain(err, ch, node, op).then(reject);
      });
      call.on("end", () => {
        opts?.signal?.removeEventListener("abort", onAbort);
        if (!failed) resolve(out);
      });
    });
  }

  async version(node: string, opts?: CallOptions): Promise<VersionInfo> {
    const res = await this.unary<object, any>(node, "Version", this.method("MachineService", "Version"), {}, opts);
    const m = res?.messages?.[0];
    if (!m?.version) throw new TalosError("STREAM_ENDED", msg.streamEnded(node, "Version"), node);
    const v = m.version;
    return {
      tag: v.tag, sha: v.sha, built: v.built, goVersion: v.go_version, os: v.os, arch: v.arch,
      platform: { name: m.platform?.name ?? "", mode: m.platform?.mode ?? "" },
    };
  }

  /** Legacy MachineService.Upgrade; resolves with the ack and the actor id of the upgrade sequence. */
  async upgrade(node: string, req: LegacyUpgradeRequest, opts?: CallOptions): Promise<{ ack: string; actorId: string }> {
    const res = await this.unary<object, any>(node, "upgrade", this.method("MachineService", "Upgrade"), {
      image: req.image, preserve: req.preserve, stage: req.stage, force: req.force, reboot_mode: req.rebootMode ?? 0,
    }, opts);
    const m = res?.messages?.[0] ?? {};
    return { ack: m.ack ?? "", actorId: m.actor_id ?? "" };
  }

  /** MachineService.Reboot; mode 0 DEFAULT, 1 POWERCYCLE, 2 FORCE. */
  async reboot(node: string, mode: 0 | 1 | 2 = 0, opts?: CallOptions): Promise<{ actorId: string }> {
    const res = await this.unary<object, any>(node, "reboot", this.method("MachineService", "Reboot"), { mode }, opts);
    return { actorId: res?.messages?.[0]?.actor_id ?? "" };
  }

  /** MachineService.Read of a whole file. */
  async read(node: string, path: string, opts?: CallOptions): Promise<Buffer> {
    const chunks = await this.collect<object, any>(node, `read ${path}`, this.method("MachineService", "Read"), { path }, opts);
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
    }, {
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
    }, {
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

  /** MachineService.Events; the hello event is delivered too (type ""), so callers know the stream is live. */
  events(node: string, req: EventsRequest = {}, opts: { signal?: AbortSignal } = {}): EventStream {
    const m = this.method("MachineService", "Events");
    const call = this.pick().client.makeServerStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, {
      tail_events: req.tailEvents ?? 0, tail_id: req.tailId ?? "", tail_seconds: req.tailSeconds ?? 0, with_actor_id: req.withActorId ?? "",
    }, this.meta(node), {});
    const queue: TalosEvent[] = [];
    let done = false, failure: TalosError | undefined;
    let wake: (() => void) | undefined;
    const notify = () => { const w = wake; wake = undefined; w?.(); };
    const cancel = () => { if (!done) call.cancel(); };
    opts.signal?.addEventListener("abort", cancel, { once: true });
    call.on("data", (e: any) => {
      const decoded: DecodedPayload | undefined = unpackEvent(e.data);
      queue.push({ id: e.id, actorId: e.actor_id, type: decoded?.name ?? "", payload: decoded?.payload ?? {} });
      notify();
    });
    call.on("error", (err) => {
      done = true;
      if ((err as grpc.ServiceError).code !== grpc.status.CANCELLED) failure = classify(err, node, "events");
      notify();
    });
    call.on("end", () => { done = true; notify(); });
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
