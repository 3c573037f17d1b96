// etcd's consent before a control plane goes down, asked twice: at the gate before its wave (hold.ts) and again right
// before the call that takes it down (node.ts: Reboot on the >= 1.13 path, the legacy Upgrade which reboots by itself).
// Between the two sit the re-plan, the pull, the install and the drain (up to nodeTimeout): the first answer may be
// stale by then, or about another node (issue 18.2). Talos itself does not ask on the LifecycleService path, nor for a
// legacy Upgrade with preserve from v1.12.9 / v1.13.4 / v1.14.0-alpha.2 (siderolabs/talos v1alpha1_server.go Upgrade: the mutex and
// ValidateForUpgrade run only when !force && !preserve), so this is the only check there is.
import { errorText, type RunContext } from "./context";
import type { Machine } from "./ports";
import * as msg from "./messages";

/** etcd's answer for one control plane: it may go down, not yet (waiting can help), or never (waiting cannot help). */
export type EtcdConsent =
  | { state: "passed"; quorumLoss?: boolean }
  | { state: "failed"; reason: string }
  | { state: "refused"; reason: string }
  /** The question was cut short by `signal`. */
  | { state: "running"; reason: string };

/**
 * Asks etcd whether `machine`'s member may go down now: healthy, and quorum kept without it. Asked through another
 * Ready control plane when there is one, since this one's answer says nothing about the others.
 */
export async function askEtcd(ctx: RunContext, machine: Pick<Machine, "name">, signal: AbortSignal): Promise<EtcdConsent> {
  const live = await ctx.machines();
  const self = live.find((m) => m.name === machine.name);
  const via = live.find((m) => m.role === "controlplane" && m.name !== machine.name && m.ready) ?? self;
  if (!self || !via) return { state: "failed", reason: msg.etcdCheckFailed(msg.nodeNotInCluster(machine.name)) };
  let health;
  try {
    health = await ctx.talos.etcdHealth(via.address, { signal });
  } catch (e) {
    if (signal.aborted) return { state: "running", reason: msg.CHECK_WAITING_TO_COMPLETE };
    return { state: "failed", reason: msg.etcdCheckFailed(errorText(e)) };
  }
  const member = health.members.some((m) => m.name === self.name) ? self.name : self.address;
  const verdict = health.canTakeDown(member, { allowQuorumLoss: ctx.opts.etcdQuorumLoss === "allow" });
  if (verdict.ok) return verdict.quorumLoss ? { state: "passed", quorumLoss: true } : { state: "passed" };
  if (verdict.permanent) return { state: "refused", reason: verdict.reason ?? msg.etcdCheckFailed("refused") };
  return { state: "failed", reason: verdict.reason ?? msg.etcdCheckFailed("not healthy") };
}

/** How often etcd is asked again while it withholds its consent. */
export const ETCD_RETRY_MS = 5_000;

/**
 * Right before a control plane goes down: waits for etcd's consent, asking every ETCD_RETRY_MS, until `signal` (the
 * node's own nodeTimeout) ends the wait. Throws when etcd could never consent, or with etcd's last word when the wait
 * ends; `onWaiting` hears why it waits.
 */
export async function awaitEtcdConsent(
  ctx: RunContext, machine: Machine, signal: AbortSignal, onWaiting: (reason: string) => void,
): Promise<void> {
  if (machine.role !== "controlplane") return;
  for (;;) {
    const answer = await askEtcd(ctx, machine, signal);
    if (answer.state === "passed" && answer.quorumLoss) ctx.warn(msg.etcdQuorumLossAccepted(machine.name));
    if (answer.state === "passed") return;
    if (answer.state === "refused") throw new Error(answer.reason);
    if (signal.aborted) throw new Error(msg.etcdNoConsentBeforeDown(machine.name, answer.reason));
    onWaiting(answer.reason);
    await ctx.clock.sleep(ETCD_RETRY_MS, signal);
    if (signal.aborted) throw new Error(msg.etcdNoConsentBeforeDown(machine.name, answer.reason));
  }
}
