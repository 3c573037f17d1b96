// Upgrade paths: `path` + `version` as steps, each a full gated rollout. PURE: no I/O. Level-based like the run: the
// step a run is in is read from the live nodes' versions (the first step some node is still below), so an interrupted
// run resumes in its step and never rolls a finished step again.
import { compareVersions, isValidVersion, normalizeVersion } from "../version";
import * as msg from "./messages";

/** The versions to roll, in order, the last one the target. */
export function pathSteps(path: readonly string[], target: string): string[] {
  return [...path, target].map(normalizeVersion);
}

/**
 * Index of the step the cluster is in: the first step some node runs below (or runs an unknown version for); the last
 * step when every node has reached them all (that step's run finds the cluster done, or reverts it).
 */
export function currentStep(steps: readonly string[], versions: ReadonlyArray<string | undefined>): number {
  const i = steps.findIndex((s) => versions.some((v) => v === undefined || !isValidVersion(v) || compareVersions(v, s) < 0));
  return i < 0 ? steps.length - 1 : i;
}

/** "2/3: → v1.13.2" for step index `i`. */
export function stepLabel(steps: readonly string[], i: number): string {
  return msg.pathStepLabel(i + 1, steps.length, steps[i]);
}
