// beforeNode / afterNode hooks: a Job per node and phase (provider/template/hooks.ts composes it), run once through the
// runner with Omni's Job lifecycle and bounded by the hook's timeout. A hook that fails or does not finish stops the
// rollout with its message. A started hook is not cut short by a stop request: afterNode must clear what beforeNode set.
import { composeNodeHook, type HookPhase, type NodeHook } from "../template/hooks";
import { deadline } from "./clock";
import { errorText, type RunContext } from "./context";
import type { CheckOutcome, Machine } from "./ports";
import * as msg from "./messages";

export type NodeHooks = { beforeNode?: NodeHook; afterNode?: NodeHook };

/** Runs the hook of `phase` for the node, if one is set; throws its failure (reasonHookFailed). */
export async function runNodeHook(ctx: RunContext, phase: HookPhase, machine: Machine, outcome?: "upgraded" | "failed"): Promise<void> {
  const hook = ctx.opts.hooks?.[phase];
  if (!hook) return;
  const job = composeNodeHook(hook, {
    phase, cluster: ctx.opts.cluster, node: { name: machine.name, role: machine.role }, ...(outcome ? { outcome } : {}),
  });
  await ctx.emit({ type: "HookStarted", at: ctx.now(), node: machine.name, phase, id: job.id });
  const bound = deadline(ctx.clock, ctx.now() + hook.timeoutMs);
  try {
    const out: CheckOutcome = await ctx.kube.runCheck(job, { signal: bound.signal })
      .catch((e): CheckOutcome => ({ state: "failed", reason: errorText(e) }));
    const error = out.state === "passed" ? undefined : out.state === "running" ? msg.hookTimedOut(hook.timeoutMs) : out.reason;
    await ctx.emit({ type: "HookFinished", at: ctx.now(), node: machine.name, phase, id: job.id, ...(error ? { error } : {}) }, true);
    if (error !== undefined) throw new Error(msg.reasonHookFailed(phase, job.id, machine.name, error));
  } finally {
    bound.dispose();
  }
}
