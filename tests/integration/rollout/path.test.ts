// An upgrade path (TalosUpgrade.path) on the sim: from v1.11.x through v1.12.11 to v1.13.2 in one run — the sim's
// installer refuses 1.11 → 1.13 as Talos' does — each step a full gated rollout (control planes first, the gate before
// every wave); then a run killed mid-step (SIGKILL of its process while a node of step 2 is down) resumes in that
// step, and no node goes down twice for one step.
import * as assert from "node:assert/strict";
import type { KubeClient } from "../../../provider/kube";
import { runPath } from "../../../provider/rollout/pathRun";
import type { UpgradeStatus } from "../../../provider/rollout/status";
import type { TalosApiImpl } from "../../../provider/talos";
import type { SimCluster } from "../../../sim/cluster";
import { adapters, recordBoots, rejection, runOptions, shellCheck, sim, startChild, until, versions } from "./helpers";

const CLUSTER = "paths";

describe("integration: rollout — upgrade paths, step by step (sim)", function () {
  this.timeout(240000);
  let s: SimCluster;
  let kube: KubeClient;
  let talos: TalosApiImpl;

  before(async () => {
    s = await sim({ controlPlanes: 1, workers: 2, version: "v1.11.6" });
    ({ kube, talos } = adapters(s));
  });

  after(async () => {
    await s?.stop();
  });

  it("path [v1.12.11] takes v1.11.6 to v1.13.2 in one run: each step gated before every wave, control planes first", async () => {
    const boots = recordBoots(s);
    const lines: string[] = [];
    const statuses: string[] = [];
    // One Lease for the whole path: between two steps no other pipeline may take the cluster.
    let acquired = 0;
    let refusedBetweenSteps: unknown;
    const counted = new Proxy(kube, {
      get(target, prop) {
        if (prop === "acquireLease") return (...a: Parameters<KubeClient["acquireLease"]>) => (acquired++, target.acquireLease(...a));
        const v = Reflect.get(target, prop) as unknown;
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const done = await runPath(counted, talos, runOptions(CLUSTER, {
      targetVersion: "v1.13.2",
      healthchecks: [shellCheck(CLUSTER, "ok", "true")],
      onProgress: (l) => {
        lines.push(l);
        // The second step's headline: step 1 is over; another holder must still be refused now.
        if (l.endsWith("path step 2/2: → v1.13.2: a full gated rollout")) {
          refusedBetweenSteps = kube.acquireLease({ cluster: CLUSTER, holder: "another-pipeline@ci-2" }).then(
            async (l2) => { await l2.release(); return undefined; }, (e: Error) => e);
        }
      },
      onStatus: (st) => statuses.push(st.status),
    }), ["v1.12.11"]);
    assert.equal(acquired, 1, "the path's steps run under one Lease");
    assert.match(String(await refusedBetweenSteps), /another rollout holds the lease \(holder "/, "another holder is refused between the steps");
    assert.equal(done.phase, "Done");
    assert.equal(done.lastUpgradeVersion, "v1.13.2");
    assert.deepEqual(versions(s), { "cp-1": "v1.13.2", "w-1": "v1.13.2", "w-2": "v1.13.2" });
    for (const n of ["cp-1", "w-1", "w-2"]) {
      assert.deepEqual(s.talos.node(n).installedImages.map((i) => i.split(":").pop()), ["v1.12.11", "v1.13.2"], n);
    }
    assert.deepEqual(boots.downs.map((d) => d.node), ["cp-1", "w-1", "w-2", "cp-1", "w-1", "w-2"]);
    // Each step: its headline, then per wave the gate opening before the node goes.
    const shape = lines
      .map((l) => / path step (\S+: → [^:\s]+)/.exec(l)?.[1] ?? (/ gate open/.test(l) ? "gate" : / node (\S+): upgrading (\S+ → \S+)/.exec(l)?.slice(1).join(" ")))
      .filter(Boolean);
    assert.deepEqual(shape, [
      "1/2: → v1.12.11", "gate", "cp-1 v1.11.6 → v1.12.11", "gate", "w-1 v1.11.6 → v1.12.11", "gate", "w-2 v1.11.6 → v1.12.11",
      "2/2: → v1.13.2", "gate", "cp-1 v1.12.11 → v1.13.2", "gate", "w-1 v1.12.11 → v1.13.2", "gate", "w-2 v1.12.11 → v1.13.2",
    ], lines.join("\n"));
    assert.ok(statuses.some((l) => l.startsWith("1/2: → v1.12.11; updating machines")), statuses.join("\n"));
    assert.ok(statuses.some((l) => l.startsWith("2/2: → v1.13.2; updating machines")), statuses.join("\n"));
  });

  it("killed mid-step 2, the next run resumes in step 2: step 1 is not rolled again, no node goes down twice for a step", async () => {
    const boots = recordBoots(s);
    s.talos.node("w-1").faults.slowBootMs = 6000;
    const holder = "pipeline-a@ci-1:4545";
    const { child, lines } = startChild({
      kubeconfigPath: s.kubeconfigPath, talosconfigPath: s.talosconfigPath, cluster: CLUSTER, holder,
      targetVersion: "v1.14.0", path: ["v1.13.4"], leaseDurationSeconds: 3,
    });
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    // w-1's second down is its step-2 upgrade (cp-1 is through both steps by then).
    await until("w-1 to go down in step 2", () => boots.downsOf("w-1") === 2, 120000);
    child.kill("SIGKILL");
    await exited;
    assert.ok(lines.some((l) => l.endsWith("path step 2/2: → v1.14.0: a full gated rollout")), lines.join("\n"));
    assert.equal(s.talos.node("w-1").up, false, "w-1 is still rebooting into step 2 when the next run starts");

    const again: string[] = [];
    const statuses: UpgradeStatus[] = [];
    const done = await runPath(kube, talos, runOptions(CLUSTER, {
      holder, targetVersion: "v1.14.0", onProgress: (l) => again.push(l), onStatus: (st) => statuses.push(st),
    }), ["v1.13.4"]);
    assert.equal(done.phase, "Done");
    assert.deepEqual(versions(s), { "cp-1": "v1.14.0", "w-1": "v1.14.0", "w-2": "v1.14.0" });
    assert.deepEqual(again.filter((l) => l.includes(" path step ")), ["[talos-gate/paths] path step 2/2: → v1.14.0: a full gated rollout"], again.join("\n"));
    const started = again.map((l) => / node (\S+): upgrading /.exec(l)?.[1]).filter(Boolean);
    assert.deepEqual(started, ["w-2"], again.join("\n"));
    for (const n of ["cp-1", "w-1", "w-2"]) assert.equal(boots.downsOf(n), 2, `${n} went down ${boots.downsOf(n)} times for two steps`);
  });

  it("a step that fails says its step, and setting the version back to the step before reverts it (ungated), not further", async () => {
    const boots = recordBoots(s);
    // w-1 comes back on its old version in step 2 (set as step 2 starts).
    const onProgress = (l: string) => {
      if (l.includes(" path step 2/2")) s.talos.node("w-1").faults.rollback = true;
    };
    const err = await rejection(runPath(kube, talos, runOptions(CLUSTER, { targetVersion: "v1.14.2", onProgress }), ["v1.14.1"]));
    s.talos.node("w-1").faults.rollback = false;
    assert.match(err.message, /node w-1 failed: .* came back on v1\.14\.1 instead of v1\.14\.2/);
    assert.equal(err.status.phase, "Failed");
    assert.match(err.status.status, /^2\/2: → v1\.14\.2; /, "the failed status says its step");
    assert.equal(err.status.lastUpgradeVersion, "v1.14.1", "the step before is what the cluster last converged to");
    assert.deepEqual(versions(s), { "cp-1": "v1.14.2", "w-1": "v1.14.1", "w-2": "v1.14.1" });

    // The resource stores that status; its lastUpgradeVersion makes v1.14.1 a revert: cp-1 goes back, ungated.
    const lines: string[] = [];
    const back = await runPath(kube, talos, runOptions(CLUSTER, {
      targetVersion: "v1.14.1", lastUpgradeVersion: err.status.lastUpgradeVersion, onProgress: (l) => lines.push(l),
      healthchecks: [shellCheck(CLUSTER, "never", "exit 1")],
    }), []);
    assert.equal(back.phase, "Done");
    assert.ok(lines.some((l) => / reverting 1 of 3 machines to v1\.14\.1/.test(l)), lines.join("\n"));
    assert.deepEqual(versions(s), { "cp-1": "v1.14.1", "w-1": "v1.14.1", "w-2": "v1.14.1" });
    assert.deepEqual(boots.downs.map((d) => d.node), ["cp-1", "w-1", "w-2", "cp-1", "w-1", "cp-1"]);
  });

  it("a path whose step is behind a node is refused before any node moves (the step's run would take it back)", async () => {
    // w-2 upgraded by hand past the step the others are still below.
    await talos.upgradeNode(s.talos.node("w-2").address, { image: "ghcr.io/siderolabs/installer:v1.14.7", targetVersion: "v1.14.7", nodeTimeoutMs: 30000 });
    await until("w-2's Node to show v1.14.7", async () => (await kube.listMachines()).some((m) => m.name === "w-2" && m.ready && m.talosVersion === "v1.14.7"));
    const boots = recordBoots(s);
    await assert.rejects(runPath(kube, talos, runOptions(CLUSTER, { targetVersion: "v1.14.9" }), ["v1.14.6"]),
      /node w-2 runs v1\.14\.7, newer than the path step v1\.14\.6; a rollout never takes a node back: drop v1\.14\.6 from path/);
    assert.deepEqual(boots.downs, []);
  });
});
