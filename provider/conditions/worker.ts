// The worker thread a condition is evaluated in (sandbox.ts): compiles the condition it is given once, says so, then
// answers each `{ id, objects }` with the verdict of evaluate.ts. A runaway expression blocks only this thread, which
// the host terminates at the budget.
import { parentPort, workerData } from "node:worker_threads";
import { compileCondition } from "./compile";
import { evaluateCondition, type KubeObject } from "./evaluate";

const port = parentPort!;
const r = compileCondition(workerData.spec);
if (!r.compiled) {
  port.postMessage({ ready: false, error: r.failures.map((f) => `${f.field}: ${f.message}`).join("; ") });
} else {
  const compiled = r.compiled;
  port.on("message", (m: { id: number; objects: KubeObject[] }) => {
    port.postMessage({ id: m.id, verdict: evaluateCondition(compiled, m.objects) });
  });
  port.postMessage({ ready: true });
}
