// The Talos machine API's named calls, typed: Version, Upgrade (legacy), Reboot, Events, Read, the etcd calls,
// ImageService.Pull, LifecycleService.Upgrade and the COSI resource API (State Get/List). The connection, TLS,
// deadlines, failover and error mapping are the transport's (transport.ts).
import { whenAborted } from "../abort";
import { TalosError } from "./errors";
import { msg } from "./messages";
import { DecodedPayload, unpackEvent } from "./proto";
import { TalosConfig } from "./talosconfig";
import { TalosTransport, type CallOptions, type TalosClientOptions } from "./transport";

export { DEFAULT_CHANNEL_OPTIONS, type CallOptions, type TalosClientOptions } from "./transport";

// A decoded gRPC reply (proto-loader: snake_case fields, uint64 as strings): its shape is the .proto's, unchecked by
// tsc; each call below reads it into a typed result.
type Reply = any;

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
  payload: Record<string, Reply>;
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

/** ApplyConfigurationRequest.Mode (api/machine/machine.proto): 0 REBOOT (deprecated), 1 AUTO, 2 NO_REBOOT, 3 STAGED, 4 TRY. */
export type ApplyConfigurationMode = 0 | 1 | 2 | 3 | 4;
export const APPLY_MODE = { REBOOT: 0, AUTO: 1, NO_REBOOT: 2, STAGED: 3, TRY: 4 } as const satisfies Record<string, ApplyConfigurationMode>;

export interface ApplyConfigurationRequest {
  /** The whole machine configuration, every document (a secret). */
  data: string;
  mode: ApplyConfigurationMode;
  dryRun?: boolean;
}

/** What ApplyConfiguration answered: the mode Talos chose, its explanation and validation warnings. */
export interface ApplyConfigurationResult {
  mode: number;
  modeDetails: string;
  warnings: string[];
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

/** uint64 (decimal string on the wire with `longs: String`) in Talos' `%016x` member-id form; "" for 0. */
const memberId = (v: string | number | undefined): string => {
  const n = BigInt(v ?? 0);
  return n === 0n ? "" : n.toString(16).padStart(16, "0");
};

export class TalosClient {
  private readonly transport: TalosTransport;

  constructor(readonly config: TalosConfig, opts: TalosClientOptions = {}) {
    this.transport = new TalosTransport(config, opts);
  }

  /** The endpoint calls currently go to first ("host:port"). */
  get currentEndpoint(): string {
    return this.transport.currentEndpoint;
  }

  async version(node: string, opts?: CallOptions): Promise<VersionInfo> {
    const res = await this.transport.unary<object, Reply>(node, "Version", this.transport.method("MachineService", "Version"), {}, { idempotent: true }, opts);
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
    const res = await this.transport.unary<object, Reply>(node, "upgrade", this.transport.method("MachineService", "Upgrade"), {
      image: req.image, preserve: req.preserve, stage: req.stage, force: req.force, reboot_mode: req.rebootMode ?? 0,
    }, { idempotent: false }, opts);
    const m = res?.messages?.[0] ?? {};
    return { ack: m.ack ?? "", actorId: m.actor_id ?? "" };
  }

  /** MachineService.Reboot; mode 0 DEFAULT, 1 POWERCYCLE, 2 FORCE. Never sent twice (see `upgrade`). */
  async reboot(node: string, mode: 0 | 1 | 2 = 0, opts?: CallOptions): Promise<{ actorId: string }> {
    const res = await this.transport.unary<object, Reply>(node, "reboot", this.transport.method("MachineService", "Reboot"), { mode }, { idempotent: false }, opts);
    return { actorId: res?.messages?.[0]?.actor_id ?? "" };
  }

  /** MachineService.Read of a whole file. */
  async read(node: string, path: string, opts?: CallOptions): Promise<Buffer> {
    const chunks = await this.transport.collect<object, Reply>(node, `read ${path}`, this.transport.method("MachineService", "Read"), { path }, { idempotent: true }, opts);
    return Buffer.concat(chunks.map((c) => Buffer.from(c.bytes ?? [])));
  }

  async bootId(node: string, opts?: CallOptions): Promise<string> {
    const id = (await this.read(node, BOOT_ID_PATH, opts)).toString("utf8").trim();
    if (!id) throw new TalosError("STREAM_ENDED", msg.streamEnded(node, "read boot id"), node);
    return id;
  }

  /** ImageService.Pull into the system containerd (as talosctl upgrade does); resolves with the digest-pinned name. */
  async pull(node: string, imageRef: string, opts?: CallOptions & { onProgress?: (p: Reply) => void }): Promise<string> {
    let name: string | undefined;
    await this.transport.collect<object, Reply>(node, `pull ${imageRef}`, this.transport.method("ImageService", "Pull"), {
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
    await this.transport.collect<object, Reply>(node, "install", this.transport.method("LifecycleService", "Upgrade"), {
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
    const res = await this.transport.unary<object, Reply>(node, "etcd member list", this.transport.method("MachineService", "EtcdMemberList"), { query_local: false }, { idempotent: true }, opts);
    const members: Reply[] = res?.messages?.[0]?.members ?? [];
    return members.map((m) => ({
      id: memberId(m.id), name: m.hostname ?? "", peerUrls: m.peer_urls ?? [], clientUrls: m.client_urls ?? [], learner: !!m.is_learner,
    }));
  }

  /** EtcdStatus of the member running on control-plane `node`. */
  async etcdStatus(node: string, opts?: CallOptions): Promise<EtcdMemberStatusInfo> {
    const res = await this.transport.unary<object, Reply>(node, "etcd status", this.transport.method("MachineService", "EtcdStatus"), {}, { idempotent: true }, opts);
    const s = res?.messages?.[0]?.member_status;
    if (!s) throw new TalosError("STREAM_ENDED", msg.streamEnded(node, "etcd status"), node);
    return {
      memberId: memberId(s.member_id), leaderId: memberId(s.leader), raftIndex: String(s.raft_index ?? "0"), raftTerm: String(s.raft_term ?? "0"),
      errors: s.errors ?? [], learner: !!s.is_learner, protocolVersion: s.protocol_version ?? "",
    };
  }

  /** EtcdForfeitLeadership on control-plane `node`: the new leader's member name, or "" if `node` was not the leader. */
  async etcdForfeitLeadership(node: string, opts?: CallOptions): Promise<string> {
    const res = await this.transport.unary<object, Reply>(node, "etcd forfeit leadership", this.transport.method("MachineService", "EtcdForfeitLeadership"), {}, { idempotent: false }, opts);
    return res?.messages?.[0]?.member ?? "";
  }

  /**
   * MachineService.ApplyConfiguration of a whole machine configuration (`data`, never logged). Sent again on another
   * endpoint after a dropped connection: applying the same configuration twice leaves the node as applying it once.
   */
  async applyConfiguration(node: string, req: ApplyConfigurationRequest, opts?: CallOptions): Promise<ApplyConfigurationResult> {
    const res = await this.transport.unary<object, Reply>(node, "apply configuration", this.transport.method("MachineService", "ApplyConfiguration"), {
      data: Buffer.from(req.data, "utf8"), mode: req.mode, dry_run: req.dryRun ?? false,
    }, { idempotent: true }, opts);
    const m = res?.messages?.[0];
    if (!m) throw new TalosError("STREAM_ENDED", msg.streamEnded(node, "apply configuration"), node);
    return { mode: m.mode ?? 0, modeDetails: m.mode_details ?? "", warnings: m.warnings ?? [] };
  }

  /** COSI State.List: every resource of `type` in `namespace` on `node`. */
  async listResources(node: string, namespace: string, type: string, opts?: CallOptions): Promise<TalosResource[]> {
    const items = await this.transport.collect<object, Reply>(node, `list ${type}`, this.transport.method("State", "List"), { namespace, type }, { idempotent: true }, opts);
    return items.map((r) => toResource(r.resource));
  }

  /** COSI State.Get of one resource (NOT_FOUND if it does not exist). */
  async getResource(node: string, namespace: string, type: string, id: string, opts?: CallOptions): Promise<TalosResource> {
    const res = await this.transport.unary<object, Reply>(node, `get ${type}/${id}`, this.transport.method("State", "Get"), { namespace, type, id }, { idempotent: true }, opts);
    return toResource(res?.resource);
  }

  /** MachineService.Events; the hello event is delivered too (type ""), so callers know the stream is live. */
  events(node: string, req: EventsRequest = {}, opts: { signal?: AbortSignal } = {}): EventStream {
    const m = this.transport.method("MachineService", "Events");
    const queue: TalosEvent[] = [];
    let done = false, failure: TalosError | undefined, cancelled = false;
    let cancelCall: (() => void) | undefined;
    let wake: (() => void) | undefined;
    const notify = () => { const w = wake; wake = undefined; w?.(); };
    const cancel = () => {
      cancelled = true;
      if (!done) cancelCall?.();
    };
    const forget = whenAborted(opts.signal, cancel);
    this.transport.serverStream<object, Reply>(node, "events", m, {
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
          forget();
          cancel();
        }
      },
    };
  }

  close(): void {
    this.transport.close();
  }
}

function toResource(r: Reply): TalosResource {
  const md = r?.metadata ?? {};
  return {
    namespace: md.namespace ?? "", type: md.type ?? "", id: md.id ?? "", version: md.version ?? "", phase: md.phase ?? "",
    protoSpec: Buffer.from(r?.spec?.proto_spec ?? []), yamlSpec: r?.spec?.yaml_spec ?? "",
  };
}
