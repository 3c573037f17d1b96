// One machine model for the Cluster, the preview plan and the run: the machine overrides a Cluster is given (role,
// Talos address, machine set) are what a TalosUpgrade plans and upgrades with, not what the Node labels say.
import * as assert from "node:assert/strict";
import { check, create } from "../../../provider/handlers";
import { withMachineOverrides } from "../../../provider/resources/cluster";
import { sim, adapters, clients, versions } from "../rollout/helpers";

/** What is written to stderr until `restore()` (warnings outside the engine go there: diagnostics.ts). */
function captureStderr(): { text(): string; restore(): void } {
  const write = process.stderr.write;
  let text = "";
  process.stderr.write = ((chunk: string | Uint8Array) => ((text += String(chunk)), true)) as typeof process.stderr.write;
  return { text: () => text, restore: () => void (process.stderr.write = write) };
}

describe("handlers: the Cluster's machine overrides reach the TalosUpgrade", function () {
  this.timeout(120000);

  it("the preview plan groups by the overridden machine set and role, over the named machines only; the run keeps the gates (a closed window waits) and its customTimeouts", async () => {
    const s = await sim({ controlPlanes: 1, workers: 3 });
    try {
      const r = await check({}, {
        kind: "TalosUpgrade", clusterName: "overrides", kubeconfig: s.kubeconfig, talosconfig: s.talosconfig,
        owner: "p/s/talos", version: "v1.13.2", healthchecks: [],
        strategy: { machineSetParallelism: { gpu: 2 } },
        machines: [
          { name: "cp-1" },
          { name: "w-1", machineSet: "gpu" },
          { name: "w-2", machineSet: "gpu" },
          // w-3 is not named: not managed by this Cluster
        ],
      });
      assert.equal(r.failures, undefined);
      assert.deepEqual(r.inputs?.plan, [
        "upgrade 3 of 3 machines to v1.13.2 in 2 waves",
        "1. cp-1 (controlplane) v1.12.4 → v1.13.2",
        "2. w-1, w-2 (worker, set gpu) v1.12.4 → v1.13.2",
        "installer ghcr.io/siderolabs/installer:v1.13.2: cp-1, w-1, w-2",
      ]);

      // A status ConfigMap someone else wrote, claiming the cluster last converged to the target: display only. The
      // plan stays an upgrade (a revert would run without any gate) and the warning names the ConfigMap.
      await clients(s).core.createNamespacedConfigMap({ namespace: "kube-system", body: {
        metadata: { name: "talos-gate-status-overrides" }, data: { "status.json": JSON.stringify({ lastUpgradeVersion: "v1.13.2" }) },
      } });
      const warnings = captureStderr();
      let forged;
      try {
        forged = await check({}, {
          kind: "TalosUpgrade", clusterName: "overrides", kubeconfig: s.kubeconfig, talosconfig: s.talosconfig,
          owner: "p/s/talos", version: "v1.13.2", healthchecks: [], strategy: { machineSetParallelism: { gpu: 2 } },
          machines: [{ name: "cp-1" }, { name: "w-1", machineSet: "gpu" }, { name: "w-2", machineSet: "gpu" }],
        });
      } finally {
        warnings.restore();
      }
      assert.equal(forged.inputs?.plan[0], "upgrade 3 of 3 machines to v1.13.2 in 2 waves");
      assert.match(warnings.text(), /kube-system\/talos-gate-status-overrides says the cluster last converged to v1\.13\.2, but it was written by someone else, not this resource; ignored/);
      // The run decides the same way: an upgrade keeps its gates (here a window that is closed now: the create
      // succeeds, Waiting, issue 22.3), where a revert would have rolled every node at once.
      const waiting = await create({
        kind: "TalosUpgrade", clusterName: "overrides", kubeconfig: s.kubeconfig, talosconfig: s.talosconfig,
        owner: "p/s/talos", version: "v1.13.2", healthchecks: [], machines: [{ name: "cp-1" }],
        maintenanceWindows: [{ cron: "0 0 1 1 *", duration: "1m", timeZone: "UTC" }],
      });
      const status = waiting.outs?.status as { phase: string; step: string };
      assert.equal(status.phase, "Waiting");
      assert.match(status.step, /^waiting for the maintenance window: next opens \w{3} \d{4}-01-01 00:00 UTC, in \d+d\d+h$/);
      assert.deepEqual(Object.values(versions(s)), ["v1.12.4", "v1.12.4", "v1.12.4", "v1.12.4"], "no node was touched");

      // customTimeouts.create bounds the whole run (issue 22.8): a check that never finishes holds the gate far below
      // holdTimeout, and the run stops at the bound, before its first node, saying so.
      const sleeper = { apiVersion: "batch/v1", kind: "Job", spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never",
        containers: [{ name: "c", image: "busybox", command: ["sh", "-c", "sleep 600"] }] } } } };
      await assert.rejects(create({
        kind: "TalosUpgrade", clusterName: "overrides", kubeconfig: s.kubeconfig, talosconfig: s.talosconfig,
        owner: "p/s/talos", version: "v1.13.2", machines: [{ name: "cp-1" }], holdTimeout: "10m",
        healthchecks: [{ cluster: "overrides", name: "slow", job: sleeper, interval: "1m" }],
        customTimeouts: { create: "3s" },
      }), (err: Error) => {
        assert.match(err.message, /^upgrade cancelled before node cp-1 \(0\/1 machines on the target\): the create ran longer than customTimeouts\.create 3s \(nodes in flight finished, no further node was started\); run `pulumi up` again to resume/);
        return true;
      });
      assert.deepEqual(Object.values(versions(s)), ["v1.12.4", "v1.12.4", "v1.12.4", "v1.12.4"], "no node was touched");
    } finally {
      await s.stop();
    }
  });

  it("the preview plan shows each node's own installer image: its platform and Image Factory schematic, else the vanilla one", async () => {
    const schematic = "a".repeat(64);
    const s = await sim({ controlPlanes: 1, workers: 2, nodes: { "w-1": { platform: "aws", schematic, extensions: [{ name: "iscsi-tools", version: "v0.2.0" }] } } });
    try {
      const props = {
        kind: "TalosUpgrade", clusterName: "images", kubeconfig: s.kubeconfig, talosconfig: s.talosconfig,
        owner: "p/s/talos", version: "v1.13.2", healthchecks: [],
      };
      const own = await check({}, props);
      assert.deepEqual(own.inputs?.plan.filter((l: string) => l.startsWith("installer ")), [
        `installer factory.talos.dev/aws-installer/${schematic}:v1.13.2: w-1`,
        "installer ghcr.io/siderolabs/installer:v1.13.2: cp-1, w-2",
      ]);
      const chosen = await check({}, { ...props, installerImage: "registry.local/talos/installer:v1.13.2" });
      assert.deepEqual(chosen.inputs?.plan.filter((l: string) => l.startsWith("installer ")), [
        "installer registry.local/talos/installer:v1.13.2: every node",
      ]);
    } finally {
      await s.stop();
    }
  });

  it("the run's view of the port applies the overrides to every read (the Talos address included)", async () => {
    const s = await sim({ controlPlanes: 1, workers: 1 });
    try {
      const { kube } = adapters(s);
      const view = withMachineOverrides(kube, [{ name: "w-1", role: "controlplane", address: "10.9.9.9", machineSet: "edge" }]);
      const listed = await view.listMachines();
      assert.deepEqual(listed.map((m) => [m.name, m.role, m.address, m.machineSet]), [["w-1", "controlplane", "10.9.9.9", "edge"]]);
      const read = await view.readMachine!("w-1");
      assert.deepEqual([read?.role, read?.address, read?.machineSet], ["controlplane", "10.9.9.9", "edge"]);
      assert.equal(await view.readMachine!("cp-1"), undefined, "a machine the Cluster does not name is not the rollout's");
      await assert.rejects(withMachineOverrides(kube, [{ name: "nope" }]).listMachines(), /machine "nope" is not a Node of the cluster; known: cp-1, w-1; fix the Cluster's machines list/);
    } finally {
      await s.stop();
    }
  });

  it("check refuses the nodes whose image cannot be derived (extensions or SecureBoot without a schematic), naming them; a run that gets past a preview installs each node's own image and stops at them", async () => {
    const [metal, aws] = ["b".repeat(64), "c".repeat(64)];
    const s = await sim({
      controlPlanes: 1, workers: 3,
      nodes: {
        "cp-1": { platform: "metal", schematic: metal, secureBoot: true },
        "w-1": { platform: "aws", schematic: aws },
        "w-2": { platform: "metal", extensions: [{ name: "iscsi-tools", version: "v0.2.0" }] },
        "w-3": { platform: "metal", secureBoot: true },
      },
    });
    try {
      const news = {
        kind: "TalosUpgrade", clusterName: "run-images", kubeconfig: s.kubeconfig, talosconfig: s.talosconfig,
        owner: "p/s/talos", version: "v1.13.2", healthchecks: [],
      };
      // `pulumi preview` and `pulumi up` stop here, before any node is touched.
      const r = await check({}, news);
      assert.deepEqual(r.failures?.map((f) => f.property), ["installerImage", "installerImage"]);
      assert.match(r.failures![0].reason, /^node w-2 runs system extensions \(iscsi-tools\) without an Image Factory schematic: set installerImage/);
      assert.match(r.failures![1].reason, /^node w-3 boots with SecureBoot without an Image Factory schematic: set installerImage/);
      // A run that starts anyway (its preview could not read those nodes in time) refuses the first one at its turn.
      await assert.rejects(create({ ...news, plan: [] }), (err: Error) => {
        assert.match(err.message, /node w-2 not upgraded, its installer image is unknown: node w-2 runs system extensions \(iscsi-tools\) without an Image Factory schematic: set installerImage/);
        assert.match(err.message, /nothing was installed on it/);
        assert.doesNotMatch(err.message, /talosctl dmesg/, "no advice to inspect a node whose configuration is the problem");
        return true;
      });
      const installed = Object.fromEntries(["cp-1", "w-1", "w-2", "w-3"].map((n) => [n, s.talos.node(n).installedImages]));
      assert.deepEqual(installed, {
        "cp-1": [`factory.talos.dev/metal-installer-secureboot/${metal}:v1.13.2`],
        "w-1": [`factory.talos.dev/aws-installer/${aws}:v1.13.2`],
        "w-2": [],
        "w-3": [],
      });
    } finally {
      await s.stop();
    }
  });
});
