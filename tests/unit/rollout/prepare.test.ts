// Issue 23: the next wave's installer images read while its gate runs (provider/rollout/prepare.ts). A read is used
// once, for the target it was read for, while fresh; a failed or stale one is read again by the node itself. PURE.
import assert from "node:assert/strict";
import { PREPARED_FRESH_MS, PreparedImages } from "../../../provider/rollout/prepare";
import type { Machine } from "../../../provider/rollout/ports";

const machine = (name: string): Machine => ({ name, role: "worker", address: name, ready: true, cordoned: false, talosVersion: "v1.13.1", machineSet: "workers" });
const tick = () => new Promise<void>((r) => setImmediate(r));

describe("rollout: installer images read ahead (prepare.ts)", () => {
  let now = 0;
  let reads: string[];
  let failing: Set<string>;
  const images = () => new PreparedImages((m, target) => {
    reads.push(`${m.name}@${target}`);
    if (failing.has(m.name)) return Promise.reject(new Error(`${m.name} did not answer`));
    return `installer:${target}`;
  }, () => now);
  beforeEach(() => {
    now = 0;
    reads = [];
    failing = new Set();
  });

  it("a read done is taken as the image itself, once, and only for the target it was read for", async () => {
    const p = images();
    p.start([{ machine: machine("w-1"), target: "v1.13.2" }, { machine: machine("w-2"), target: "v1.13.2" }]);
    await tick();
    assert.equal(p.take("w-1", "v1.13.2"), "installer:v1.13.2");
    assert.equal(p.take("w-1", "v1.13.2"), undefined, "used once");
    assert.equal(p.take("w-2", "v1.13.3"), undefined, "read for another target");
    assert.equal(p.take("w-3", "v1.13.2"), undefined, "never read");
    assert.deepEqual(reads, ["w-1@v1.13.2", "w-2@v1.13.2"]);
  });

  it("a read still under way is taken as its promise (not read twice)", async () => {
    const p = images();
    p.start([{ machine: machine("w-1"), target: "v1.13.2" }]);
    const taken = p.take("w-1", "v1.13.2");
    assert.ok(taken instanceof Promise);
    assert.equal(await taken, "installer:v1.13.2");
    assert.equal(reads.length, 1);
  });

  it("a read still under way that then fails is read again for the node; freshness counts from when a read is done", async () => {
    let calls = 0;
    let finish!: (image: string) => void;
    const p = new PreparedImages((m, target) => {
      calls++;
      if (m.name === "w-1") return calls === 1 ? Promise.reject(new Error("w-1 did not answer")) : `installer:${target}`;
      return new Promise<string>((r) => (finish = r));
    }, () => now);
    p.start([{ machine: machine("w-1"), target: "v1.13.2" }]);
    const taken = p.take("w-1", "v1.13.2");
    assert.ok(taken instanceof Promise);
    assert.equal(await taken, "installer:v1.13.2", "read again after the failure");
    assert.equal(calls, 2);

    p.start([{ machine: machine("w-2"), target: "v1.13.2" }]);
    await tick();
    now += PREPARED_FRESH_MS + 1; // a slow read
    finish("installer:v1.13.2");
    await tick();
    assert.equal(p.take("w-2", "v1.13.2"), "installer:v1.13.2", "done just now: fresh");
  });

  it("a failed read is dropped (the node reads again as it starts); a stale one is not used; a second start reads only what is missing or stale", async () => {
    failing.add("w-1");
    const p = images();
    p.start([{ machine: machine("w-1"), target: "v1.13.2" }, { machine: machine("w-2"), target: "v1.13.2" }]);
    await tick();
    assert.equal(p.take("w-1", "v1.13.2"), undefined, "failed: not used");
    p.start([{ machine: machine("w-1"), target: "v1.13.2" }, { machine: machine("w-2"), target: "v1.13.2" }]);
    await tick();
    assert.deepEqual(reads, ["w-1@v1.13.2", "w-2@v1.13.2", "w-1@v1.13.2"], "w-2 read recently: not again");
    now += PREPARED_FRESH_MS + 1; // a gate that held longer than that
    assert.equal(p.take("w-2", "v1.13.2"), undefined, "stale: the node reads it again");
    p.start([{ machine: machine("w-3"), target: "v1.13.2" }]);
    await tick();
    assert.equal(p.take("w-3", "v1.13.2"), "installer:v1.13.2");
  });
});
