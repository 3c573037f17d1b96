// The provider's heap bound during a rollout: a full collection once the heap has grown by the allowance since the
// lowest heap seen, never before, and the allowance counted again from what survived.
import assert from "node:assert/strict";
import { heapBound, withBoundedHeap, type HeapControls } from "../../../provider/handlers/memory";

describe("unit: handlers — heap bound during a rollout", () => {
  it("collects once the heap has grown by the allowance, then counts from what survived", () => {
    let used = 100, collections = 0;
    const look = heapBound({ heapUsed: () => used, collect: () => { collections++; used = 110; } }, 50);
    used = 149;
    assert.equal(look(), false, "grown by 49 of 50: no collection");
    used = 150;
    assert.equal(look(), true);
    assert.deepEqual([collections, used], [1, 110]);
    used = 159;
    assert.equal(look(), false, "counted from the 110 that survived, not from 100");
    used = 160;
    assert.equal(look(), true);
    assert.equal(collections, 2);
  });

  it("a heap that never grows by the allowance above its lowest (V8 collecting its own garbage) is never collected", () => {
    let used = 100, collections = 0;
    const look = heapBound({ heapUsed: () => used, collect: () => collections++ }, 50);
    for (const u of [90, 120, 80, 110, 60, 109]) {
      used = u;
      look();
    }
    assert.equal(collections, 0, "never 50 above the lowest seen before it");
  });

  it("counts the growth from the lowest heap seen, not from a start that still held the plan's garbage", () => {
    // A 1,000-node run: 105 MB used when the rollout started (the plan's Node list and image reads not yet collected),
    // 67 MB after V8's own collection, then the old space grew to 138 MB before a bound counted from 105 collected.
    let used = 105, collections = 0;
    const look = heapBound({ heapUsed: () => used, collect: () => { collections++; used = 62; } }, 32);
    used = 67;
    assert.equal(look(), false);
    used = 98;
    assert.equal(look(), false, "31 above the lowest, 67");
    used = 99;
    assert.equal(look(), true, "32 above 67, though below 105 + 32");
    assert.equal(collections, 1);
    used = 93;
    assert.equal(look(), false, "counted again from the 62 that survived");
    used = 94;
    assert.equal(look(), true);
  });

  it("the rollout's result and its failure pass through the bound unchanged", async () => {
    const controls: HeapControls = { gc: () => undefined, setGrowingPercent: () => undefined, heapUsed: () => 0 };
    assert.equal(await withBoundedHeap(async () => "Done", controls), "Done");
    await assert.rejects(withBoundedHeap(async () => {
      throw new Error("stopped before cp-2");
    }, controls), /stopped before cp-2/);
  });

  it("V8's growth factor is set and collected from once for overlapping rollouts, and given back after the last, also a failed one", async () => {
    const calls: string[] = [];
    const controls: HeapControls = {
      gc: () => calls.push("gc"),
      setGrowingPercent: (p) => calls.push(`factor ${p}`),
      heapUsed: () => 0,
    };
    let endFirst!: () => void, failSecond!: (e: Error) => void;
    const first = withBoundedHeap(() => new Promise<string>((resolve) => { endFirst = () => resolve("Done"); }), controls);
    const second = withBoundedHeap(() => new Promise<string>((_, reject) => { failSecond = reject; }), controls);
    try {
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(calls, ["factor 50", "gc"], "set once; the second start does not pause the first with a collection");
      endFirst();
      assert.equal(await first, "Done");
      assert.deepEqual(calls, ["factor 50", "gc"], "the second still runs: the factor stays");
      failSecond(new Error("stopped before cp-2"));
      await assert.rejects(second, /stopped before cp-2/);
      assert.deepEqual(calls, ["factor 50", "gc", "factor 0"], "V8's own factor again after the last");
    } finally {
      endFirst();
      failSecond(new Error("test over"));
      await Promise.allSettled([first, second]);
    }
    assert.equal(await withBoundedHeap(async () => "again", controls), "again");
    assert.deepEqual(calls.slice(3), ["factor 50", "gc", "factor 0"], "a later rollout sets it and collects again");
  });

  it("without a full collection (a runtime that refuses --expose-gc) the rollout runs unbounded and the factor is left alone", async () => {
    const calls: string[] = [];
    const controls: HeapControls = { gc: undefined, setGrowingPercent: (p) => calls.push(`factor ${p}`), heapUsed: () => 0 };
    assert.equal(await withBoundedHeap(async () => "Done", controls), "Done");
    assert.deepEqual(calls, []);
  });
});
