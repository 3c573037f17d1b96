import assert from "node:assert/strict";
import fc from "fast-check";
import { convergedVersion, describePlan, detectMode, planRollout, PlanError, type PlanMachine, type Plan } from "../../../provider/rollout/plan";
import { quorumLossPlanLines } from "../../../provider/rollout/quorum";

const OLD = "v1.12.3";
const NEW = "v1.13.2";
const CHECKS = ["cluster-prod-ceph", "cluster-prod-db"];

function m(name: string, over: Partial<PlanMachine> = {}): PlanMachine {
  const role = over.role ?? (name.startsWith("cp") ? "controlplane" : "worker");
  return {
    name,
    role,
    talosVersion: OLD,
    ready: true,
    machineSet: role === "controlplane" ? "control-planes" : "workers",
    ...over,
  };
}

const waveNames = (p: Plan) => p.waves.map((w) => w.machines.map((x) => x.name));

describe("rollout/plan", () => {
  describe("detectMode", () => {
    it("is done when every machine is at the target", () => {
      assert.equal(detectMode([m("cp-1", { talosVersion: NEW }), m("w-1", { talosVersion: "1.13.2" })], NEW, OLD), "done");
    });
    it("is upgrading when the target differs from the last converged version", () => {
      assert.equal(detectMode([m("cp-1"), m("w-1")], NEW, OLD), "upgrading");
      assert.equal(detectMode([m("cp-1"), m("w-1")], NEW, undefined), "upgrading");
      assert.equal(detectMode([m("cp-1"), m("w-1")], NEW, ""), "upgrading");
    });
    it("is reverting when the target equals lastUpgradeVersion while nodes are mixed", () => {
      const mixed = [m("cp-1", { talosVersion: NEW }), m("w-1", { talosVersion: OLD })];
      assert.equal(detectMode(mixed, OLD, OLD), "reverting");
      assert.equal(detectMode(mixed, "1.12.3", OLD), "reverting", "leading v does not matter");
    });
    it("is reverting (as Omni) when the target equals lastUpgradeVersion and any node differs", () => {
      assert.equal(detectMode([m("cp-1", { talosVersion: NEW })], OLD, OLD), "reverting");
    });
    it("counts a machine with an unknown version as not at the target", () => {
      assert.equal(detectMode([m("cp-1", { talosVersion: undefined })], NEW, OLD), "upgrading");
    });
  });

  describe("planRollout ordering", () => {
    it("upgrades control planes strictly first, one at a time, then workers, sorted by name", () => {
      const p = planRollout({
        machines: [m("w-2"), m("cp-3"), m("w-1"), m("cp-1"), m("cp-2")],
        targetVersion: NEW,
        healthchecks: CHECKS,
        lastUpgradeVersion: OLD,
      });
      assert.equal(p.mode, "upgrading");
      assert.deepEqual(waveNames(p), [["cp-1"], ["cp-2"], ["cp-3"], ["w-1"], ["w-2"]]);
      assert.deepEqual(p.waves.map((w) => w.index), [1, 2, 3, 4, 5]);
      assert.deepEqual(p.waves.map((w) => w.role), ["controlplane", "controlplane", "controlplane", "worker", "worker"]);
      for (const w of p.waves) assert.deepEqual(w.gatedBy, CHECKS);
      assert.deepEqual(p.waves[0].machines[0], {
        name: "cp-1",
        role: "controlplane",
        machineSet: "control-planes",
        from: OLD,
        to: NEW,
        ready: true,
      });
      assert.equal(p.total, 5);
      assert.equal(p.pending, 5);
      assert.equal(p.target, NEW);
    });

    it("normalizes the target to a leading v", () => {
      const p = planRollout({ machines: [m("cp-1")], targetVersion: "1.13.2" });
      assert.equal(p.target, NEW);
      assert.equal(p.waves[0].machines[0].to, NEW);
    });

    it("keeps control planes one at a time whatever the worker parallelism", () => {
      const p = planRollout({
        machines: [m("cp-1"), m("cp-2"), m("w-1"), m("w-2"), m("w-3")],
        targetVersion: NEW,
        strategy: { workerParallelism: 5 },
      });
      assert.deepEqual(waveNames(p), [["cp-1"], ["cp-2"], ["w-1", "w-2", "w-3"]]);
      assert.deepEqual(p.groups.map((g) => [g.role, g.parallelism, g.quota, g.batchSize]), [
        ["controlplane", 1, 1, 1],
        ["worker", 5, 5, 5],
      ]);
    });

    it("batches workers by per-role parallelism", () => {
      const p = planRollout({
        machines: ["w-5", "w-4", "w-3", "w-2", "w-1"].map((n) => m(n)),
        targetVersion: NEW,
        strategy: { workerParallelism: 2 },
      });
      assert.deepEqual(waveNames(p), [["w-1", "w-2"], ["w-3", "w-4"], ["w-5"]]);
      assert.ok(p.waves.every((w) => w.machineSet === undefined));
    });

    it("groups workers per machine set, sets in name order, each with its own parallelism", () => {
      const machines = [
        m("cp-1"),
        m("big-1", { machineSet: "workers-big" }),
        m("big-2", { machineSet: "workers-big" }),
        m("big-3", { machineSet: "workers-big" }),
        m("a-1", { machineSet: "workers-a" }),
        m("a-2", { machineSet: "workers-a" }),
      ];
      const p = planRollout({ machines, targetVersion: NEW, strategy: { machineSetParallelism: { "workers-big": 2 } } });
      assert.deepEqual(waveNames(p), [["cp-1"], ["a-1"], ["a-2"], ["big-1", "big-2"], ["big-3"]]);
      assert.deepEqual(p.waves.map((w) => w.machineSet), [undefined, "workers-a", "workers-a", "workers-big", "workers-big"]);
      // workerParallelism is the default of sets without an entry
      const q = planRollout({
        machines,
        targetVersion: NEW,
        strategy: { workerParallelism: 3, groupWorkersBy: "machineSet" },
      });
      assert.deepEqual(waveNames(q), [["cp-1"], ["a-1", "a-2"], ["big-1", "big-2", "big-3"]]);
    });

    it("per-role grouping mixes machine sets in one name order", () => {
      const p = planRollout({
        machines: [m("b-1", { machineSet: "s2" }), m("a-1", { machineSet: "s1" }), m("c-1", { machineSet: "s1" })],
        targetVersion: NEW,
        strategy: { workerParallelism: 2, groupWorkersBy: "role" },
      });
      assert.deepEqual(waveNames(p), [["a-1", "b-1"], ["c-1"]]);
    });

    it("puts explicitly ordered nodes first within their group, then the rest by name", () => {
      const p = planRollout({
        machines: [m("cp-1"), m("cp-2"), m("cp-3"), m("w-1"), m("w-2"), m("w-3"), m("w-4")],
        targetVersion: NEW,
        strategy: { order: ["w-3", "cp-2", "w-1"] },
      });
      assert.deepEqual(waveNames(p), [["cp-2"], ["cp-1"], ["cp-3"], ["w-3"], ["w-1"], ["w-2"], ["w-4"]]);
    });

    it("an explicit order never puts a worker before a control plane", () => {
      const p = planRollout({
        machines: [m("cp-1"), m("w-1")],
        targetVersion: NEW,
        strategy: { order: ["w-1", "cp-1"] },
      });
      assert.deepEqual(waveNames(p), [["cp-1"], ["w-1"]]);
    });

    it("an explicit order may name nodes already at the target", () => {
      const p = planRollout({
        machines: [m("w-1", { talosVersion: NEW }), m("w-2"), m("w-3")],
        targetVersion: NEW,
        strategy: { order: ["w-1", "w-3"] },
      });
      assert.deepEqual(waveNames(p), [["w-3"], ["w-2"]]);
    });
  });

  describe("planRollout skips, quotas and not-ready machines", () => {
    it("skips machines already at the target and lists them", () => {
      const p = planRollout({
        machines: [m("cp-1", { talosVersion: "1.13.2" }), m("cp-2"), m("w-1", { talosVersion: NEW }), m("w-2")],
        targetVersion: NEW,
        lastUpgradeVersion: OLD,
      });
      assert.deepEqual(waveNames(p), [["cp-2"], ["w-2"]]);
      assert.deepEqual(p.skipped, [
        { name: "cp-1", role: "controlplane", machineSet: "control-planes", version: "1.13.2" },
        { name: "w-1", role: "worker", machineSet: "workers", version: NEW },
      ]);
      assert.equal(p.total, 4);
      assert.equal(p.pending, 2);
    });

    it("plans a machine with an unknown version, without a from", () => {
      const p = planRollout({ machines: [m("w-1", { talosVersion: undefined })], targetVersion: NEW });
      assert.deepEqual(p.waves[0].machines[0], { name: "w-1", role: "worker", machineSet: "workers", to: NEW, ready: true });
    });

    it("is done with no waves when everything is at the target", () => {
      const p = planRollout({ machines: [m("cp-1", { talosVersion: NEW }), m("w-1", { talosVersion: NEW })], targetVersion: NEW, healthchecks: CHECKS });
      assert.equal(p.mode, "done");
      assert.deepEqual(p.waves, []);
      assert.equal(p.skipped.length, 2);
      assert.equal(p.waitingForReady, false);
    });

    it("knows the version a uniform cluster converged to (recorded by a first run, so setting it back is a revert)", () => {
      assert.equal(convergedVersion([m("cp-1"), m("w-1")]), OLD);
      assert.equal(convergedVersion([m("cp-1"), m("w-1", { talosVersion: NEW })]), undefined, "mixed");
      assert.equal(convergedVersion([m("cp-1"), m("w-1", { talosVersion: undefined })]), undefined, "unknown");
      assert.equal(convergedVersion([]), undefined);
      const failedFirstRun = [m("cp-1", { talosVersion: NEW }), m("w-1")];
      assert.equal(detectMode(failedFirstRun, OLD, convergedVersion([m("cp-1"), m("w-1")])), "reverting");
    });

    it("reduces the quota by not-ready machines (cluster-wide)", () => {
      const p = planRollout({
        machines: [m("w-1"), m("w-2"), m("w-3"), m("w-4"), m("w-5", { ready: false, talosVersion: NEW })],
        targetVersion: NEW,
        strategy: { workerParallelism: 3 },
        healthchecks: CHECKS,
      });
      assert.deepEqual(p.notReady, ["w-5"]);
      assert.deepEqual(p.groups.map((g) => [g.parallelism, g.quota, g.batchSize]), [[3, 2, 2]]);
      assert.deepEqual(waveNames(p), [["w-1", "w-2"], ["w-3", "w-4"]]);
      assert.equal(p.waitingForReady, false);
    });

    it("goes one machine per wave when the quota drops to zero or below, not-ready machines last (never waits)", () => {
      const p = planRollout({
        machines: [m("cp-1", { ready: false }), m("w-1"), m("w-2", { ready: false }), m("w-3")],
        targetVersion: NEW,
        strategy: { workerParallelism: 2 },
      });
      assert.deepEqual(p.notReady, ["cp-1", "w-2"]);
      assert.deepEqual(p.groups.map((g) => [g.role, g.quota, g.batchSize]), [["controlplane", -1, 1], ["worker", 0, 1]]);
      assert.equal(p.waitingForReady, true);
      assert.deepEqual(waveNames(p), [["cp-1"], ["w-1"], ["w-3"], ["w-2"]]);
      assert.equal(p.waves[0].machines[0].ready, false);
      assert.deepEqual(p.notReadyPending, ["cp-1", "w-2"]);
    });

    it("ignores not-ready machines and never gates when reverting", () => {
      const p = planRollout({
        machines: [m("cp-1"), m("w-1", { talosVersion: NEW, ready: false }), m("w-2", { talosVersion: NEW }), m("w-3", { talosVersion: NEW })],
        targetVersion: OLD,
        lastUpgradeVersion: OLD,
        strategy: { workerParallelism: 2 },
        healthchecks: CHECKS,
      });
      assert.equal(p.mode, "reverting");
      assert.equal(p.waitingForReady, false);
      assert.deepEqual(p.groups.map((g) => g.quota), [2]);
      assert.deepEqual(waveNames(p), [["w-2", "w-3"], ["w-1"]], "full waves; the not-ready machine still goes last");
      assert.ok(p.waves.every((w) => w.gatedBy.length === 0));
      assert.deepEqual(p.skipped.map((s) => s.name), ["cp-1"]);
    });

    it("honours a forced mode", () => {
      const p = planRollout({ machines: [m("w-1"), m("w-2", { ready: false })], targetVersion: NEW, mode: "reverting", healthchecks: CHECKS });
      assert.equal(p.mode, "reverting");
      assert.deepEqual(p.waves[0].gatedBy, []);
      assert.equal(p.waitingForReady, false);
    });
  });

  describe("planRollout input errors", () => {
    it("rejects an invalid target version", () => {
      assert.throws(() => planRollout({ machines: [], targetVersion: "latest" }), (e: unknown) => {
        assert.ok(e instanceof PlanError);
        assert.equal(e.message, 'invalid target version "latest": expected a semantic version such as "v1.13.2" or "1.13.0-beta.1"');
        return true;
      });
    });
    it("rejects parallelism below 1 or fractional", () => {
      for (const bad of [0, -1, 1.5, Number.NaN]) {
        assert.throws(() => planRollout({ machines: [m("w-1")], targetVersion: NEW, strategy: { workerParallelism: bad } }), {
          name: "PlanError",
          message: `invalid strategy.workerParallelism ${JSON.stringify(bad)}: expected a whole number of machines, at least 1`,
        });
      }
      assert.throws(
        () => planRollout({ machines: [m("w-1")], targetVersion: NEW, strategy: { machineSetParallelism: { workers: 0 } } }),
        { message: 'invalid strategy.machineSetParallelism["workers"] 0: expected a whole number of machines, at least 1' },
      );
    });
    it("rejects unknown and duplicate names in the explicit order", () => {
      assert.throws(() => planRollout({ machines: [m("w-1"), m("w-2")], targetVersion: NEW, strategy: { order: ["w-9"] } }), {
        message: 'strategy.order names node "w-9", which is not in the cluster; known nodes: w-1, w-2',
      });
      assert.throws(() => planRollout({ machines: [m("w-1")], targetVersion: NEW, strategy: { order: ["w-1", "w-1"] } }), {
        message: 'strategy.order lists node "w-1" twice; list each node at most once',
      });
    });
    it("rejects duplicate machine names", () => {
      assert.throws(() => planRollout({ machines: [m("w-1"), m("w-1")], targetVersion: NEW }), {
        message: 'machine "w-1" is listed twice; every Kubernetes node name must be unique',
      });
    });
  });

  describe("describePlan", () => {
    it("prints the headline, one line per wave and the skipped machines", () => {
      const p = planRollout({
        machines: [m("cp-1"), m("cp-2", { talosVersion: NEW }), m("w-1"), m("w-2", { talosVersion: "v1.12.2" }), m("w-3")],
        targetVersion: NEW,
        strategy: { workerParallelism: 2 },
        healthchecks: ["cluster-prod-ceph"],
        lastUpgradeVersion: OLD,
      });
      assert.deepEqual(describePlan(p), [
        "upgrade 4 of 5 machines to v1.13.2 in 3 waves, 1 already on v1.13.2",
        "1. cp-1 (controlplane) v1.12.3 → v1.13.2, gated by: cluster-prod-ceph",
        "2. w-1 v1.12.3 → v1.13.2, w-2 v1.12.2 → v1.13.2 (worker), gated by: cluster-prod-ceph",
        "3. w-3 (worker) v1.12.3 → v1.13.2, gated by: cluster-prod-ceph",
        "skip cp-2 (controlplane): already on v1.13.2",
      ]);
    });

    it("shows multi-machine waves with one hop, machine sets, unknown versions and no gate", () => {
      const p = planRollout({
        machines: [m("a-1", { machineSet: "gpu" }), m("a-2", { machineSet: "gpu" }), m("b-1", { machineSet: "cpu", talosVersion: undefined })],
        targetVersion: NEW,
        strategy: { machineSetParallelism: { gpu: 2 } },
      });
      assert.deepEqual(describePlan(p), [
        "upgrade 3 of 3 machines to v1.13.2 in 2 waves",
        "1. b-1 (worker, set cpu) unknown → v1.13.2",
        "2. a-1, a-2 (worker, set gpu) v1.12.3 → v1.13.2",
      ]);
    });

    it("describes a revert, not-ready machines, set-aside machines and a no-op", () => {
      const r = planRollout({
        machines: [m("cp-1", { talosVersion: NEW }), m("w-1", { ready: false })],
        targetVersion: OLD,
        lastUpgradeVersion: OLD,
        healthchecks: CHECKS,
      });
      assert.deepEqual(describePlan(r), [
        "revert 1 of 2 machines to v1.12.3 in 1 wave, 1 already on v1.12.3, not gated by your checks (reverting to the last converged version; etcd is still asked before each control plane)",
        "1. cp-1 (controlplane) v1.13.2 → v1.12.3, not gated by your checks",
        "skip w-1 (worker): already on v1.12.3",
      ]);
      const w = planRollout({ machines: [m("cp-1"), m("w-1", { ready: false })], targetVersion: NEW });
      assert.deepEqual(describePlan(w).slice(0, 2), [
        "upgrade 2 of 2 machines to v1.13.2 in 2 waves",
        "not ready: w-1 (w-1 upgraded last, set aside if still not ready); fewer machines per wave while they are not ready",
      ]);
      const aside = planRollout({ machines: [m("cp-1"), m("w-1", { ready: false })], targetVersion: NEW, setAside: ["w-1"] });
      assert.deepEqual(waveNames(aside), [["cp-1"]]);
      assert.ok(describePlan(aside).includes("set aside (not ready when their turn came): w-1"));
      const d = planRollout({ machines: [m("cp-1", { talosVersion: NEW })], targetVersion: NEW });
      assert.deepEqual(describePlan(d), ["nothing to do: 1 machine already on v1.13.2", "skip cp-1 (controlplane): already on v1.13.2"]);
    });
  });

  describe("properties", () => {
    const machineArb = fc
      .uniqueArray(
        fc.record({
          name: fc.stringMatching(/^[a-z]{1,3}-[0-9]{1,2}$/),
          role: fc.constantFrom("controlplane" as const, "worker" as const),
          talosVersion: fc.constantFrom(OLD, NEW, "v1.11.0", undefined),
          ready: fc.boolean(),
          machineSet: fc.constantFrom("s1", "s2", "s3"),
        }),
        { selector: (x) => x.name, maxLength: 25 },
      )
      .map((xs) => xs.map((x) => (x.talosVersion === undefined ? (({ talosVersion: _t, ...rest }) => rest)(x) : x)));
    const strategyArb = fc.record(
      {
        workerParallelism: fc.integer({ min: 1, max: 6 }),
        machineSetParallelism: fc.dictionary(fc.constantFrom("s1", "s2", "s3"), fc.integer({ min: 1, max: 4 })),
        groupWorkersBy: fc.constantFrom("role" as const, "machineSet" as const),
      },
      { requiredKeys: [] },
    );

    it("every machine is planned exactly once or skipped; control planes first and alone; deterministic", () => {
      fc.assert(
        fc.property(machineArb, strategyArb, fc.boolean(), (machines, strategy, shuffle) => {
          const input = { machines, targetVersion: NEW, strategy, healthchecks: CHECKS, lastUpgradeVersion: OLD };
          const p = planRollout(input);
          const planned = p.waves.flatMap((w) => w.machines.map((x) => x.name));
          const all = [...planned, ...p.skipped.map((s) => s.name)].sort();
          assert.deepEqual(all, machines.map((x) => x.name).sort());
          assert.equal(new Set(planned).size, planned.length);
          for (const s of p.skipped) assert.equal(s.version, NEW);
          const firstWorker = p.waves.findIndex((w) => w.role === "worker");
          const lastCp = p.waves.map((w) => w.role).lastIndexOf("controlplane");
          if (firstWorker >= 0) assert.ok(lastCp < firstWorker);
          for (const w of p.waves) {
            if (w.role === "controlplane") assert.equal(w.machines.length, 1);
            assert.ok(w.machines.every((x) => x.role === w.role));
            assert.ok(w.machines.length >= 1);
          }
          // same input in another order gives the same plan
          const again = planRollout({ ...input, machines: shuffle ? [...machines].reverse() : machines });
          assert.deepEqual(again, p);
        }),
        { numRuns: 200 },
      );
    });

    it("wave sizes never exceed max(1, parallelism − notReady)", () => {
      fc.assert(
        fc.property(machineArb, fc.integer({ min: 1, max: 6 }), (machines, par) => {
          const p = planRollout({ machines, targetVersion: NEW, strategy: { workerParallelism: par }, lastUpgradeVersion: OLD });
          const notReady = machines.filter((x) => !x.ready).length;
          for (const w of p.waves.filter((x) => x.role === "worker")) {
            assert.ok(w.machines.length <= Math.max(1, par - notReady));
          }
        }),
      );
    });
  });
});

describe("rollout plan: two control planes (issue 25)", () => {
  const cp = (name: string, v = "v1.13.2"): PlanMachine => ({ name, role: "controlplane", talosVersion: v, ready: true, machineSet: "control-planes" });
  const w = (name: string): PlanMachine => ({ name, role: "worker", talosVersion: "v1.13.2", ready: true, machineSet: "workers" });
  const planOf = (ms: PlanMachine[]) => planRollout({ machines: ms, targetVersion: "v1.13.3" });

  it('"allow": each control plane\'s reboot is named with its cost; "refuse": where the run will stop, naming the input', () => {
    const ms = [cp("cp-1"), cp("cp-2"), w("w-1")];
    assert.deepEqual(quorumLossPlanLines(ms, planOf(ms), "allow"), [
      'cp-1 down: etcd loses quorum for the reboot, the API server is read-only (etcdQuorumLoss: "allow")',
      'cp-2 down: etcd loses quorum for the reboot, the API server is read-only (etcdQuorumLoss: "allow")',
    ]);
    const refused = quorumLossPlanLines(ms, planOf(ms), "refuse");
    assert.equal(refused.length, 1);
    assert.match(refused[0], /^the upgrade will stop before control plane cp-1: a cluster with 2 control planes cannot keep etcd quorum .*set etcdQuorumLoss: "allow"/);
  });

  it("says nothing for 1 or 3 control planes, or when both control planes are on the target", () => {
    for (const ms of [[cp("cp-1"), w("w-1")], [cp("cp-1"), cp("cp-2"), cp("cp-3")], [cp("cp-1", "v1.13.3"), cp("cp-2", "v1.13.3"), w("w-1")]]) {
      assert.deepEqual(quorumLossPlanLines(ms, planOf(ms), "refuse"), [], ms.map((m) => m.name).join());
    }
  });
});
