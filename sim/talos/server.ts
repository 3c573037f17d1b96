// The services of a simulated apid endpoint: the Talos machine API (Version, Upgrade, Reboot, Read, Events, the etcd
// calls, ImageService, LifecycleService) and the COSI resource API (State Get/List), routing each call by its `node`
// header to an in-process SimNode (talos-api.md §6.5). Enforces roles from the client certificate's O= and EKU
// clientAuth (machined's authz table), and answers for a down node the way an endpoint apid does for an unreachable
// target.
import * as net from "node:net";
import type { PeerCertificate } from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { wire } from "../../provider/talos/proto";
import { xid } from "./events";
import { EventRecord, platformMode, RpcError, SimNode } from "./node";
import { getResource, listResources, MACHINE_CONFIG_TYPE } from "./resources";

export type Role = "os:admin" | "os:operator" | "os:reader";
const ADMIN: Role[] = ["os:admin"];
const OPERATOR: Role[] = ["os:admin", "os:operator"];
const READER: Role[] = ["os:admin", "os:operator", "os:reader"];
const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

export interface NodeDirectory {
  /** Node by address or name. */
  lookup(target: string): SimNode | undefined;
  /** The node that answers calls without a `node` header (the endpoint itself). */
  endpointNode(): SimNode | undefined;
}

/** Proxy error of an endpoint whose connection to the target broke before the answer (apid one-to-one proxy). */
const PROXY_EOF = "error reading from server: EOF";

type Call = grpc.ServerUnaryCall<any, any> | grpc.ServerWritableStream<any, any>;

const err = (code: grpc.status, details: string): Partial<grpc.StatusObject> => ({ code, details });

function roles(call: Call): string[] {
  const cert = call.getAuthContext()?.sslPeerCertificate as (PeerCertificate & { ext_key_usage?: string[] }) | undefined;
  if (!cert) return [];
  const eku = cert.ext_key_usage ?? [];
  if (eku.length !== 1 || eku[0] !== CLIENT_AUTH) return []; // apid accepts exactly [clientAuth]
  const o = (cert.subject as unknown as Record<string, string | string[]> | undefined)?.O;
  return o === undefined ? [] : Array.isArray(o) ? o : [o];
}

/** A call the endpoint never answers (fault `unresponsive`). */
const HANG = Symbol("hang");

/** Resolves the target node of a call, the error the endpoint returns, or HANG. */
function route(dir: NodeDirectory, call: Call, allowed: Role[]): SimNode | Partial<grpc.StatusObject> | typeof HANG {
  // several values may arrive as separate entries or joined with ", " (grpc-js joins repeated headers)
  const node = call.metadata.get("node").flatMap((v) => String(v).split(",")).map((v) => v.trim()).filter(Boolean);
  if (node.length > 1) return err(grpc.status.INVALID_ARGUMENT, "node metadata must be single-valued");
  if (call.metadata.get("nodes").length > 0) {
    return err(grpc.status.INVALID_ARGUMENT, "the simulated endpoint does not aggregate the deprecated 'nodes' header; send 'node' (one target per call)");
  }
  const have = roles(call);
  if (!allowed.some((r) => have.includes(r))) return err(grpc.status.PERMISSION_DENIED, "not authorized");
  const target = node.length ? String(node[0]) : undefined;
  const n = target === undefined ? dir.endpointNode() : dir.lookup(target);
  if (!n) {
    const dial = net.isIP(target ?? "") ? `dial tcp ${target}:50000: connect: no route to host` : `dial tcp: lookup ${target}: no such host`;
    return err(grpc.status.UNAVAILABLE, `connection error: desc = "transport: Error while dialing: ${dial}"`);
  }
  if (n.faults.unresponsive) return HANG;
  if (n.faults.certMismatch) {
    return err(grpc.status.UNAVAILABLE,
      'connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"');
  }
  if (!n.up) return n.faults.handshakeWhileDown ? err(grpc.status.UNAVAILABLE, HANDSHAKE_EOF) : refused(n);
  return n;
}

/** apid's proxy could not connect to the target node's apid (grpc-go's dial error, passed through). */
const refused = (n: SimNode) =>
  err(grpc.status.UNAVAILABLE, `connection error: desc = "transport: Error while dialing: dial tcp ${n.address}:50000: connect: connection refused"`);
/** apid's proxy connected, and the TLS handshake with the target broke off (a node booting or going down). */
const HANDSHAKE_EOF = 'connection error: desc = "transport: authentication handshake failed: EOF"';

const toStatus = (e: unknown): Partial<grpc.StatusObject> =>
  e instanceof RpcError ? err(e.code, e.details) : err(grpc.status.INTERNAL, String((e as Error)?.message ?? e));

function unary(dir: NodeDirectory, allowed: Role[], fn: (n: SimNode, req: any, call: Call) => Promise<object> | object): grpc.handleUnaryCall<any, any> {
  return (call, callback) => {
    const n = route(dir, call, allowed);
    if (n === HANG) return;
    if (!(n instanceof SimNode)) return callback(n);
    Promise.resolve()
      .then(() => fn(n, call.request, call))
      .then((res) => callback(null, res), (e) => callback(toStatus(e)));
  };
}

function stream(dir: NodeDirectory, allowed: Role[], fn: (n: SimNode, req: any, send: (m: object) => void, call: Call) => Promise<void>): grpc.handleServerStreamingCall<any, any> {
  return (call) => {
    const n = route(dir, call, allowed);
    if (n === HANG) return;
    if (!(n instanceof SimNode)) return void call.emit("error", n);
    let open = true;
    call.on("cancelled", () => (open = false));
    fn(n, call.request, (m) => open && call.write(m), call).then(
      () => open && call.end(),
      (e) => open && call.emit("error", toStatus(e)),
    );
  };
}

function events(dir: NodeDirectory): grpc.handleServerStreamingCall<any, any> {
  return (call) => {
    const n = route(dir, call, READER);
    if (n === HANG) return;
    if (!(n instanceof SimNode)) return void call.emit("error", n);
    const req = call.request;
    if ([req.tail_events !== 0, !!req.tail_id, req.tail_seconds !== 0].filter(Boolean).length > 1) {
      return void call.emit("error", err(grpc.status.INVALID_ARGUMENT, "tail_events, tail_id and tail_seconds are mutually exclusive"));
    }
    const actor: string = req.with_actor_id ?? "";
    const send = (e: EventRecord) => {
      if (!actor || e.actorId === actor) call.write({ id: e.id, actor_id: e.actorId, data: e.data });
    };
    call.write({ id: xid(), actor_id: actor, data: { type_url: "", value: Buffer.alloc(0) } }); // hello
    for (const e of n.tail(req)) send(e);
    const unsubscribe = n.subscribe(send, () => {
      unsubscribe();
      call.emit("error", err(grpc.status.UNAVAILABLE, PROXY_EOF));
    });
    call.on("cancelled", unsubscribe);
  };
}

/**
 * An action that reboots the node (Reboot, legacy Upgrade) whose answer is lost when the node has `replyLost` set:
 * the node goes down before apid answers. Through the node's own endpoint the connection simply drops (the
 * listener is shut down with the node); through another endpoint the proxy answers with its EOF error.
 */
function rebootingAction(dir: NodeDirectory, allowed: Role[], kind: "upgrade" | "reboot", fn: (n: SimNode, req: any) => Promise<object> | object): grpc.handleUnaryCall<any, any> {
  return unary(dir, allowed, async (n, req) => {
    if (n.faults.refuseActions) {
      n.faults.refuseActions--;
      const e = refused(n);
      throw new RpcError(e.code!, e.details!);
    }
    n.received[kind]++;
    const lost = n.faults.replyLost;
    if (lost === "unprocessed") throw new RpcError(grpc.status.UNAVAILABLE, PROXY_EOF);
    const res = await fn(n, req);
    if (!lost) return res;
    // Through the node's own endpoint: no answer at all, the connection drops when its apid stops.
    if (dir.endpointNode() === n) return new Promise<object>(() => undefined);
    await new Promise<void>((resolve) => {
      if (!n.up) return resolve();
      const unsubscribe = n.subscribe(() => undefined, () => {
        unsubscribe();
        resolve();
      });
    });
    throw new RpcError(grpc.status.UNAVAILABLE, PROXY_EOF);
  });
}

/**
 * Resources whose definition is Sensitive are read with os:admin only (internal/app/resources/access.go AccessPolicy,
 * authz.ErrNotAuthorized; the machine configuration: pkg/machinery/resources/config/machine_config.go, talos
 * v1.14.0-beta.1-84 ad88231).
 */
function sensitiveNeedsAdmin(type: string, call: Call): void {
  if (SENSITIVE_TYPES.has(type) && !roles(call).includes("os:admin")) throw new RpcError(grpc.status.PERMISSION_DENIED, "not authorized");
}
const SENSITIVE_TYPES = new Set([MACHINE_CONFIG_TYPE]);

/** Talos' machinehelper.CheckControlplane refusal on a worker. */
function controlPlaneOnly(n: SimNode, api: string): void {
  if (n.role !== "controlplane") throw new RpcError(grpc.status.UNIMPLEMENTED, `${api} is only available on control plane nodes`);
}

/** The service implementations of the simulated endpoint; `etcd` answers the etcd calls of control planes. */
export function addTalosServices(server: grpc.Server, dir: NodeDirectory): void {
  const w = wire();
  server.addService(w.MachineService, {
    Version: unary(dir, READER, (n) => ({
      messages: [{
        version: { tag: n.version, sha: "0000000", built: "", go_version: "go1.24.0", os: "linux", arch: "amd64" },
        platform: { name: n.platform, mode: platformMode(n.platform) },
        features: { rbac: true },
      }],
    })),
    Upgrade: rebootingAction(dir, ADMIN, "upgrade", async (n, req) => {
      const r = await n.legacyUpgrade({ image: req.image, stage: !!req.stage, force: !!req.force, preserve: !!req.preserve });
      return { messages: [{ ack: r.ack, actor_id: r.actorId }] };
    }),
    Reboot: rebootingAction(dir, OPERATOR, "reboot", (n) => ({ messages: [{ actor_id: n.reboot().actorId }] })),
    Read: stream(dir, ADMIN, async (n, req, send) => send({ bytes: n.read(req.path) })),
    Events: events(dir),
    EtcdMemberList: unary(dir, READER, (n) => {
      controlPlaneOnly(n, "member list");
      const members = n.etcd().memberList();
      return {
        messages: [{
          legacy_members: members.map((m) => m.name),
          members: members.map((m) => ({
            id: m.id.toString(), hostname: m.name, is_learner: m.learner,
            peer_urls: [`https://${m.node.address}:2380`], client_urls: [`https://${m.node.address}:2379`],
          })),
        }],
      };
    }),
    EtcdStatus: unary(dir, READER, (n) => {
      controlPlaneOnly(n, "etcd status");
      const st = n.etcd().status(n.name);
      return {
        messages: [{
          member_status: {
            member_id: st.memberId.toString(), protocol_version: "3.6.0", storage_version: "3.6.0", db_size: "20480000", db_size_in_use: "12288000",
            leader: st.leader.toString(), raft_index: st.raftIndex.toString(), raft_term: st.raftTerm.toString(),
            raft_applied_index: st.raftIndex.toString(), errors: st.errors, is_learner: st.learner,
          },
        }],
      };
    }),
    ApplyConfiguration: unary(dir, ADMIN, (n, req) => n.kubernetes.apply(req)),
    EtcdForfeitLeadership: unary(dir, ADMIN, (n) => {
      controlPlaneOnly(n, "etcd forfeit leadership");
      return { messages: [{ member: n.etcd().forfeitLeadership(n.name) }] };
    }),
  });
  server.addService(w.ImageService, {
    Pull: stream(dir, OPERATOR, (n, req, send) => n.pull(req.image_ref, send)),
  });
  server.addService(w.LifecycleService, {
    Upgrade: stream(dir, ADMIN, (n, req, send) => {
      n.received.install++;
      return n.lifecycleUpgrade(req.source?.image_name ?? "", send);
    }),
  });
  server.addService(w.State, {
    Get: unary(dir, READER, (n, req, call) => {
      sensitiveNeedsAdmin(req.type, call);
      return { resource: getResource(n, req.namespace, req.type, req.id) };
    }),
    List: stream(dir, READER, async (n, req, send, call) => {
      sensitiveNeedsAdmin(req.type, call);
      for (const resource of listResources(n, req.namespace, req.type)) send({ resource });
    }),
  });
}
