// A rollout through an upgrade path: each step (`path`, then the target) a full `runRollout` — control planes first,
// the gates before every wave, etcd's consent before each control plane — then the next. The step to start in is read
// from the live nodes (path.ts), so a run killed mid-step resumes in that step, and a step's run upgrades only the
// nodes not on its version: no node goes down twice for one step. Every status says the step ("2/3: → v1.13.2; …").
// One Lease is held across all steps: between two steps no other pipeline may start a rollout of the cluster.
import type { KubeApi, TalosApi } from "./ports";
import { aheadOfStep, currentStep, pathSteps, stepLabel } from "./path";
import { acquireRolloutLease, RolloutError, runRollout, type RunOptions } from "./run";
import { errorText } from "./context";
import type { UpgradeStatus } from "./status";
import * as msg from "./messages";

/** The status with the step in front of its `status` line (a finished path needs no label). */
function labelled(s: UpgradeStatus, label: string): UpgradeStatus {
  return s.phase === "Done" ? s : { ...s, status: msg.withPathStep(label, s.status) };
}

/** `runRollout` through `path` (intermediate versions, in order) to `opts.targetVersion`; no path: exactly runRollout. */
export async function runPath(kube: KubeApi, talos: TalosApi, opts: RunOptions, path: readonly string[]): Promise<UpgradeStatus> {
  if (path.length === 0) return runRollout(kube, talos, opts);
  const steps = pathSteps(path, opts.targetVersion);
  const machines = await kube.listMachines();
  const first = currentStep(steps, machines.map((m) => m.talosVersion));
  // Refused at preview too; the cluster may have changed since (a node upgraded by hand).
  const ahead = aheadOfStep(steps, first, machines);
  if (ahead) throw new Error(msg.reasonPathStepBehind(ahead.name, ahead.version, steps[first]));
  const lease = await acquireRolloutLease(kube, opts);
  try {
    return await runSteps(kube, talos, { ...opts, lease }, steps, first);
  } finally {
    await lease.release().catch((e) => (opts.onWarning ?? opts.onProgress)?.(msg.progressPrefix(opts.cluster) + msg.leaseReleaseFailed(errorText(e))));
  }
}

/** Each step from `first` on, under the caller's Lease. */
async function runSteps(kube: KubeApi, talos: TalosApi, opts: RunOptions, steps: string[], first: number): Promise<UpgradeStatus> {
  // Before a later step, the cluster converged on the step before it: the version a revert of this step goes back to.
  let last = opts.lastUpgradeVersion;
  for (let i = first; ; i++) {
    const label = stepLabel(steps, i);
    opts.onProgress?.(msg.progressPrefix(opts.cluster) + msg.progressPathStep(label));
    let status: UpgradeStatus;
    try {
      status = await runRollout(kube, talos, {
        ...opts,
        targetVersion: steps[i],
        ...(last !== undefined ? { lastUpgradeVersion: last } : {}),
        onStatus: (s) => opts.onStatus?.(labelled(s, label)),
      });
    } catch (e) {
      if (e instanceof RolloutError) throw new RolloutError(e.message, labelled(e.status, label));
      throw e;
    }
    if (i === steps.length - 1) return status;
    last = steps[i];
  }
}
