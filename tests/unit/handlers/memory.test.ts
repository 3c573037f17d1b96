// The provider's heap bound during a rollout: a full collection once the heap has grown by the allowance since the
// last one, never before, and the allowance counted again from what survived.
import assert from "node:assert/strict";
import { heapBound, withBoundedHeap } from "../../../provider/handlers/memory";

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

  it("a heap that shrinks (young garbage collected by V8 itself) never triggers a collection", () => {
    let used = 100, collections = 0;
    const look = heapBound({ heapUsed: () => used, collect: () => collections++ }, 50);
    for (const u of [90, 120, 80, 140, 60]) {
      used = u;
      look();
    }
    assert.equal(collections, 0);
  });

  it("the rollout's result and its failure pass through the bound unchanged", async () => {
    assert.equal(await withBoundedHeap(async () => "Done"), "Done");
    await assert.rejects(withBoundedHeap(async () => {
      throw new Error("stopped before cp-2");
    }), /stopped before cp-2/);
  });
});
