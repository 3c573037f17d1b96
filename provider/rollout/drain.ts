// The drain before a node's reboot, as the `drain` input says (issue 25): "always" drains (PDBs honoured, bounded by
// drainTimeout, else nodeTimeout); "never" only cordons; "auto" drains unless no other node could take any of the
// node's pods (a single node; the kube port decides, provider/kube/placement.ts), and then only cordons. A node that
// is not drained is named in a warning on the resource's row and in the status step, with the pods that go down with
// it and the PodDisruptionBudgets that violates.
import type { RunContext } from "./context";
import type { Machine } from "./ports";
import * as msg from "./messages";

/**
 * `legacy`: the legacy Upgrade follows, which runs Talos' own drain anyway (the warning says so). `cordoning`: the
 * cordon sent at the "pulling" step (rollout/node.ts); awaited here, and its failure is the drain's.
 */
export async function drainBeforeReboot(
  ctx: RunContext, machine: Machine, signal: AbortSignal, legacy: boolean, cordoning?: Promise<boolean>,
): Promise<void> {
  const { opts } = ctx;
  // Ours already: the drain starts with the listing. Not claimed (someone else's cordon, maybe lifted since): the
  // drain cordons as it always did.
  const cordoned = (await cordoning) === true;
  const outcome = await ctx.kube.drain(machine.name, {
    timeoutMs: opts.drainTimeoutMs ?? opts.nodeTimeoutMs, owner: opts.holder, signal, mode: opts.drain ?? "auto", cordoned,
  });
  if (outcome.drained) return;
  ctx.warn(msg.nodeNotDrained(machine.name, outcome.why, outcome.pods, outcome.pdbs, legacy));
  await ctx.emit({
    type: "NodeNotDrained", at: ctx.now(), node: machine.name, note: msg.stepNotDrained(machine.name, outcome.why, outcome.pods, outcome.pdbs),
  }, true);
}
