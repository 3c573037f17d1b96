// Issue 23: workers' cordon lifts whose answers no longer hold the wave's end (provider/rollout/lifts.ts). A lift runs
// when added, its failure is kept for the run (never thrown at the node), and `landed` waits for every one sent. PURE.
import assert from "node:assert/strict";
import { LiftsInFlight } from "../../../provider/rollout/lifts";

describe("rollout: cordon lifts in flight (lifts.ts)", () => {
  it("a lift starts when added; landed waits for all, names the failed ones by node, and forgets them", async () => {
    const lifts = new LiftsInFlight();
    const sent: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    lifts.add("w-2", async () => {
      sent.push("w-2");
      throw new Error("503 from the API server");
    });
    lifts.add("w-1", async () => {
      sent.push("w-1");
      await held;
    });
    await new Promise<void>((r) => setImmediate(r));
    assert.deepEqual(sent.sort(), ["w-1", "w-2"], "both sent at once");
    let settled = false;
    const landing = lifts.landed().then((f) => {
      settled = true;
      return f;
    });
    await new Promise<void>((r) => setImmediate(r));
    assert.equal(settled, false, "w-1's lift is still on its way");
    release();
    assert.deepEqual(await landing, [{ node: "w-2", error: "503 from the API server" }]);
    assert.deepEqual(await lifts.landed(), [], "forgotten once reported");
  });

  it("a lift that throws before its first await is kept as a failure, not thrown at the caller", async () => {
    const lifts = new LiftsInFlight();
    assert.doesNotThrow(() => lifts.add("w-3", () => {
      throw new Error("no connection");
    }));
    assert.deepEqual(await lifts.landed(), [{ node: "w-3", error: "no connection" }]);
  });
});
