// etcd safety for control planes, over the Talos machine API: the member list (EtcdMemberList through one control
// plane), each member's health from its own node (EtcdStatus: no call error, no etcd errors, a known leader — the
// test Omni's etcd check applies), and the verdict whether one member may go down now. The verdict follows Talos'
// own pre-upgrade rule (internal/pkg/etcd ValidateForUpgrade: every member started and healthy, never 2 members)
// generalised to quorum: the healthy voting members left without it must still be a majority of all voters.
import type { EtcdHealth, EtcdMemberHealth, EtcdVerdict } from "../rollout/ports";
import { CallOptions, EtcdMemberInfo, TalosClient } from "./client";
import { classify } from "./errors";
import { msg } from "./messages";

/** Host of a member's first client URL ("https://10.5.0.2:2379" → "10.5.0.2"). */
function urlHost(urls: readonly string[]): string {
  for (const u of urls) {
    try {
      return new URL(u).hostname.replace(/^\[|\]$/g, "");
    } catch {
      // not a URL: try the next one
    }
  }
  return "";
}

/** Reads the members through `cpNode`, then asks every member's node for its status (in parallel). */
export async function readEtcdHealth(client: TalosClient, cpNode: string, opts: CallOptions = {}): Promise<EtcdHealth> {
  const members: EtcdMemberInfo[] = await client.etcdMemberList(cpNode, opts);
  const statuses = await Promise.all(members.map(async (m) => {
    const address = urlHost(m.clientUrls);
    if (!m.name) return { address, problem: msg.etcdNotStarted() };
    if (!address) return { address, problem: msg.etcdNoClientUrl() };
    try {
      const st = await client.etcdStatus(address, opts);
      if (st.errors.length) return { address, leaderId: st.leaderId, problem: st.errors.join(", ") };
      if (!st.leaderId) return { address, problem: msg.etcdNoLeaderSeen() };
      return { address, leaderId: st.leaderId };
    } catch (err) {
      const e = classify(err, address, "etcd status");
      return { address, problem: e.detail ?? e.message };
    }
  }));
  // The leader is the one the healthy members agree on.
  const votes = new Map<string, number>();
  for (const s of statuses) if (!s.problem && s.leaderId) votes.set(s.leaderId, (votes.get(s.leaderId) ?? 0) + 1);
  const leaderId = [...votes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const health: EtcdMemberHealth[] = members.map((m, i) => ({
    id: m.id, name: m.name, address: statuses[i].address, learner: m.learner, leader: m.id === leaderId,
    healthy: !statuses[i].problem, ...(statuses[i].problem ? { problem: statuses[i].problem } : {}),
  }));
  return etcdHealthOf(health);
}

/** The health summary and verdicts of a member list (PURE). */
export function etcdHealthOf(members: EtcdMemberHealth[]): EtcdHealth {
  const voters = members.filter((m) => !m.learner);
  const quorum = Math.floor(voters.length / 2) + 1;
  return {
    members,
    quorum,
    healthy: members.every((m) => m.healthy),
    canTakeDown: (node: string, opts?: { allowQuorumLoss?: boolean }) => etcdVerdict(members, node, opts?.allowQuorumLoss ?? false),
  };
}

/**
 * Whether the member of `node` (member name, node name or address) may go down now (PURE). `allowQuorumLoss` (the
 * user's etcdQuorumLoss: "allow", for 2 control planes) accepts losing quorum for the reboot, never an unhealthy
 * member: with every member healthy, only 2 voters lose quorum by one reboot. Talos' own check refuses 2 members
 * (ValidateForUpgrade above) but is skipped with preserve from v1.13.4 and on the LifecycleService path; Omni's etcd
 * check only warns at 2 members (siderolabs/omni b1ea5df internal/backend/runtime/omni/pkg/check/etcd.go: severity
 * Warning, not interrupting) and lets the upgrade reboot them.
 */
export function etcdVerdict(members: readonly EtcdMemberHealth[], node: string, allowQuorumLoss = false): EtcdVerdict {
  const names = members.map((m) => m.name || m.id);
  const m = members.find((x) => x.name === node || x.address === node);
  if (!m) return { ok: false, reason: msg.etcdNoMember(node, names) };
  const sick = members.filter((x) => !x.healthy);
  if (sick.length) {
    return { ok: false, reason: msg.etcdMembersUnhealthy(node, sick.map((x) => ({ name: x.name || x.id, id: x.id, problem: x.problem ?? "" }))) };
  }
  const voters = members.filter((x) => !x.learner);
  // One voting member: nothing can keep etcd up through its own reboot, and nothing is lost by it (Talos allows it).
  if (voters.length === 1 && !m.learner) return { ok: true };
  const quorum = Math.floor(voters.length / 2) + 1;
  const left = voters.filter((x) => x !== m && x.healthy).length;
  if (left < quorum && allowQuorumLoss) return { ok: true, quorumLoss: true };
  if (left < quorum) return { ok: false, permanent: true, reason: msg.etcdQuorumLost(node, voters.length, left, quorum) };
  return { ok: true };
}
