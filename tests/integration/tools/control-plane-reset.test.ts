// The test run's control-plane pool (tests/support/controlPlanes.ts) lives on resets: a used control plane is put back
// to its baseline in the background while the next file runs. Two ways a reset went wrong, each checked here on a real
// control plane after a real sim: it listed every kind every 200 ms while a namespace was being deleted (~1,300 API
// requests and ~2 CPU-s of the API server per reset, ~45 resets a run), and it failed when the next file blocked this
// process's event loop (a synchronous child, like cli/sim.test's `talos-gate sim up`): its wall-clock timeouts fired as
// the loop resumed, before the answers waiting in the sockets were read, and a fresh control plane was started instead.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { startSimCluster } from "../../../sim/cluster";
import type { ControlPlane } from "../../../sim/controlplane";
import { resetControlPlane, takeBaseline } from "../../support/controlPlaneReset";
import { freshControlPlane } from "../../support/controlPlanes";

describe("integration: tools — the control-plane pool's reset", function () {
  this.timeout(180000);
  let cp: ControlPlane;

  before(async () => {
    cp = await freshControlPlane();
  });

  after(async () => {
    await cp?.stop(); // back to the pool (reset there once more)
  });

  it("puts the control plane back after a sim, listing a kind that held nothing only in its full looks, not every round, through a 21 s stall of this process", async () => {
    const baseline = await takeBaseline(cp);
    // The sim's workload pods live in a namespace of their own: its deletion is what a reset waits for longest.
    const sim = await startSimCluster({
      controlPlane: Promise.resolve({ ...cp, stop: async () => undefined }), controlPlanes: 1, workers: 1,
      workloadPodsPerNode: 1, bootSeconds: 1, pullMs: 50, installMs: 50,
    });
    await sim.stop();
    const resetting = resetControlPlane(cp, baseline);
    await new Promise((r) => setTimeout(r, 300)); // its requests on the wire
    // Longer than a request's 20 s bound, from the check phase (setImmediate), as after an I/O callback: the loop's next
    // turn runs its timers before it reads the sockets (a stall inside a timer callback reads them first).
    const stall = await new Promise<number | null>((r) => setImmediate(() => r(spawnSync("sleep", ["21"]).status)));
    assert.equal(stall, 0);
    const { requests } = await resetting;
    const lists = (path: string) => requests.filter((r) => r === `GET ${path}`).length;
    // Every round lists the namespaces; a kind that held nothing is listed only in the full looks: the first and the
    // last (one more each time a controller made something again in between, as under load).
    const rounds = lists("/api/v1/namespaces");
    const empty = lists("/apis/storage.k8s.io/v1/storageclasses");
    assert.ok(empty >= 2 && empty < rounds, `a kind that held nothing was listed in ${empty} of ${rounds} rounds`);
    // Nothing but the baseline is left: a second reset finds nothing to delete and looks once.
    const again = await resetControlPlane(cp, baseline);
    assert.equal(again.requests.filter((r) => !r.startsWith("GET ")).length, [...baseline.namespaces].length, "only the events' collections deleted");
  });
});
