// Condition gates during a run: one watch per condition for the whole run (started with it, stopped at its end), the
// condition evaluated on every state the watch delivers, and the verdicts kept current, so the gate and the soak read
// them at once and wake on the very event that changes one (no polling). A selection that cannot be read (kind not
// served, Forbidden) holds its condition with the reason, like a Job check that cannot run. Each condition is evaluated
// in its own worker thread under a wall-clock budget (conditions/sandbox.ts): an expression that runs away holds its
// gate saying so, and the Lease keeps renewing meanwhile.
import { ConditionSandbox, isNamed, selectorString, type CompiledCondition, type ConditionVerdict, type KubeObject } from "../conditions";
import { errorText } from "../errorText";
import type { CheckResult } from "./gate";
import type { KubeApi, ObjectSelection, ObjectWatch } from "./ports";
import * as msg from "./messages";

/** A condition gate: its id (`cluster-<cluster>-<name>`) and the compiled condition. */
export interface ConditionGate {
  id: string;
  compiled: CompiledCondition;
}

export function selectionOf(c: CompiledCondition): ObjectSelection {
  const t = c.spec.target;
  const base = { apiVersion: t.apiVersion, kind: t.kind, ...(t.namespace ? { namespace: t.namespace } : {}) };
  return isNamed(t) ? { ...base, name: t.name } : { ...base, labelSelector: selectorString(t.labelSelector) };
}


export class ConditionWatch {
  private readonly verdicts = new Map<string, ConditionVerdict>();
  private readonly watches: ObjectWatch[] = [];
  private readonly sandboxes: ConditionSandbox[] = [];
  private waiters: Array<() => void> = [];
  /** Counts verdict changes, so a waiter can tell whether anything changed since it last looked. */
  private version = 0;

  constructor(kube: KubeApi, readonly gates: readonly ConditionGate[], opts: { budgetMs?: number } = {}) {
    for (const g of gates) {
      this.verdicts.set(g.id, { state: "held", cause: "error", reason: msg.CONDITION_WAITING_FOR_OBJECTS });
      const w = kube.watchObjects(selectionOf(g.compiled));
      this.watches.push(w);
      const sandbox = new ConditionSandbox(g.compiled, opts.budgetMs);
      this.sandboxes.push(sandbox);
      void this.follow(g, w, sandbox);
    }
  }

  private async follow(g: ConditionGate, w: ObjectWatch, sandbox: ConditionSandbox): Promise<void> {
    try {
      for (;;) {
        const s = await w.next();
        if (!s) return;
        this.set(g.id, "unavailable" in s
          ? { state: "held", cause: "error", reason: s.unavailable }
          : await sandbox.evaluate(s.objects as KubeObject[]));
      }
    } catch (e) {
      this.set(g.id, { state: "held", cause: "error", reason: errorText(e) });
    }
  }

  private set(id: string, v: ConditionVerdict): void {
    const old = this.verdicts.get(id);
    if (old && old.state === v.state && (old.state === "passed" || (old as { reason: string }).reason === (v as { reason: string }).reason)) return;
    this.verdicts.set(id, v);
    this.version++;
    const w = this.waiters;
    this.waiters = [];
    for (const wake of w) wake();
  }

  /** The current verdicts as gate results (in the order the conditions were given). */
  results(): CheckResult[] {
    return this.gates.map((g) => {
      const v = this.verdicts.get(g.id)!;
      return { id: g.id, outcome: v.state === "passed" ? { state: "passed" } : { state: "failed", reason: v.reason } };
    });
  }

  allPass(): boolean {
    return [...this.verdicts.values()].every((v) => v.state === "passed");
  }

  /** A token for `changedSince`. */
  get seen(): number {
    return this.version;
  }

  /** Resolves on the next verdict change after `seen` (at once if there was one), or when `signal` aborts. */
  changed(seen: number, signal: AbortSignal): Promise<void> {
    if (this.version !== seen || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.waiters.push(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  stop(): void {
    for (const w of this.watches) w.stop();
    for (const s of this.sandboxes) s.stop();
    const w = this.waiters;
    this.waiters = [];
    for (const wake of w) wake();
  }
}
