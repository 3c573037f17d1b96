// A rollout killed mid-node (SIGKILL of its process while a node is down for its upgrade) and started again: the
// dead run's lease refuses a new holder until it expires, then the new run reads the live cluster, waits for the
// rebooting node, and finishes the rest — no node is upgraded twice (counted from the Talos sim's down events).
import * as assert from "node:assert/strict";
import type { KubeClient } from "../../../provider/kube";
import { runRollout } from "../../../provider/rollout/run";
import type { UpgradeStatus } from "../../../provider/rollout/status";
import type { TalosApiImpl } from "../../../provider/talos";
import type { SimCluster } from "../../../sim/cluster";
import type { ChildConfig } from "../../support/rollout-child";
import { adapters, recordBoots, runOptions, sim, startChild, TARGET, until, versions } from "./helpers";

const CLUSTER = "resume";

describe("integration: rollout — killed mid-node and started again (real adapters, child process)", function () {
  this.timeout(240000);
  let s: SimCluster;
  let kube: KubeClient;
  let talos: TalosApiImpl;

  before(async () => {
    s = await sim({ controlPlanes: 1, workers: 2 });
    ({ kube, talos } = adapters(s));
  });

  after(async () => {
    await s?.stop();
  });

  /** Runs the rollout in a child process and SIGKILLs it the moment `node` goes down; returns its progress lines. */
  async function killedWhenDown(
    node: string, boots: ReturnType<typeof recordBoots>, cfg: Pick<ChildConfig, "holder" | "targetVersion" | "leaseDurationSeconds">,
  ): Promise<string[]> {
    const { child, lines } = startChild({ kubeconfigPath: s.kubeconfigPath, talosconfigPath: s.talosconfigPath, cluster: CLUSTER, ...cfg });
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    await until(`${node} to go down`, () => boots.downs.some((d) => d.node === node), 90000);
    child.kill("SIGKILL");
    await exited;
    return lines;
  }

  it("resumes with the first node not on the target and upgrades no node twice", async () => {
    const boots = recordBoots(s);
    // w-1 stays down long enough for the second run to start while it is still rebooting.
    s.talos.node("w-1").faults.slowBootMs = 9000;
    const holder = "pipeline-a@ci-1:4242";
    // Killed the moment w-1 goes down for its upgrade (cp-1 is done by then).
    const lines = await killedWhenDown("w-1", boots, { holder, targetVersion: TARGET, leaseDurationSeconds: 3 });
    assert.deepEqual(boots.downs.map((d) => d.node), ["cp-1", "w-1"]);
    assert.ok(lines.some((l) => l.endsWith("node w-1: waiting") || l.endsWith("node w-1: rebooting")), lines.join("\n"));
    assert.ok(!lines.some((l) => l.includes("RESULT")), "the run was killed, it did not finish");

    // The dead run's status stays mirrored; its lease refuses another holder until it expires.
    const mirrored = (await kube.readStatus(CLUSTER)) as UpgradeStatus;
    assert.equal(mirrored.phase, "Upgrading");
    assert.equal(mirrored.step, "current machine: w-1");
    await assert.rejects(runRollout(kube, talos, runOptions(CLUSTER, { holder: "pipeline-b@ci-2" })), new RegExp(holder.replace(/[.@]/g, "\\$&")));
    await until("the killed run's lease to expire", async () => (await kube.runningRollout(CLUSTER)) === undefined, 30000);

    // Started again while w-1 is still down: waits for it, skips it (it boots the target), upgrades w-2 only.
    assert.equal(s.talos.node("w-1").up, false, "w-1 is still rebooting when the second run starts");
    const again: string[] = [];
    const done = await runRollout(kube, talos, runOptions(CLUSTER, { holder: "pipeline-b@ci-2", onProgress: (l) => again.push(l) }));
    assert.equal(done.phase, "Done");
    assert.equal(done.lastUpgradeVersion, TARGET);
    assert.deepEqual(versions(s), { "cp-1": TARGET, "w-1": TARGET, "w-2": TARGET });
    for (const n of ["cp-1", "w-1", "w-2"]) assert.equal(boots.downsOf(n), 1, `${n} went down ${boots.downsOf(n)} times`);
    const started = again.map((l) => / node (\S+): upgrading /.exec(l)?.[1]).filter(Boolean);
    assert.deepEqual(started, ["w-2"], again.join("\n"));
    assert.ok(again.some((l) => l.includes("waiting for the cluster to be ready: not ready: w-1")), again.join("\n"));
    const machines = await kube.listMachines();
    assert.ok(machines.every((m) => m.ready), JSON.stringify(machines));
    // The killed run drained w-1 itself before the legacy upgrade (issue 18.3), so its cordon is that owner's: another
    // pipeline leaves it alone, the owner's next run lifts it.
    assert.deepEqual(machines.filter((m) => m.cordoned).map((m) => [m.name, m.cordonedBy]), [["w-1", holder]]);
    assert.equal((await runRollout(kube, talos, runOptions(CLUSTER, { holder }))).phase, "Done");
    assert.ok((await kube.listMachines()).every((m) => !m.cordoned), "the owner's run lifted its cordon");
  });

  it("LifecycleService path (>= 1.13 on both sides): a node the killed run drained and cordoned is uncordoned by the next run", async () => {
    // Starts from the previous test: every node on v1.13.2, so v1.13.2 → v1.13.3 takes the new path where talos-gate
    // itself cordons and drains (Talos does not uncordon a node it did not cordon).
    const next = "v1.13.3";
    const boots = recordBoots(s);
    s.talos.node("w-1").faults.slowBootMs = 6000;
    const holder = "pipeline-a@ci-1:4343";
    const lines = await killedWhenDown("w-1", boots, { holder, targetVersion: next, leaseDurationSeconds: 2 });
    assert.ok(lines.some((l) => l.endsWith("node w-1: draining")), lines.join("\n"));
    assert.equal(boots.downs.find((d) => d.node === "w-1")!.reason, "reboot", "the LifecycleService path reboots with MachineService.Reboot");
    await until("w-1 to be back on the target, still cordoned", async () =>
      (await kube.listMachines()).some((m) => m.name === "w-1" && m.ready && m.cordoned && m.talosVersion === next), 30000);

    // Another owner (another stack's pipeline) never lifts a cordon it did not set; the resumed run of the same
    // stack (same lease holder, once the killed run's lease expired) does.
    const other = await runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: next, holder: "pipeline-b@ci-2" }));
    assert.equal(other.phase, "Done", "w-1 is already on the target");
    assert.equal((await kube.listMachines()).find((m) => m.name === "w-1")?.cordoned, true, "not its cordon: left alone");
    const again: string[] = [];
    const done = await runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: next, holder, onProgress: (l) => again.push(l) }));
    assert.equal(done.phase, "Done");
    for (const n of ["cp-1", "w-1", "w-2"]) assert.equal(boots.downsOf(n), 1, `${n} went down ${boots.downsOf(n)} times`);
    assert.ok(again.some((l) => l.endsWith("node w-1: uncordoned: an interrupted run of this upgrade left it cordoned")), again.join("\n"));
    const machines = await kube.listMachines();
    assert.deepEqual(machines.map((m) => [m.name, m.ready, m.cordoned, m.talosVersion]), [
      ["cp-1", true, false, next], ["w-1", true, false, next], ["w-2", true, false, next],
    ]);
  });
});
