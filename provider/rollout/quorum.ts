// Two control planes (issue 25.2): etcd cannot keep quorum through either one's reboot. The run refuses such a reboot
// unless the user accepted the outage (etcdQuorumLoss: "allow"; etcd.ts asks with it, every other rule kept); the
// preview says which it will be, so a reviewer sees the cost before the merge. PURE.
import type { Plan, PlanMachine } from "./plan";
import type { EtcdQuorumLoss } from "./ports";
import * as msg from "./messages";

/**
 * Plan lines for a cluster whose Nodes show exactly 2 control planes with at least one to upgrade: what each reboot
 * costs (allowed), or where the run will stop (refused). The Nodes stand in for etcd's voters, which the preview does
 * not read; the run asks etcd itself.
 */
export function quorumLossPlanLines(machines: readonly Pick<PlanMachine, "name" | "role">[], plan: Plan, mode: EtcdQuorumLoss): string[] {
  if (machines.filter((m) => m.role === "controlplane").length !== 2) return [];
  const pending = plan.waves.flatMap((w) => w.machines).filter((m) => m.role === "controlplane").map((m) => m.name);
  return pending.length ? msg.planQuorumLoss(pending, mode === "allow") : [];
}
