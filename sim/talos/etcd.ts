// The simulated cluster's etcd: one member per control-plane node, a leader, quorum, member health that follows the
// node (down → unhealthy; after boot unhealthy for `unhealthyAfterBootMs`, a knob), the upgrade mutex, and the
// answers Talos gives for EtcdMemberList / EtcdStatus / EtcdForfeitLeadership and for its own pre-upgrade checks
// (internal/pkg/etcd/etcd.go ValidateForUpgrade, v1alpha1_server.go Upgrade) — with Talos' exact wording.
import * as crypto from "node:crypto";
import { status as Status } from "@grpc/grpc-js";
import { RpcError } from "./rpcerror";

/** What etcd needs to know about a control-plane node. */
export interface EtcdNode {
  readonly name: string;
  readonly address: string;
  readonly up: boolean;
}

export interface EtcdMemberState {
  /** uint64 member id. */
  id: bigint;
  /** Member name = the node's hostname; "" for a member that was added but never started. */
  name: string;
  node: EtcdNode;
  learner: boolean;
  /** The member answers (not down, not catching up after a boot). */
  healthy: boolean;
}

export interface EtcdKnobs {
  /** After its node boots, a member stays unhealthy (catching up, no leader) this long. Default 0. */
  unhealthyAfterBootMs: number;
  /** The next N member lists (EtcdMemberList, Talos' ValidateForUpgrade) time out: "etcdserver: request timed out". */
  requestTimeouts: number;
}

/** etcd's ErrLocked, wrapped as Talos wraps it (tryLockUpgradeMutex, then Upgrade). */
export const MUTEX_LOCKED = "failed to acquire upgrade mutex: error trying to lock etcd upgrade mutex: mutex: Locked by another session";
/** etcdserver.ErrNoLeader. */
export const NO_LEADER = "etcdserver: no leader";
/** etcd's rpctypes.ErrGRPCTimeout, as Talos passes it on (an etcd client error carries no gRPC status: Unknown). */
export const REQUEST_TIMED_OUT = "etcdserver: request timed out";
/** etcdserver.ErrTimeoutLeaderTransfer. */
export const LEADER_TRANSFER_TIMEOUT = "etcdserver: request timed out, leader transfer took too long";

/** Talos' member id format (etcd FormatMemberID). */
export const formatMemberId = (id: bigint): string => id.toString(16).padStart(16, "0");

const randomMemberId = (): bigint => crypto.randomBytes(8).readBigUInt64BE(0) || 1n;

export class SimEtcd {
  readonly knobs: EtcdKnobs;
  private readonly members: EtcdMemberState[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private leader?: EtcdMemberState;
  private term = 2n;
  private index = 1000n;
  private mutexHolder?: string;
  /** Members kept unhealthy whatever their node does (a rehearsal's `etcd-unhealthy` fault), by node name. */
  private readonly held = new Set<string>();

  constructor(nodes: readonly EtcdNode[], knobs: Partial<EtcdKnobs> = {}) {
    this.knobs = { unhealthyAfterBootMs: 0, requestTimeouts: 0, ...knobs };
    for (const node of nodes) this.members.push({ id: randomMemberId(), name: node.name, node, learner: false, healthy: node.up });
    this.elect();
  }

  list(): readonly EtcdMemberState[] {
    return this.members;
  }

  member(nodeName: string): EtcdMemberState | undefined {
    return this.members.find((m) => m.node.name === nodeName);
  }

  get leaderMember(): EtcdMemberState | undefined {
    return this.leader;
  }

  /** Voting members needed for quorum. */
  get quorum(): number {
    return Math.floor(this.members.filter((m) => !m.learner).length / 2) + 1;
  }

  hasQuorum(): boolean {
    return this.members.filter((m) => !m.learner && m.healthy).length >= this.quorum;
  }

  // --- node lifecycle

  /** The member's node went down: the member is gone until it boots; a new leader is elected if quorum remains. */
  nodeDown(nodeName: string): void {
    const m = this.member(nodeName);
    if (!m) return;
    m.healthy = false;
    this.reconcile();
  }

  /** The member's node booted: it rejoins after `unhealthyAfterBootMs` (catching up). */
  nodeUp(nodeName: string): void {
    const m = this.member(nodeName);
    if (!m) return;
    const join = () => {
      if (!m.node.up || this.held.has(nodeName)) return;
      m.healthy = true;
      this.reconcile();
    };
    const ms = this.knobs.unhealthyAfterBootMs;
    if (ms <= 0) return join();
    const t = setTimeout(() => {
      this.timers.delete(t);
      join();
    }, ms);
    this.timers.add(t);
  }

  /** Marks a member (un)healthy now (test knob: a member that fails for another reason). */
  setHealthy(nodeName: string, healthy: boolean): void {
    const m = this.member(nodeName);
    if (!m) throw new Error(`no etcd member for node ${nodeName}`);
    m.healthy = healthy && m.node.up;
    this.reconcile();
  }

  /** Keeps a member unhealthy through its node's reboots (`held`), or lets it be healthy again while its node is up. */
  holdUnhealthy(nodeName: string, held: boolean): void {
    if (held) this.held.add(nodeName);
    else this.held.delete(nodeName);
    this.setHealthy(nodeName, !held);
  }

  /** Whether the member of `nodeName` is kept unhealthy by `holdUnhealthy`. */
  isHeldUnhealthy(nodeName: string): boolean {
    return this.held.has(nodeName);
  }

  setLearner(nodeName: string, learner: boolean): void {
    const m = this.member(nodeName);
    if (!m) throw new Error(`no etcd member for node ${nodeName}`);
    m.learner = learner;
    this.reconcile();
  }

  /** Another session holds the upgrade mutex (e.g. an administrator's `talosctl upgrade` of another control plane). */
  holdUpgradeMutex(holder: string): () => void {
    this.mutexHolder = holder;
    return () => {
      if (this.mutexHolder === holder) this.mutexHolder = undefined;
    };
  }

  /** Without quorum there is no leader; with it, a leader that is gone, unhealthy or a learner is replaced. */
  private reconcile(): void {
    if (!this.hasQuorum()) this.leader = undefined;
    else if (!this.leader || !this.leader.healthy || this.leader.learner) this.elect();
  }

  private elect(): void {
    this.leader = undefined;
    if (!this.hasQuorum()) return;
    this.leader = this.members.find((m) => m.healthy && !m.learner);
    this.term++;
  }

  // --- the machine API's etcd calls, answered by control-plane node `via`

  /** EtcdMemberList: through a client to all control planes, with WithRequireLeader. */
  memberList(): EtcdMemberState[] {
    this.timeOut("");
    if (!this.leader) throw new RpcError(Status.UNAVAILABLE, NO_LEADER);
    return [...this.members];
  }

  /** EtcdStatus of the local member of `nodeName` (Status against localhost:2379). */
  status(nodeName: string): { memberId: bigint; leader: bigint; raftTerm: bigint; raftIndex: bigint; errors: string[]; learner: boolean } {
    const m = this.member(nodeName);
    if (!m) throw new RpcError(Status.UNKNOWN, "failed to create etcd client: etcd is not running on this node");
    this.index += 7n;
    // A member that is not connected to a leader still answers Status, with no leader and etcd's ErrNoLeader in errors.
    const leader = m.healthy && this.leader ? this.leader.id : 0n;
    return {
      memberId: m.id,
      leader,
      raftTerm: this.term,
      raftIndex: m.healthy ? this.index : this.index - 500n,
      errors: leader === 0n ? [NO_LEADER] : [],
      learner: m.learner,
    };
  }

  /** EtcdForfeitLeadership on `nodeName` (internal/pkg/etcd ForfeitLeadership): the new leader's name, or "". */
  forfeitLeadership(nodeName: string): string {
    if (!this.leader) throw new RpcError(Status.UNAVAILABLE, NO_LEADER);
    const m = this.member(nodeName);
    if (!m) throw new RpcError(Status.UNKNOWN, "failed to forfeit leadership: etcd is not running on this node");
    if (this.members.length === 1) throw new RpcError(Status.UNKNOWN, "failed to forfeit leadership: cannot forfeit leadership, only one member");
    if (this.leader !== m) return "";
    // Talos moves leadership to the first other member of the list, whatever its state; etcd refuses a transferee
    // that is not caught up.
    const to = this.members.find((x) => x !== m)!;
    if (!to.healthy || to.learner) throw new RpcError(Status.UNKNOWN, `failed to forfeit leadership: ${LEADER_TRANSFER_TIMEOUT}`);
    this.leader = to;
    this.term++;
    return to.name;
  }

  /**
   * Talos' pre-upgrade checks on a control plane (legacy Upgrade with force=false, and preserve=false or a Talos
   * where preserve did not skip them yet: before v1.12.9, v1.13.0–v1.13.3, v1.14.0-alpha.0/1; see
   * preserveSkipsEtcdChecks in node.ts): the upgrade mutex, then ValidateForUpgrade.
   */
  validateForUpgrade(opts: { preserve: boolean; legacyOneMemberRule: boolean }): void {
    if (this.mutexHolder) throw new RpcError(Status.UNKNOWN, MUTEX_LOCKED);
    this.timeOut("error validating etcd for upgrade: ");
    if (!this.leader) throw new RpcError(Status.UNKNOWN, `error validating etcd for upgrade: ${NO_LEADER}`);
    const n = this.members.length;
    if (opts.legacyOneMemberRule && !opts.preserve && n === 1) {
      throw new RpcError(Status.UNKNOWN, "error validating etcd for upgrade: only 1 etcd member found; assuming this is not an HA setup and refusing to upgrade; if this is a single-node cluster, use --preserve to upgrade");
    }
    if (n === 2) {
      throw new RpcError(Status.UNKNOWN, `error validating etcd for upgrade: etcd member count(${n}) is insufficient to maintain quorum if upgrade commences`);
    }
    for (const m of this.members) {
      if (!m.name) {
        throw new RpcError(Status.UNKNOWN, `error validating etcd for upgrade: etcd member ${formatMemberId(m.id)} is not started, all members must be running to perform an upgrade`);
      }
      if (!m.healthy) {
        throw new RpcError(Status.UNKNOWN,
          `error validating etcd for upgrade: etcd member ${formatMemberId(m.id)} is not healthy; all members must be healthy to perform an upgrade: context deadline exceeded`);
      }
    }
  }

  /** Knob `requestTimeouts`: this request times out (Talos wraps the error with `prefix`). */
  private timeOut(prefix: string): void {
    if (this.knobs.requestTimeouts <= 0) return;
    this.knobs.requestTimeouts--;
    throw new RpcError(Status.UNKNOWN, `${prefix}${REQUEST_TIMED_OUT}`);
  }

  dispose(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
