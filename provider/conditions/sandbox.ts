// Evaluation off the event loop: each condition runs in its own worker thread (worker.ts), and an evaluation that
// does not answer within its wall-clock budget is stopped by terminating the thread; the condition then holds the gate
// saying so, and the next watch event starts a fresh thread. The provider's own timers (Lease renewal, holdTimeout,
// nodeTimeout, cancel) keep running whatever an expression does. The budget runs from when the thread has compiled
// the condition, so a slow start on a loaded machine is not charged to the expression; the start itself is bounded too.
import * as path from "node:path";
import { Worker } from "node:worker_threads";
import type { CompiledCondition } from "./compile";
import { maxSelection } from "./cost";
import type { ConditionVerdict, KubeObject } from "./evaluate";
import * as M from "./messages";

/** Wall-clock budget of one evaluation (a condition over thousands of objects takes milliseconds). */
export const EVALUATION_BUDGET_MS = 1_000;
/** Bound on starting a thread and compiling the condition in it. */
const START_BOUND_MS = 30_000;

type Reply = { ready: true } | { ready: false; error: string } | { id: number; verdict: ConditionVerdict };

export class ConditionSandbox {
  private worker: Worker | undefined;
  private ready: Promise<Worker> | undefined;
  private seq = 0;
  private closed = false;

  constructor(private readonly compiled: CompiledCondition, private readonly budgetMs = EVALUATION_BUDGET_MS) {}

  /** The verdict over `objects`; never rejects (a crash or an overrun is a held verdict with its reason). */
  async evaluate(objects: readonly KubeObject[]): Promise<ConditionVerdict> {
    const max = maxSelection(this.compiled.nesting);
    // Refused before the objects are copied to the thread.
    if (objects.length > max) return { state: "held", cause: "cost", reason: M.selectionTooLarge(objects.length, max, this.compiled.nesting) };
    if (this.closed) return { state: "held", cause: "error", reason: M.evaluationCrashed(M.watchStopped()) };
    let worker: Worker;
    try {
      worker = await (this.ready ??= this.start());
    } catch (err) {
      this.kill();
      return { state: "held", cause: "error", reason: M.evaluationCrashed((err as Error).message) };
    }
    return this.ask(worker, objects);
  }

  private ask(worker: Worker, objects: readonly KubeObject[]): Promise<ConditionVerdict> {
    const id = ++this.seq;
    return new Promise((resolve) => {
      const finish = (v: ConditionVerdict, kill = false) => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
        if (kill) this.kill();
        resolve(v);
      };
      const onMessage = (m: Reply) => {
        if ("id" in m && m.id === id) finish(m.verdict);
      };
      const onError = (e: Error) => finish({ state: "held", cause: "error", reason: M.evaluationCrashed(e.message) }, true);
      const onExit = (code: number) => finish({ state: "held", cause: "error", reason: M.evaluationCrashed(M.workerExited(code)) }, true);
      const timer = setTimeout(() => finish({ state: "held", cause: "cost", reason: M.evaluationOverBudget(this.budgetMs, objects.length) }, true), this.budgetMs);
      worker.on("message", onMessage);
      worker.on("error", onError);
      worker.on("exit", onExit);
      worker.postMessage({ id, objects });
    });
  }

  private start(): Promise<Worker> {
    const worker = new Worker(path.join(__dirname, "worker.js"), { workerData: { spec: this.compiled.spec } });
    worker.unref(); // never what keeps the provider alive
    this.worker = worker;
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", done);
        worker.off("exit", onExit);
        if (err) reject(err);
        else resolve(worker);
      };
      const onMessage = (m: Reply) => {
        if ("ready" in m) done(m.ready ? undefined : new Error(m.error));
      };
      const onExit = (code: number) => done(new Error(M.workerExited(code)));
      const timer = setTimeout(() => done(new Error(M.workerNotStarted(START_BOUND_MS / 1000))), START_BOUND_MS);
      worker.on("message", onMessage);
      worker.on("error", done);
      worker.on("exit", onExit);
    });
  }

  /** Ends the thread for good (an evaluation in flight is abandoned). */
  stop(): void {
    this.closed = true;
    this.kill();
  }

  /** Ends the thread (an evaluation in flight is abandoned); the next evaluation starts a fresh one. */
  private kill(): void {
    const w = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    if (w) void w.terminate().catch(() => undefined);
  }
}
