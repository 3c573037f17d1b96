// Control planes for the sims of a test run, reused: a sim's stop() hands its control plane back, it is reset to the
// state it started in (tests/support/controlPlaneReset.ts: every object that was not there at the start deleted, and
// checked gone) and the next sim of this process takes it. Starting one costs ~5 CPU-seconds and 6-15 s; a reset ~1.2
// (measured after a small sim), and the suite is CPU-bound on 2 cores. A control plane that cannot be reset (its API server down,
// objects that will not go) is stopped and replaced by a fresh one. TALOS_GATE_TEST_FRESH_CONTROL_PLANES=1 starts a
// fresh one for every sim (to tell a leak between files from a real failure).
import { ControlPlane, startControlPlane } from "../../sim/controlplane";
import { Baseline, resetControlPlane, takeBaseline } from "./controlPlaneReset";
import { onRunEnd } from "./fixtures";

interface Pooled {
  cp: ControlPlane;
  baseline: Baseline;
}

/** Control planes handed back: each resolves once its reset is done (undefined when it failed and it was stopped). */
const idle: Promise<Pooled | undefined>[] = [];
const live = new Set<ControlPlane>();
let registered = false;
export const resets = { reused: 0, started: 0, failed: [] as string[], requests: [] as number[] };

async function start(): Promise<Pooled> {
  const cp = await startControlPlane();
  live.add(cp);
  resets.started++;
  try {
    return { cp, baseline: await takeBaseline(cp) };
  } catch (err) {
    live.delete(cp);
    await cp.stop();
    throw err;
  }
}

async function reset(p: Pooled): Promise<Pooled | undefined> {
  try {
    resets.requests.push((await resetControlPlane(p.cp, p.baseline)).requests.length);
    return p;
  } catch (err) {
    resets.failed.push((err as Error).message);
    live.delete(p.cp);
    await p.cp.stop().catch(() => undefined);
    return undefined;
  }
}

/** A control plane holding nothing but what it started with; its stop() hands it back for the next sim. */
export async function freshControlPlane(): Promise<ControlPlane> {
  if (!registered) {
    registered = true;
    onRunEnd(async () => {
      await Promise.all(idle.splice(0));
      const failed = resets.failed.length ? `; resets that failed (each replaced by a fresh one): ${resets.failed.join(" | ")}` : "";
      const requests = resets.requests.length ? ` (API requests per reset: ${Math.min(...resets.requests)}–${Math.max(...resets.requests)})` : "";
      process.stdout.write(`\ncontrol planes for sims: ${resets.started} started, ${resets.reused} reused after a reset${requests}${failed}\n`);
      await Promise.all([...live].map((cp) => cp.stop().catch(() => undefined)));
      live.clear();
    });
  }
  let pooled: Pooled | undefined;
  while (!pooled && idle.length) pooled = await idle.shift();
  if (pooled) resets.reused++;
  const p = pooled ?? (await start());
  if (process.env.TALOS_GATE_TEST_FRESH_CONTROL_PLANES === "1") {
    return { ...p.cp, stop: async () => { live.delete(p.cp); await p.cp.stop(); } };
  }
  let handedBack = false;
  return {
    ...p.cp,
    async stop() {
      if (handedBack) return;
      handedBack = true;
      idle.push(reset(p));
    },
  };
}
