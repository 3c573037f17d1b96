// Upgrade paths: `path` + `version` as steps, each a full gated rollout. PURE: no I/O. Level-based like the run: the
// step a run is in is read from the live nodes' versions (the first step some node is still below), so an interrupted
// run resumes in its step and never rolls a finished step again.
import { compareVersions, isValidVersion, normalizeVersion } from "../version";
import * as msg from "./messages";

/** The versions to roll, in order, the last one the target. */
export function pathSteps(path: readonly string[], target: string): string[] {
  return [...path, target].map(normalizeVersion);
}

/** The versions that are known (a Node without a Talos osImage says nothing). */
const known = (versions: ReadonlyArray<string | undefined>): string[] => versions.filter((v): v is string => v !== undefined && isValidVersion(v));

/**
 * Index of the step the cluster is in: the first step some node runs below; the last step when every node has reached
 * them all (that step's run finds the cluster done, or reverts it). A node whose version is unknown does not decide it:
 * taken as "below", it would send a cluster in step 2 back to step 1, whose run would take the other nodes back down.
 */
export function currentStep(steps: readonly string[], versions: ReadonlyArray<string | undefined>): number {
  const vs = known(versions);
  const i = steps.findIndex((s) => vs.some((v) => compareVersions(v, s) < 0));
  return i < 0 ? steps.length - 1 : i;
}

/** A node already past intermediate step `i` (the step's run would take it back): its name and version, or undefined. */
export function aheadOfStep(steps: readonly string[], i: number, nodes: ReadonlyArray<{ name: string; talosVersion?: string }>): { name: string; version: string } | undefined {
  if (i >= steps.length - 1) return undefined;
  const n = nodes.find((m) => m.talosVersion !== undefined && isValidVersion(m.talosVersion) && compareVersions(m.talosVersion, steps[i]) > 0);
  return n && { name: n.name, version: n.talosVersion! };
}

/** "2/3: → v1.13.2" for step index `i`. */
export function stepLabel(steps: readonly string[], i: number): string {
  return msg.pathStepLabel(i + 1, steps.length, steps[i]);
}
