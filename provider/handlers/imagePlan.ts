// The preview plan's installer-image lines (issue 23.3): which image each pending node gets, grouped
// ("installer ghcr.io/…:v1.13.2: cp-1, w-1"), read from the nodes so a reviewer sees before the merge that nodes
// installed from Image Factory keep their extensions. At 1,000 nodes these are thousands of Talos calls: they run under
// their own budget, which grows with the nodes to read (the Kubernetes part of the plan keeps its 5 s), a bounded number
// in flight; a node not read when the budget ends is named as read at apply time, and the rest of the plan stands. A
// node whose image cannot be derived at all (it runs extensions, or boots with SecureBoot, without a schematic) is a
// refusal: check fails before anything moves, instead of a run that stops at that node's wave after the ones before.
import { setMaxListeners } from "node:events";
import { errorText } from "../errorText";
import type { Machine } from "../rollout/ports";
import { mapLimit } from "../mapLimit";
import * as msg from "./messages";

/** Nodes read at once: enough to keep one apid endpoint busy, far from a burst of 1,000 calls. */
export const PLAN_READS_IN_FLIGHT = 32;
const BASE_BUDGET_MS = 5_000;
const PER_NODE_MS = 10;
const MAX_BUDGET_MS = 30_000;

/** How long the preview reads installer images for `nodes` nodes: 5 s, plus 10 ms a node, at most 30 s. */
export function imageReadBudgetMs(nodes: number): number {
  return Math.min(MAX_BUDGET_MS, BASE_BUDGET_MS + nodes * PER_NODE_MS);
}

export interface ImagePlan {
  /** "installer <image>: <nodes>" lines, sorted by image. */
  lines: string[];
  /** Why a node's image cannot be derived (what `refuses` took), one per node, by node name. */
  refusals: string[];
}

/**
 * The image lines for `pending`, sorted by image. `read` gives a node's image (it may throw: the line then says why,
 * unless `refuses` takes the error as a refusal); it gets a signal that aborts when the budget ends.
 */
export async function imagePlanLines(
  pending: readonly Machine[], read: (m: Machine, signal: AbortSignal) => Promise<string>, budgetMs: number,
  refuses: (err: unknown) => boolean = () => false,
): Promise<ImagePlan> {
  if (pending.length === 0) return { lines: [], refusals: [] };
  const refusals = new Map<string, string>();
  const byImage = new Map<string, string[]>();
  const add = (key: string, name: string) => {
    const names = byImage.get(key);
    if (names) names.push(name);
    else byImage.set(key, [name]);
  };
  const budget = new AbortController();
  // Each read in flight listens on the signal (a few calls per node): not a leak.
  setMaxListeners(8 * PLAN_READS_IN_FLIGHT, budget.signal);
  const timer = setTimeout(() => budget.abort(), budgetMs);
  const late = msg.planImageUnknown(msg.planImageNotReadInTime(budgetMs));
  const ended = new Promise<string>((resolve) => budget.signal.addEventListener("abort", () => resolve(late), { once: true }));
  try {
    await mapLimit(pending, PLAN_READS_IN_FLIGHT, async (m) => {
      if (budget.signal.aborted) return add(late, m.name);
      const image = await Promise.race([read(m, budget.signal).catch((err) => {
        if (!refuses(err)) return msg.planImageUnknown(errorText(err));
        refusals.set(m.name, errorText(err));
        return undefined;
      }), ended]);
      if (image !== undefined) add(image, m.name);
    });
  } finally {
    clearTimeout(timer);
  }
  return {
    lines: [...byImage.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([img, names]) => msg.planImage(img, names.sort())),
    refusals: [...refusals.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, reason]) => reason),
  };
}
