// The full run's queue and fixed groups (tests/support/groups.ts): from measured times, every file once, the same every time.
import assert from "node:assert/strict";
import { NEW_FILE_SECONDS, planGroups, queueOrder, sourceOf } from "../../support/groups";

const file = (name: string) => `dist/tests/${name}.test.js`;

describe("unit: the full run's queue and groups", () => {
  it("queues every file once, longest first, an unmeasured one as NEW_FILE_SECONDS, ties in name order", () => {
    const files = ["b", "new", "a", "short", "long"].map(file);
    const timings = { [sourceOf(file("long"))]: { wall: 300 }, [sourceOf(file("a"))]: { wall: 30 }, [sourceOf(file("b"))]: { wall: 30 },
      [sourceOf(file("short"))]: { wall: NEW_FILE_SECONDS - 1 } };
    assert.deepEqual(queueOrder(files, timings), ["long", "a", "b", "new", "short"].map(file));
    assert.deepEqual(queueOrder([...files].reverse(), timings), queueOrder(files, timings));
  });

  it("puts each file in exactly one group, longest first on the least loaded group", () => {
    const files = ["a", "b", "c", "d", "e"].map(file);
    const timings = { [sourceOf(file("a"))]: { wall: 100 }, [sourceOf(file("b"))]: { wall: 60 }, [sourceOf(file("c"))]: { wall: 50 },
      [sourceOf(file("d"))]: { wall: 40 }, [sourceOf(file("e"))]: { wall: 10 } };
    const groups = planGroups(files, timings, 2);
    assert.deepEqual([...groups.keys()], ["a", "b"]);
    // 100 | 60, then 50 → b (60 < 100): 110, then 40 → a: 140, then 10 → b: 120.
    assert.deepEqual(groups.get("a"), [file("a"), file("d")]);
    assert.deepEqual(groups.get("b"), [file("b"), file("c"), file("e")]);
  });

  it("counts a file with no measured time as NEW_FILE_SECONDS, and is the same for the same input", () => {
    const files = ["long", "new", "short"].map(file);
    const timings = { [sourceOf(file("long"))]: { wall: NEW_FILE_SECONDS + 1 }, [sourceOf(file("short"))]: { wall: 1 } };
    const groups = planGroups(files, timings, 2);
    assert.deepEqual(groups.get("a"), [file("long")]);
    assert.deepEqual(groups.get("b"), [file("new"), file("short")]);
    assert.deepEqual(planGroups([...files].reverse(), timings, 2), groups);
  });
});
