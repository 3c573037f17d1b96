// Issue 23.2: the hint the Talos wait takes from the run's Node watch (RunContext.machineChanged): the first change of
// one node's Ready or version wakes it, another node's change or a change of nothing it compares does not, and a
// watch that stopped never wakes it in a loop. PURE (a Node watch of plain objects).
import assert from "node:assert/strict";
import { RunContext } from "../../../provider/rollout/context";
import { systemClock } from "../../../provider/rollout/clock";
import { initialStatus } from "../../../provider/rollout/status";
import type { KubeApi, Lease, Machine, MachineWatch, TalosApi } from "../../../provider/rollout/ports";
import type { RunOptions } from "../../../provider/rollout/run";

const machine = (name: string, ready: boolean, talosVersion: string, cordoned = false): Machine => ({
  name, role: "worker", address: name, ready, cordoned, talosVersion, machineSet: "workers",
});

/** A Node watch the test drives: `set` is one watch event. */
class FakeWatch implements MachineWatch {
  generation = 0;
  failed = false;
  private stopped = false;
  private waiters = new Set<() => void>();
  constructor(private current: Machine[]) {}
  async machines() {
    return this.current;
  }
  set(ms: Machine[]) {
    this.current = ms;
    this.generation++;
    for (const w of [...this.waiters]) w();
  }
  changed(since: number, signal?: AbortSignal): Promise<void> {
    if (this.generation !== since || this.stopped || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        resolve();
      };
      this.waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }
  stop() {
    this.stopped = true;
    for (const w of [...this.waiters]) w();
  }
}

function context(watch: FakeWatch): RunContext {
  const kube = { watchMachines: () => watch } as unknown as KubeApi;
  const lease = { holder: "h", lost: new AbortController().signal } as unknown as Lease;
  const opts = { cluster: "c", holder: "h", targetVersion: "v1.13.2" } as RunOptions;
  return new RunContext(kube, {} as TalosApi, opts, systemClock, lease, initialStatus("c"));
}

/** Whether `p` has settled after the event loop ran what is queued. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

describe("rollout/context: machineChanged (the Talos wait's hint from the Node watch)", () => {
  it("wakes at the first change of the node's Ready or version, not at another node's change or its cordon", async () => {
    const watch = new FakeWatch([machine("w-1", true, "v1.13.1"), machine("w-2", true, "v1.13.1")]);
    const ctx = context(watch);
    const ac = new AbortController();
    const down = ctx.machineChanged("w-1", ac.signal);
    await new Promise((r) => setImmediate(r));
    watch.set([machine("w-1", true, "v1.13.1"), machine("w-2", false, "v1.13.1")]);
    watch.set([machine("w-1", true, "v1.13.1", true), machine("w-2", false, "v1.13.1")]);
    assert.equal(await settled(down), false, "another node going down, or this one's cordon, is no sign of this node's boot");
    watch.set([machine("w-1", false, "v1.13.1", true), machine("w-2", false, "v1.13.1")]);
    assert.equal(await settled(down), true, "this node's Ready changed");
    const up = ctx.machineChanged("w-1", ac.signal);
    await new Promise((r) => setImmediate(r));
    watch.set([machine("w-1", true, "v1.13.2", true), machine("w-2", false, "v1.13.1")]);
    assert.equal(await settled(up), true, "Ready on the new version");
    ac.abort();
  });

  it("a stopped watch never wakes the wait again (no loop of looks): only the abort ends it", async () => {
    const watch = new FakeWatch([machine("w-1", true, "v1.13.1")]);
    const ctx = context(watch);
    const ac = new AbortController();
    const hint = ctx.machineChanged("w-1", ac.signal);
    await new Promise((r) => setImmediate(r));
    watch.stop();
    assert.equal(await settled(hint), false, "stopped: nothing will change");
    ac.abort();
    assert.equal(await settled(hint), true, "the abort ends it");
    assert.equal(await settled(ctx.machineChanged("w-1", ac.signal)), true, "already aborted: at once");
  });
});
