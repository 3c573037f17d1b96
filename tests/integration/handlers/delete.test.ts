// Deleting a TalosUpgrade never downgrades a node and leaves nothing of its own behind: runner Jobs are removed and
// the cordons an interrupted run of this upgrade set are lifted — an administrator's cordon stays.
import * as assert from "node:assert/strict";
import { delete as deleteResource } from "../../../provider/handlers";
import { adapters, clients, sim, versions } from "../rollout/helpers";

describe("handlers: TalosUpgrade delete", function () {
  this.timeout(120000);

  it("lifts the cordons this upgrade set and no other, touching no node's version", async () => {
    const s = await sim({ controlPlanes: 1, workers: 2 });
    try {
      const { kube } = adapters(s);
      assert.equal(await kube.cordon("w-1", "pulumi:p/s/talos"), true); // left by a killed run of this upgrade
      await clients(s).core.patchNode({ name: "w-2", body: [{ op: "add", path: "/spec/unschedulable", value: true }] }); // an administrator's
      const before = versions(s);
      await deleteResource("del", {
        kind: "TalosUpgrade", clusterName: "del", kubeconfig: s.kubeconfig, talosconfig: s.talosconfig, owner: "p/s/talos",
        version: "v1.13.2", healthchecks: [], status: { phase: "Failed", lastUpgradeVersion: "v1.12.4" },
      });
      const machines = Object.fromEntries((await kube.listMachines()).map((m) => [m.name, m.cordoned]));
      assert.deepEqual(machines, { "cp-1": false, "w-1": false, "w-2": true });
      assert.deepEqual(versions(s), before, "nothing downgraded or upgraded");
    } finally {
      await s.stop();
    }
  });
});
