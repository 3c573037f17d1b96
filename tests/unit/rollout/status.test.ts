import assert from "node:assert/strict";
import { planRollout, type PlanMachine } from "../../../provider/rollout/plan";
import {
  initialStatus,
  progressLine,
  reduce,
  reduceAll,
  type StatusEvent,
  type UpgradeStatus,
} from "../../../provider/rollout/status";

const OLD = "v1.12.3";
const NEW = "v1.13.2";
const CEPH = "cluster-prod-ceph";
const DB = "cluster-prod-db";
const T0 = Date.UTC(2026, 10, 29, 20, 0, 0);
const at = (s: number) => T0 + s * 1000;
const iso = (s: number) => new Date(at(s)).toISOString();

function machine(name: string, over: Partial<PlanMachine> = {}): PlanMachine {
  const role = name.startsWith("cp") ? "controlplane" : "worker";
  return { name, role, talosVersion: OLD, ready: true, machineSet: role === "controlplane" ? "cp" : "workers", ...over };
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object") {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

/** Applies events one by one, recording the prefixed progress line of each. */
function run(start: UpgradeStatus, events: StatusEvent[]) {
  let s = start;
  const lines: Array<string | undefined> = [];
  const snapshots: UpgradeStatus[] = [];
  for (const e of events) {
    deepFreeze(s);
    s = reduce(s, e);
    lines.push(progressLine(e, s));
    snapshots.push(s);
  }
  return { status: s, lines, snapshots };
}

describe("rollout/status", () => {
  const plan = planRollout({
    machines: [machine("cp-1"), machine("cp-2"), machine("w-1"), machine("w-2"), machine("w-3")],
    targetVersion: NEW,
    strategy: { workerParallelism: 2 },
    healthchecks: [CEPH],
    lastUpgradeVersion: OLD,
  });

  it("starts idle (Done, empty status and step)", () => {
    const s = initialStatus("prod", { lastUpgradeVersion: OLD });
    assert.equal(s.phase, "Done");
    assert.equal(s.status, "");
    assert.equal(s.step, "");
    assert.equal(s.lastUpgradeVersion, OLD);
    assert.equal(s.currentUpgradeVersion, "");
    assert.deepEqual(s.history, []);
  });

  it("follows a full scripted run with Omni's exact status and step texts and one line per transition", () => {
    const script: Array<[StatusEvent, string, string, string | undefined]> = [
      // event, expected status, expected step, expected progress line
      [{ type: "RunStarted", at: at(0), plan }, "updating machines 1/5", "no machines are currently upgrading",
        "[talos-gate/prod] upgrading 5 of 5 machines to v1.13.2 in 4 waves"],
      [{ type: "GateStarted", at: at(1), wave: 1, attempt: 1, checks: [CEPH] }, "updating machines 1/5",
        'waiting for healthchecks to pass: "cluster-prod-ceph": waiting to complete',
        "[talos-gate/prod] gate before wave 1/4: running 1 healthcheck (attempt 1)"],
      [{ type: "CheckFinished", at: at(3), id: CEPH, outcome: { state: "failed", reason: "ceph is not healthy\nHEALTH_WARN 1 osd down" } },
        "updating machines 1/5", 'waiting for healthchecks to pass: "cluster-prod-ceph": ceph is not healthy\nHEALTH_WARN 1 osd down',
        undefined],
      [{ type: "GateHeld", at: at(3), wave: 1, attempt: 1, retryInMs: 30_000 }, "updating machines 1/5",
        'waiting for healthchecks to pass: "cluster-prod-ceph": ceph is not healthy\nHEALTH_WARN 1 osd down',
        '[talos-gate/prod] gate held: "cluster-prod-ceph": ceph is not healthy HEALTH_WARN 1 osd down (attempt 1, next in 30s)'],
      [{ type: "GateStarted", at: at(33), wave: 1, attempt: 2, checks: [CEPH] }, "updating machines 1/5",
        'waiting for healthchecks to pass: "cluster-prod-ceph": waiting to complete',
        "[talos-gate/prod] gate before wave 1/4: running 1 healthcheck (attempt 2)"],
      [{ type: "CheckFinished", at: at(35), id: CEPH, outcome: { state: "passed" } }, "updating machines 1/5",
        "no machines are currently upgrading", '[talos-gate/prod] healthcheck "cluster-prod-ceph" passed'],
      [{ type: "GatePassed", at: at(35), wave: 1, attempt: 2 }, "updating machines 1/5", "no machines are currently upgrading",
        "[talos-gate/prod] gate open: 1/1 healthcheck passed (attempt 2)"],
      [{ type: "WaveStarted", at: at(35), wave: 1 }, "updating machines 1/5", "no machines are currently upgrading",
        "[talos-gate/prod] wave 1/4: cp-1 (controlplane)"],
      [{ type: "NodeStarted", at: at(40), node: "cp-1" }, "updating machines 1/5", "current machine: cp-1",
        "[talos-gate/prod] node cp-1: upgrading v1.12.3 → v1.13.2 (1/5)"],
      [{ type: "NodeStep", at: at(50), node: "cp-1", step: "draining" }, "updating machines 1/5", "current machine: cp-1",
        "[talos-gate/prod] node cp-1: draining"],
      [{ type: "NodeStep", at: at(60), node: "cp-1", step: "rebooting", detail: "boot id\n1234" }, "updating machines 1/5",
        "current machine: cp-1", "[talos-gate/prod] node cp-1: rebooting (boot id 1234)"],
      [{ type: "NodeStep", at: at(81), node: "cp-1", step: "back" }, "updating machines 1/5", "current machine: cp-1", undefined],
      [{ type: "NodeBack", at: at(81), node: "cp-1", version: NEW }, "updating machines 2/5", "no machines are currently upgrading",
        "[talos-gate/prod] node cp-1: back on v1.13.2 after 41s"],
      [{ type: "WaveDone", at: at(81), wave: 1 }, "updating machines 2/5", "no machines are currently upgrading",
        "[talos-gate/prod] wave 1/4 done"],
      [{ type: "GateStarted", at: at(82), wave: 2, attempt: 1, checks: [CEPH] }, "updating machines 2/5",
        'waiting for healthchecks to pass: "cluster-prod-ceph": waiting to complete',
        "[talos-gate/prod] gate before wave 2/4: running 1 healthcheck (attempt 1)"],
      [{ type: "CheckFinished", at: at(84), id: CEPH, outcome: { state: "passed" } }, "updating machines 2/5",
        "no machines are currently upgrading", '[talos-gate/prod] healthcheck "cluster-prod-ceph" passed'],
      [{ type: "GatePassed", at: at(84), wave: 2, attempt: 1 }, "updating machines 2/5", "no machines are currently upgrading",
        "[talos-gate/prod] gate open: 1/1 healthcheck passed (attempt 1)"],
      [{ type: "NodeStarted", at: at(85), node: "cp-2" }, "updating machines 2/5", "current machine: cp-2",
        "[talos-gate/prod] node cp-2: upgrading v1.12.3 → v1.13.2 (2/5)"],
      [{ type: "NodeBack", at: at(210), node: "cp-2", version: NEW }, "updating machines 3/5", "no machines are currently upgrading",
        "[talos-gate/prod] node cp-2: back on v1.13.2 after 2m5s"],
      [{ type: "WaveDone", at: at(210), wave: 2 }, "updating machines 3/5", "no machines are currently upgrading",
        "[talos-gate/prod] wave 2/4 done"],
      [{ type: "GatePassed", at: at(211), wave: 3, attempt: 1 }, "updating machines 3/5", "no machines are currently upgrading",
        "[talos-gate/prod] gate open: 1/1 healthcheck passed (attempt 1)"],
      [{ type: "WaveStarted", at: at(211), wave: 3 }, "updating machines 3/5", "no machines are currently upgrading",
        "[talos-gate/prod] wave 3/4: w-1, w-2 (worker)"],
      [{ type: "NodeStarted", at: at(212), node: "w-1" }, "updating machines 3/5", "current machine: w-1",
        "[talos-gate/prod] node w-1: upgrading v1.12.3 → v1.13.2 (3/5)"],
      [{ type: "NodeStarted", at: at(212), node: "w-2" }, "updating machines 3/5", "current machines: w-1, w-2",
        "[talos-gate/prod] node w-2: upgrading v1.12.3 → v1.13.2 (4/5)"],
      [{ type: "NodeBack", at: at(250), node: "w-2", version: NEW }, "updating machines 4/5", "current machine: w-1",
        "[talos-gate/prod] node w-2: back on v1.13.2 after 38s"],
      [{ type: "NodeBack", at: at(260), node: "w-1", version: NEW }, "updating machines 5/5", "no machines are currently upgrading",
        "[talos-gate/prod] node w-1: back on v1.13.2 after 48s"],
      [{ type: "WaveDone", at: at(260), wave: 3 }, "updating machines 5/5", "no machines are currently upgrading",
        "[talos-gate/prod] wave 3/4 done"],
      [{ type: "GatePassed", at: at(261), wave: 4, attempt: 1 }, "updating machines 5/5", "no machines are currently upgrading",
        "[talos-gate/prod] gate open: 1/1 healthcheck passed (attempt 1)"],
      [{ type: "NodeStarted", at: at(262), node: "w-3" }, "updating machines 5/5", "current machine: w-3",
        "[talos-gate/prod] node w-3: upgrading v1.12.3 → v1.13.2 (5/5)"],
      [{ type: "NodeBack", at: at(300), node: "w-3", version: NEW }, "updating", "no machines are currently upgrading",
        "[talos-gate/prod] node w-3: back on v1.13.2 after 38s"],
      [{ type: "WaveDone", at: at(300), wave: 4 }, "updating", "no machines are currently upgrading", "[talos-gate/prod] wave 4/4 done"],
      [{ type: "RunFinished", at: at(301) }, "", "", "[talos-gate/prod] done: all 5 machines on v1.13.2 after 5m1s"],
    ];
    const { status, lines, snapshots } = run(initialStatus("prod", { lastUpgradeVersion: OLD }), script.map((x) => x[0]));
    script.forEach(([e, st, step, line], i) => {
      assert.equal(snapshots[i].status, st, `status after #${i} ${e.type}`);
      assert.equal(snapshots[i].step, step, `step after #${i} ${e.type}`);
      assert.equal(lines[i], line, `line after #${i} ${e.type}`);
    });

    // versions: in flight, then converged
    assert.equal(snapshots[0].phase, "Upgrading");
    assert.equal(snapshots[0].currentUpgradeVersion, NEW);
    assert.equal(snapshots[0].lastUpgradeVersion, OLD);
    assert.equal(status.phase, "Done");
    assert.equal(status.currentUpgradeVersion, "");
    assert.equal(status.lastUpgradeVersion, NEW);
    assert.equal(status.error, "");
    assert.equal(status.startedAt, iso(0));
    assert.equal(status.finishedAt, iso(301));

    // the hold is recorded, then cleared when the gate opens
    const held = snapshots[3];
    assert.equal(held.gate, "held");
    assert.equal(held.heldSince, iso(3));
    assert.equal(held.nextRetryAt, iso(33));
    assert.equal(snapshots[6].heldSince, undefined);
    assert.equal(snapshots[6].nextRetryAt, undefined);

    // per-healthcheck state: the last failure stays visible while re-running, is cleared on pass
    assert.deepEqual(snapshots[4].healthchecks, [
      { id: CEPH, state: "RUNNING", attempts: 2, detail: "waiting to complete", lastReason: "ceph is not healthy HEALTH_WARN 1 osd down", lastRun: iso(33), holds: "3000-" },
    ]);
    assert.deepEqual(status.healthchecks, [{ id: CEPH, state: "PASSED", attempts: 3, detail: "", lastRun: iso(82), holds: "3000-35000" }], "attempts count every evaluation of the run");

    // per-machine state
    assert.deepEqual(status.machines.find((m) => m.name === "cp-1"), {
      name: "cp-1", role: "controlplane", machineSet: "cp", from: OLD, to: NEW, state: "done", wave: 1, step: "back",
      version: NEW, started: iso(40), finished: iso(81), durationMs: 41_000, marks: "g1000 d50000 r60000 b81000",
    });
    assert.deepEqual(status.machines.map((m) => [m.name, m.state, m.wave]), [
      ["cp-1", "done", 1], ["cp-2", "done", 2], ["w-1", "done", 3], ["w-2", "done", 3], ["w-3", "done", 4],
    ]);

    // history: every line, without the prefix, with its timestamp
    const expected = script.map((x, i) => [x[3], i] as const).filter(([l]) => l !== undefined);
    assert.equal(status.history.length, expected.length);
    assert.deepEqual(status.history[0], { at: iso(0), event: "RunStarted", line: "upgrading 5 of 5 machines to v1.13.2 in 4 waves" });
    assert.deepEqual(status.history.at(-1), { at: iso(301), event: "RunFinished", line: "done: all 5 machines on v1.13.2 after 5m1s" });
  });

  it("lists several non-passed checks in order and keeps each failure truncated", () => {
    const events: StatusEvent[] = [
      { type: "RunStarted", at: at(0), plan: planRollout({ machines: [machine("w-1")], targetVersion: NEW, healthchecks: [CEPH, DB] }) },
      { type: "GateStarted", at: at(1), wave: 1, attempt: 1, checks: [CEPH, DB] },
      { type: "CheckFinished", at: at(2), id: DB, outcome: { state: "failed", reason: "x".repeat(300) } },
    ];
    const s = reduceAll(initialStatus("prod"), events);
    assert.equal(s.step, `waiting for healthchecks to pass: "cluster-prod-ceph": waiting to complete; "cluster-prod-db": ${"x".repeat(256)}...`);
    const h = reduce(s, { type: "GateHeld", at: at(2), wave: 1, attempt: 1, retryInMs: 5000 });
    assert.equal(
      progressLine({ type: "GateHeld", at: at(2), wave: 1, attempt: 1, retryInMs: 5000 }, h),
      `[talos-gate/prod] gate held: "cluster-prod-ceph": waiting to complete; "cluster-prod-db": ${"x".repeat(256)}... (attempt 1, next in 5s)`,
    );
    const passed = reduce(h, { type: "CheckFinished", at: at(3), id: CEPH, outcome: { state: "passed" } });
    assert.equal(passed.step, `waiting for healthchecks to pass: "cluster-prod-db": ${"x".repeat(256)}...`);
  });

  it("waits for the cluster to be ready, then returns to the machine step", () => {
    const s1 = reduceAll(initialStatus("prod"), [
      { type: "RunStarted", at: at(0), plan },
      { type: "WaitingForReady", at: at(1), notReady: ["w-2", "w-3"] },
    ]);
    assert.equal(s1.step, "waiting for the cluster to be ready");
    assert.equal(s1.history.at(-1)!.line, "waiting for the cluster to be ready: not ready: w-2, w-3");
    const s2 = reduce(s1, { type: "ClusterReady", at: at(2) });
    assert.equal(s2.step, "no machines are currently upgrading");
    assert.equal(progressLine({ type: "ClusterReady", at: at(2) }, s2), "[talos-gate/prod] cluster ready");
  });

  it("reverts without gating: Omni's reverting status, no currentUpgradeVersion", () => {
    const revert = planRollout({
      machines: [machine("cp-1", { talosVersion: NEW }), machine("w-1", { talosVersion: NEW }), machine("w-2")],
      targetVersion: OLD,
      lastUpgradeVersion: OLD,
      healthchecks: [CEPH],
    });
    const { status, lines, snapshots } = run(initialStatus("prod", { lastUpgradeVersion: OLD }), [
      { type: "RunStarted", at: at(0), plan: revert },
      { type: "NodeStarted", at: at(1), node: "cp-1" },
      { type: "NodeBack", at: at(31), node: "cp-1", version: OLD },
      { type: "NodeStarted", at: at(32), node: "w-1" },
      { type: "NodeBack", at: at(62), node: "w-1", version: OLD },
      { type: "RunFinished", at: at(63) },
    ]);
    assert.equal(snapshots[0].phase, "Reverting");
    assert.equal(snapshots[0].currentUpgradeVersion, "");
    assert.deepEqual(snapshots.map((s) => s.status), [
      "reverting update 2/3",
      "reverting update 2/3",
      "reverting update 3/3",
      "reverting update 3/3",
      "reverting update 3/3",
      "",
    ]);
    assert.equal(snapshots[1].step, "current machine: cp-1");
    assert.equal(lines[0], "[talos-gate/prod] reverting 2 of 3 machines to v1.12.3 in 2 waves (not gated by your checks)");
    assert.equal(lines[1], "[talos-gate/prod] node cp-1: upgrading v1.13.2 → v1.12.3 (2/3)");
    assert.equal(status.phase, "Done");
    assert.equal(status.lastUpgradeVersion, OLD);
    assert.deepEqual(status.machines.find((m) => m.name === "w-2")!.state, "skipped");
  });

  it("a plan with nothing to do is Done at once", () => {
    const done = planRollout({ machines: [machine("cp-1", { talosVersion: NEW })], targetVersion: NEW, lastUpgradeVersion: OLD });
    const s = reduce(initialStatus("prod", { lastUpgradeVersion: OLD }), { type: "RunStarted", at: at(0), plan: done });
    assert.equal(s.phase, "Done");
    assert.equal(s.status, "");
    assert.equal(s.step, "");
    assert.equal(s.lastUpgradeVersion, NEW);
    assert.equal(s.currentUpgradeVersion, "");
    assert.equal(s.history[0].line, "nothing to do: 1 machine already on v1.13.2");
  });

  it("fails with a collapsed, truncated error and keeps status and step as they were", () => {
    const reason = `healthchecks held the upgrade longer than holdTimeout 1h0m0s\n\tbefore wave 1/4: ${"é".repeat(200)}`;
    const { status, lines } = run(initialStatus("prod", { lastUpgradeVersion: OLD }), [
      { type: "RunStarted", at: at(0), plan },
      { type: "GateStarted", at: at(1), wave: 1, attempt: 1, checks: [CEPH] },
      { type: "CheckFinished", at: at(2), id: CEPH, outcome: { state: "failed", reason: "ceph is not healthy" } },
      { type: "GateHeld", at: at(2), wave: 1, attempt: 1, retryInMs: 30_000 },
      { type: "RunFailed", at: at(3600), reason },
    ]);
    assert.equal(status.phase, "Failed");
    assert.equal(status.status, "updating machines 1/5");
    assert.equal(status.step, 'waiting for healthchecks to pass: "cluster-prod-ceph": ceph is not healthy');
    const prefix = "healthchecks held the upgrade longer than holdTimeout 1h0m0s before wave 1/4: ";
    const expectedError = prefix + "é".repeat(Math.floor((256 - prefix.length) / 2)) + "...";
    assert.equal(status.error, expectedError);
    assert.ok(Buffer.byteLength(status.error) <= 259);
    assert.equal(status.lastUpgradeVersion, OLD);
    assert.equal(status.currentUpgradeVersion, NEW);
    assert.equal(status.heldSince, undefined);
    assert.equal(status.gate, "idle", "a failed run holds nothing any more");
    assert.equal(lines.at(-1), `[talos-gate/prod] failed: ${expectedError}`);
  });

  it("waits at a closed window: phase Waiting, the wait as the step, no error, the upgrade still in flight", () => {
    const reason = "waiting for the maintenance window: next opens Sat 2026-08-08 02:00 Europe/Berlin (00:00 UTC), in 3h12m";
    const { status, lines } = run(initialStatus("prod", { lastUpgradeVersion: OLD }), [
      { type: "RunStarted", at: at(0), plan },
      { type: "GateStarted", at: at(1), wave: 1, attempt: 1, checks: [CEPH] },
      { type: "GateHeld", at: at(2), wave: 1, attempt: 1, retryInMs: 30_000 },
      { type: "RunWaiting", at: at(60), reason },
    ]);
    assert.equal(status.phase, "Waiting");
    assert.equal(status.step, reason);
    assert.equal(status.status, "updating machines 1/5");
    assert.equal(status.error, "");
    assert.equal(status.gate, "idle", "a waiting run holds nothing");
    assert.equal(status.heldSince, undefined);
    assert.equal(status.currentUpgradeVersion, NEW);
    assert.equal(status.lastUpgradeVersion, OLD, "not converged");
    assert.equal(status.finishedAt, iso(60));
    assert.equal(lines.at(-1), `[talos-gate/prod] ${reason}`);
    const next = reduce(status, { type: "RunStarted", at: at(100), plan });
    assert.equal(next.phase, "Upgrading", "the next run inside a window continues");
  });

  it("records a node failure on the machine", () => {
    const { status, lines } = run(initialStatus("prod"), [
      { type: "RunStarted", at: at(0), plan },
      { type: "NodeStarted", at: at(10), node: "cp-1" },
      { type: "NodeFailed", at: at(910), node: "cp-1", reason: "not back within 15m0s:\nboot id unchanged" },
      { type: "RunFailed", at: at(910), reason: "node cp-1 was not back" },
    ]);
    const m = status.machines.find((x) => x.name === "cp-1")!;
    assert.equal(m.state, "failed");
    assert.equal(m.error, "not back within 15m0s: boot id unchanged");
    assert.equal(m.durationMs, 900_000);
    assert.equal(lines[2], "[talos-gate/prod] node cp-1: failed: not back within 15m0s: boot id unchanged");
    assert.equal(status.step, "current machine: cp-1");
    assert.equal(status.status, "updating machines 1/5");
    assert.equal(status.error, "node cp-1 was not back");
  });

  it("a new run resets machines, keeps the last state of checks still configured, and clears the error", () => {
    const failed = reduceAll(initialStatus("prod", { lastUpgradeVersion: OLD }), [
      { type: "RunStarted", at: at(0), plan: planRollout({ machines: [machine("w-1")], targetVersion: NEW, healthchecks: [CEPH, DB] }) },
      { type: "GateStarted", at: at(1), wave: 1, attempt: 1, checks: [CEPH, DB] },
      { type: "CheckFinished", at: at(2), id: CEPH, outcome: { state: "failed", reason: "down" } },
      { type: "RunFailed", at: at(3), reason: "held" },
    ]);
    const again = reduce(failed, { type: "RunStarted", at: at(100), plan });
    assert.equal(again.phase, "Upgrading");
    assert.equal(again.error, "");
    assert.equal(again.finishedAt, undefined);
    assert.equal(again.machines.length, 5);
    assert.deepEqual(again.healthchecks, [{ id: CEPH, state: "FAILED", attempts: 0, detail: "down", lastReason: "down", lastRun: iso(1) }]);
    assert.equal(again.history.length, failed.history.length + 1, "history carries over");
  });

  it("bounds the history to the last N transitions", () => {
    const events: StatusEvent[] = [{ type: "RunStarted", at: at(0), plan }];
    for (let w = 1; w <= 4; w++) events.push({ type: "WaveDone", at: at(w), wave: w });
    const s = reduceAll(initialStatus("prod", { historyLimit: 3 }), events);
    assert.deepEqual(s.history.map((h) => h.line), ["wave 2/4 done", "wave 3/4 done", "wave 4/4 done"]);
    const none = reduceAll(initialStatus("prod", { historyLimit: 0 }), events);
    assert.deepEqual(none.history, []);
  });

  it("ignores events for unknown nodes without throwing", () => {
    const s = reduceAll(initialStatus("prod"), [
      { type: "RunStarted", at: at(0), plan },
      { type: "NodeBack", at: at(1), node: "ghost", version: NEW },
    ]);
    assert.equal(s.status, "updating machines 1/5");
  });

  it("the status is JSON-serialisable and round-trips", () => {
    const s = reduceAll(initialStatus("prod"), [
      { type: "RunStarted", at: at(0), plan },
      { type: "NodeStarted", at: at(1), node: "cp-1" },
    ]);
    assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
  });
});
