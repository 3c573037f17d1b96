import assert from "node:assert/strict";
import fc from "fast-check";
import { DEFAULT_INTERVAL_MS, evaluateGate, effectiveInterval, type CheckResult } from "../../../provider/rollout/gate";

const passed = (id: string, intervalMs?: number): CheckResult => ({ id, intervalMs, outcome: { state: "passed" } });
const failed = (id: string, reason: string, intervalMs?: number): CheckResult => ({ id, intervalMs, outcome: { state: "failed", reason } });
const running = (id: string, intervalMs?: number, reason = "waiting to complete"): CheckResult => ({
  id,
  intervalMs,
  outcome: { state: "running", reason },
});

describe("rollout/gate", () => {
  it("is open with no checks", () => {
    const v = evaluateGate([]);
    assert.equal(v.open, true);
    assert.equal(v.step, "");
    assert.equal(v.retryInMs, undefined);
  });

  it("is open when every check passed", () => {
    const v = evaluateGate([passed("a", 5000), passed("b")]);
    assert.deepEqual(v, { open: true, step: "", notPassed: [], failed: [], running: [], passed: ["a", "b"], entries: [] });
  });

  it("holds on one failure, with Omni's step text and that check's interval", () => {
    const v = evaluateGate([passed("cluster-prod-db", 5000), failed("cluster-prod-ceph", "ceph is not healthy", 45_000)]);
    assert.equal(v.open, false);
    assert.equal(v.step, 'waiting for healthchecks to pass: "cluster-prod-ceph": ceph is not healthy');
    assert.equal(v.retryInMs, 45_000, "a passed check's shorter interval does not count");
    assert.deepEqual(v.failed, ["cluster-prod-ceph"]);
    assert.deepEqual(v.passed, ["cluster-prod-db"]);
  });

  it("lists every non-passed check in input order, running ones as waiting to complete", () => {
    const v = evaluateGate([failed("b", "boom\nsecond line", 60_000), passed("c"), running("a", 10_000)]);
    assert.equal(v.step, 'waiting for healthchecks to pass: "b": boom\nsecond line; "a": waiting to complete');
    assert.deepEqual(v.notPassed, ["b", "a"]);
    assert.deepEqual(v.running, ["a"]);
    assert.equal(v.retryInMs, 10_000, "running checks count as non-passed for the retry delay");
  });

  it("uses the 30 s default for missing or non-positive intervals", () => {
    assert.equal(DEFAULT_INTERVAL_MS, 30_000);
    assert.equal(effectiveInterval(undefined), 30_000);
    assert.equal(effectiveInterval(0), 30_000);
    assert.equal(effectiveInterval(-5), 30_000);
    assert.equal(effectiveInterval(5000), 5000);
    assert.equal(evaluateGate([failed("a", "x"), failed("b", "y", 60_000)]).retryInMs, 30_000);
    assert.equal(evaluateGate([failed("a", "x", 0)]).retryInMs, 30_000);
  });

  it("truncates each detail in the step at 256 bytes + ...", () => {
    const v = evaluateGate([failed("a", "é".repeat(200)), failed("b", "short")]);
    assert.equal(v.step, `waiting for healthchecks to pass: "a": ${"é".repeat(128)}...; "b": short`);
    assert.equal(v.entries[0].detail, "é".repeat(200), "entries keep the full detail");
  });

  it("a running check cut short with an empty reason says waiting to complete", () => {
    assert.equal(evaluateGate([running("a", undefined, "")]).step, 'waiting for healthchecks to pass: "a": waiting to complete');
  });

  it("property: open iff all passed; retry = min effective interval over non-passed", () => {
    const result = fc.record({
      id: fc.string({ minLength: 1, maxLength: 8 }),
      intervalMs: fc.option(fc.integer({ min: -1, max: 120_000 }), { nil: undefined }),
      outcome: fc.oneof(
        fc.constant({ state: "passed" as const }),
        fc.record({ state: fc.constant("failed" as const), reason: fc.string() }),
        fc.record({ state: fc.constant("running" as const), reason: fc.string() }),
      ),
    });
    fc.assert(
      fc.property(fc.array(result, { maxLength: 8 }), (rs) => {
        const v = evaluateGate(rs);
        const np = rs.filter((r) => r.outcome.state !== "passed");
        assert.equal(v.open, np.length === 0);
        assert.equal(v.step === "", np.length === 0);
        if (np.length) {
          assert.equal(v.retryInMs, Math.min(...np.map((r) => effectiveInterval(r.intervalMs))));
          assert.ok(v.step.startsWith("waiting for healthchecks to pass: "));
        } else {
          assert.equal(v.retryInMs, undefined);
        }
        assert.equal(v.passed.length + v.failed.length + v.running.length, rs.length);
      }),
    );
  });
});
