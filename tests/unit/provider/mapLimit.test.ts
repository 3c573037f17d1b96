// Bounded fan-out (the preview's per-node image reads, the sim's node registration): never more than `limit` calls in
// flight, every item done once, results in the items' order whatever order the calls finish in.
import assert from "node:assert/strict";
import { mapLimit } from "../../../provider/mapLimit";

describe("unit: mapLimit", () => {
  it("keeps at most `limit` calls in flight and returns the results in the items' order", async () => {
    let inFlight = 0, most = 0;
    const seen: number[] = [];
    const out = await mapLimit(Array.from({ length: 50 }, (_, i) => i), 4, async (n, i) => {
      inFlight++;
      most = Math.max(most, inFlight);
      seen.push(i);
      // Later items finish first: the order of results must not follow the order of completion.
      await new Promise((r) => setImmediate(r));
      if (n % 3 === 0) await new Promise((r) => setImmediate(r));
      inFlight--;
      return n * 2;
    });
    assert.equal(most, 4);
    assert.deepEqual(out, Array.from({ length: 50 }, (_, i) => i * 2));
    assert.deepEqual([...seen].sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i), "each item once");
  });

  it("a failure rejects the whole map; no items and a limit above their count are fine", async () => {
    await assert.rejects(mapLimit([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error("node 2 unreachable");
      return n;
    }), /node 2 unreachable/);
    assert.deepEqual(await mapLimit([], 8, async (n: number) => n), []);
    assert.deepEqual(await mapLimit([1, 2], 100, async (n) => n + 1), [2, 3]);
  });
});
