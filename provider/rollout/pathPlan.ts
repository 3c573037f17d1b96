// The plan of an upgrade path's later steps, as preview and `talos-gate plan --path` show it. PURE: the live nodes in,
// plan lines out (provider/rollout/path.ts reads the step the cluster is in).
import { describePlan, planRollout, type RolloutStrategy } from "./plan";
import { stepLabel } from "./path";
import { planPathLater, planPathStep } from "./messages";
import type { Machine } from "./ports";

/** The plan lines of the steps after the current one: every node, from the step before (as it will be by then). */
export function laterStepLines(strategy: RolloutStrategy | undefined, machines: readonly Machine[], at: { index: number; steps: string[] }, healthchecks: string[]): string[] {
  const lines: string[] = [];
  for (let i = at.index + 1; i < at.steps.length; i++) {
    const from = at.steps[i - 1];
    lines.push(planPathStep(stepLabel(at.steps, i), from), planPathLater(stepLabel(at.steps, i)));
    const plan = planRollout({
      machines: machines.map((m) => ({ ...m, talosVersion: from, ready: true })), targetVersion: at.steps[i], strategy,
      healthchecks, lastUpgradeVersion: from, mode: "upgrading",
    });
    lines.push(...describePlan(plan));
  }
  return lines;
}
