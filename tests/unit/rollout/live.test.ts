// Issue 22.4: the live line a rollout shows on its row, and which transitions are kept as permanent lines. PURE.
import assert from "node:assert/strict";
import { planRollout, type PlanMachine } from "../../../provider/rollout/plan";
import { isKeptTransition, liveLine } from "../../../provider/rollout/live";
import { initialStatus, reduceAll, type StatusEvent } from "../../../provider/rollout/status";

const T0 = Date.UTC(2026, 10, 29, 20, 0, 0);
const at = (s: number) => T0 + s * 1000;
const machine = (name: string): PlanMachine => ({
  name, role: name.startsWith("cp") ? "controlplane" : "worker", talosVersion: "v1.12.3", ready: true,
  machineSet: name.startsWith("cp") ? "cp" : "workers",
});

describe("rollout/live", () => {
  const plan = planRollout({
    machines: ["cp-1", "w-1", "w-2", "w-3"].map(machine), targetVersion: "v1.13.2",
    strategy: { workerParallelism: 2 }, healthchecks: ["cluster-prod-ceph"], lastUpgradeVersion: "v1.12.3",
  });
  const upTo = (events: StatusEvent[]) => reduceAll(initialStatus("prod"), [{ type: "RunStarted", at: at(0), plan }, ...events]);

  it("says how far the run is, what it does now and in which wave", () => {
    const held = upTo([
      { type: "GateStarted", at: at(1), wave: 1, attempt: 1, checks: ["cluster-prod-ceph"] },
      { type: "CheckFinished", at: at(2), id: "cluster-prod-ceph", outcome: { state: "failed", reason: "HEALTH_WARN" } },
      { type: "GateHeld", at: at(2), wave: 1, attempt: 1, retryInMs: 30_000 },
    ]);
    assert.equal(liveLine(held, at(242)), '[0/4 0%] gate held 4m0s by "cluster-prod-ceph": HEALTH_WARN (wave 1/3)');
    assert.equal(liveLine(held, at(2)), '[0/4 0%] gate held by "cluster-prod-ceph": HEALTH_WARN (wave 1/3)', "no \"held 0ms\"");
    const draining = upTo([
      { type: "GatePassed", at: at(1), wave: 1, attempt: 1 },
      { type: "NodeStarted", at: at(2), node: "cp-1" },
      { type: "NodeBack", at: at(60), node: "cp-1", version: "v1.13.2" },
      { type: "GatePassed", at: at(61), wave: 2, attempt: 1 },
      { type: "NodeStarted", at: at(62), node: "w-1" },
      { type: "NodeStarted", at: at(62), node: "w-2" },
      { type: "NodeStep", at: at(63), node: "w-1", step: "draining" },
    ]);
    assert.equal(liveLine(draining, at(63)), "[1/4 25%] w-1: draining, w-2: starting (wave 2/3)");
  });

  it("keeps node started, done or failed, gate open, wave done and the run's end; a node's steps and a held gate only live", () => {
    const kept = (e: StatusEvent) => isKeptTransition(e);
    assert.equal(kept({ type: "NodeStarted", at: 0, node: "w-1" }), true);
    assert.equal(kept({ type: "NodeBack", at: 0, node: "w-1", version: "v1.13.2" }), true);
    assert.equal(kept({ type: "NodeFailed", at: 0, node: "w-1", reason: "x" }), true);
    assert.equal(kept({ type: "GatePassed", at: 0, wave: 1, attempt: 1 }), true);
    assert.equal(kept({ type: "WaveDone", at: 0, wave: 1 }), true);
    assert.equal(kept({ type: "RunWaiting", at: 0, reason: "x" }), true);
    assert.equal(kept({ type: "NodeStep", at: 0, node: "w-1", step: "draining" }), false);
    assert.equal(kept({ type: "GateHeld", at: 0, wave: 1, attempt: 1, retryInMs: 1 }), false);
    assert.equal(kept({ type: "HookFinished", at: 0, node: "w-1", phase: "beforeNode", id: "h" }), false);
    assert.equal(kept({ type: "HookFinished", at: 0, node: "w-1", phase: "beforeNode", id: "h", error: "exit 1" }), true);
  });
});
