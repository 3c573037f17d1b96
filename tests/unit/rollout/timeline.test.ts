// The timeline the status keeps for `talos-gate report`: each node's phase marks and each check's holds, as compact
// strings, through the real reducer; and what they cost in the mirror at 1,000 nodes.
import assert from "node:assert/strict";
import { planRollout, type PlanMachine } from "../../../provider/rollout/plan";
import { initialStatus, reduceAll, type StatusEvent, type UpgradeStatus } from "../../../provider/rollout/status";
import { MAX_HOLDS, parseHolds, parseMarks } from "../../../provider/rollout/timeline";

const OLD = "v1.12.3";
const NEW = "v1.13.2";
const CEPH = "cluster-prod-ceph";
const T0 = Date.UTC(2026, 10, 29, 20, 0, 0);
const at = (s: number) => T0 + s * 1000;

function machine(name: string): PlanMachine {
  const role = name.startsWith("cp") ? "controlplane" : "worker";
  return { name, role, talosVersion: OLD, ready: true, machineSet: role === "controlplane" ? "cp" : "workers" };
}

/** The events of one node's upgrade on the LifecycleService path, starting at second `t` (gate at t, node at t+2). */
function nodeEvents(node: string, wave: number, t: number, attempt = 1): StatusEvent[] {
  return [
    { type: "GateStarted", at: at(t), wave, attempt, checks: [CEPH] },
    { type: "CheckFinished", at: at(t + 1), id: CEPH, outcome: { state: "passed" } },
    { type: "GatePassed", at: at(t + 1), wave, attempt },
    { type: "WaveStarted", at: at(t + 2), wave },
    { type: "NodeStarted", at: at(t + 2), node },
    { type: "NodeStep", at: at(t + 3), node, step: "pulling" },
    { type: "NodeStep", at: at(t + 4), node, step: "installing" },
    { type: "NodeStep", at: at(t + 5), node, step: "installing", detail: "retrying: locked" },
    { type: "NodeStep", at: at(t + 6), node, step: "draining" },
    { type: "NodeStep", at: at(t + 7), node, step: "draining", detail: "waiting for etcd" },
    { type: "NodeStep", at: at(t + 8), node, step: "rebooting" },
    { type: "NodeStep", at: at(t + 9), node, step: "waiting" },
    { type: "NodeStep", at: at(t + 12), node, step: "back" },
    { type: "NodeBack", at: at(t + 13), node, version: NEW },
    { type: "WaveDone", at: at(t + 13), wave },
  ];
}

describe("rollout/timeline", () => {
  it("marks the first moment of each phase of a node, relative to the run's start (a repeated step does not move it)", () => {
    const plan = planRollout({ machines: [machine("cp-1"), machine("w-1")], targetVersion: NEW, healthchecks: [CEPH], lastUpgradeVersion: OLD });
    const s = reduceAll(initialStatus("prod"), [{ type: "RunStarted", at: at(0), plan }, ...nodeEvents("cp-1", 1, 10), ...nodeEvents("w-1", 2, 30)]);
    const cp = s.machines.find((m) => m.name === "cp-1")!;
    assert.equal(cp.marks, "g10000 i13000 d16000 r18000 b22000");
    assert.deepEqual(parseMarks(s.machines.find((m) => m.name === "w-1")!.marks), { g: 30000, i: 33000, d: 36000, r: 38000, b: 42000 });
  });

  it("a node started again in the same run keeps only its gate mark; a new run starts a new timeline", () => {
    const plan = planRollout({ machines: [machine("w-1")], targetVersion: NEW, healthchecks: [CEPH], lastUpgradeVersion: OLD });
    const first = reduceAll(initialStatus("prod"), [{ type: "RunStarted", at: at(0), plan }, ...nodeEvents("w-1", 1, 0).slice(0, 9)]);
    assert.equal(first.machines[0].marks, "g0 i3000 d6000");
    const again = reduceAll(first, [{ type: "NodeStarted", at: at(20), node: "w-1" }, { type: "NodeStep", at: at(21), node: "w-1", step: "draining" }]);
    assert.equal(again.machines[0].marks, "g0 d21000");
    const next = reduceAll(again, [{ type: "RunStarted", at: at(100), plan }]);
    assert.equal(next.machines[0].marks, undefined);
    assert.ok(!("marks" in next.machines[0]));
  });

  it("records the spans in which each check held the gate, open until it passes, closed by the gate or the run's end", () => {
    const plan = planRollout({ machines: [machine("w-1"), machine("w-2")], targetVersion: NEW, healthchecks: [CEPH, "db"], lastUpgradeVersion: OLD });
    const s = reduceAll(initialStatus("prod"), [
      { type: "RunStarted", at: at(0), plan },
      { type: "GateStarted", at: at(1), wave: 1, attempt: 1, checks: [CEPH, "db"] },
      { type: "CheckFinished", at: at(2), id: CEPH, outcome: { state: "failed", reason: "HEALTH_WARN" } },
      { type: "CheckFinished", at: at(2), id: "db", outcome: { state: "failed", reason: "lagging" } },
      { type: "GateHeld", at: at(2), wave: 1, attempt: 1, retryInMs: 5000 },
      { type: "GateStarted", at: at(7), wave: 1, attempt: 2, checks: [CEPH, "db"] },
      { type: "CheckFinished", at: at(8), id: "db", outcome: { state: "passed" } },
      { type: "CheckFinished", at: at(9), id: CEPH, outcome: { state: "failed", reason: "HEALTH_WARN" } },
      { type: "GateHeld", at: at(9), wave: 1, attempt: 2, retryInMs: 5000 },
      { type: "GateStarted", at: at(14), wave: 1, attempt: 3, checks: [CEPH, "db"] },
      { type: "CheckFinished", at: at(15), id: CEPH, outcome: { state: "passed" } },
      { type: "CheckFinished", at: at(15), id: "db", outcome: { state: "passed" } },
      { type: "GatePassed", at: at(15), wave: 1, attempt: 3 },
      { type: "GateStarted", at: at(30), wave: 2, attempt: 1, checks: [CEPH, "db"] },
      { type: "CheckFinished", at: at(31), id: CEPH, outcome: { state: "failed", reason: "HEALTH_ERR" } },
      { type: "GateHeld", at: at(31), wave: 2, attempt: 1, retryInMs: 5000 },
    ]);
    const holds = (id: string) => s.healthchecks.find((h) => h.id === id)!.holds;
    assert.equal(holds(CEPH), "2000-15000 31000-");
    assert.equal(holds("db"), "2000-8000 31000-", "db was RUNNING when the wave-2 gate held: it held it too");
    assert.deepEqual(parseHolds(holds(CEPH)), [{ start: 2000, end: 15000 }, { start: 31000 }]);
    const failed = reduceAll(s, [{ type: "RunFailed", at: at(40), reason: "holdTimeout" }]);
    assert.equal(failed.healthchecks.find((h) => h.id === CEPH)!.holds, "2000-15000 31000-40000");
  });

  it(`keeps at most ${MAX_HOLDS} hold spans per check (the latest)`, () => {
    const plan = planRollout({ machines: [machine("w-1")], targetVersion: NEW, healthchecks: [CEPH], lastUpgradeVersion: OLD });
    const events: StatusEvent[] = [{ type: "RunStarted", at: at(0), plan }];
    for (let i = 0; i < MAX_HOLDS + 10; i++) {
      events.push({ type: "GateStarted", at: at(i * 10), wave: 1, attempt: i + 1, checks: [CEPH] },
        { type: "CheckFinished", at: at(i * 10 + 1), id: CEPH, outcome: { state: "failed", reason: "no" } },
        { type: "GateHeld", at: at(i * 10 + 1), wave: 1, attempt: i + 1, retryInMs: 1000 },
        { type: "CheckFinished", at: at(i * 10 + 5), id: CEPH, outcome: { state: "passed" } });
    }
    const holds = parseHolds(reduceAll(initialStatus("prod"), events).healthchecks[0].holds);
    assert.equal(holds.length, MAX_HOLDS);
    assert.deepEqual(holds.at(-1), { start: (MAX_HOLDS + 9) * 10_000 + 1000, end: (MAX_HOLDS + 9) * 10_000 + 5000 });
  });

  it("costs few bytes per node in the mirror at 1,000 nodes (measured and printed)", () => {
    const names = ["cp-1", "cp-2", "cp-3", ...Array.from({ length: 997 }, (_, i) => `worker-${String(i + 1).padStart(4, "0")}`)];
    const plan = planRollout({ machines: names.map(machine), targetVersion: NEW, healthchecks: [CEPH], lastUpgradeVersion: OLD, strategy: { workerParallelism: 1 } });
    // The real reducer on the real 1,000-node status, for every 25th wave (each event copies the 1,000 machines: all
    // of them would take seconds), at the offsets a long run has (25 s per wave: up to seven-digit milliseconds).
    let s: UpgradeStatus = reduceAll(initialStatus("prod"), [{ type: "RunStarted", at: at(0), plan }]);
    const sampled = plan.waves.filter((_, i) => i % 25 === 0 || i === plan.waves.length - 1);
    for (const w of sampled) for (const m of w.machines) s = reduceAll(s, nodeEvents(m.name, w.index, 20 + (w.index - 1) * 25));
    const marked = s.machines.filter((m) => m.marks !== undefined);
    const bytes = (x: unknown) => JSON.stringify(x).length;
    const perNode = marked.reduce((sum, m) => sum + bytes(m) - bytes({ ...m, marks: undefined }), 0) / marked.length;
    const mirror = bytes(s) + perNode * (names.length - marked.length);
    console.log(`      status mirror at 1,000 nodes: the timeline adds ${perNode.toFixed(1)} bytes per node (${Math.round(perNode * names.length)} bytes), ` +
      `${Math.round(mirror)} bytes in all (${(mirror / names.length).toFixed(0)} per node)`);
    assert.ok(marked.length >= 40 && marked.every((m) => Object.keys(parseMarks(m.marks)).length === 5), "every sampled node has its five marks");
    assert.ok(perNode <= 60, `the timeline costs ${perNode} bytes per node`);
  });
});
