// Safe on every node, on the sim with the real adapters: a first run that fails part way can always be rolled back
// (ungated), talos-gate lifts exactly the cordons it set (never an administrator's, also after a failed node), and one
// not-ready node slows the rollout instead of freezing it (set aside, named, upgraded by a later run). The tests run in
// order; each starts from the state the previous one left.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import * as YAML from "yaml";
import { createKubeApi, KubeError, type KubeClient } from "../../../provider/kube";
import { pipelineRbac } from "../../../provider/kube/rbac";
import { runRollout } from "../../../provider/rollout/run";
import type { TalosApiImpl } from "../../../provider/talos";
import type { SimCluster } from "../../../sim/cluster";
import { adapters, clients, configMapGateCheck, delay, FROM, grantGateRead, recordBoots, runOptions, setGate, sim, TARGET, until, versions, rejection } from "./helpers";

const CLUSTER = "safety";
const NEXT = "v1.13.3";

describe("integration: rollout — safe on every node (real adapters on the sim)", function () {
  this.timeout(300000);
  let s: SimCluster;
  let kube: KubeClient;
  let talos: TalosApiImpl;
  let boots: ReturnType<typeof recordBoots>;
  const cordoned = async (node: string) => (await kube.listMachines()).find((m) => m.name === node)!.cordoned;
  const core = () => clients(s).core;
  const kc = () => {
    const c = new k8s.KubeConfig();
    c.loadFromString(s.kubeconfig);
    return c;
  };
  /**
   * A pod on `node` whose PodDisruptionBudget allows no disruption (a ReplicaSet's, so Talos' drain would try it too);
   * resolves once the budget says so, with the function that removes both.
   */
  const guardPod = async (node: string): Promise<() => Promise<void>> => {
    const labels = { app: "guarded" };
    const apps = kc().makeApiClient(k8s.AppsV1Api);
    const policy = kc().makeApiClient(k8s.PolicyV1Api);
    const unguard = async () => {
      await policy.deleteNamespacedPodDisruptionBudget({ name: "guarded", namespace: "default" }).catch(() => undefined);
      await apps.deleteNamespacedReplicaSet({ name: "guarded", namespace: "default" }).catch(() => undefined);
    };
    await apps.createNamespacedReplicaSet({ namespace: "default", body: {
      metadata: { name: "guarded" },
      spec: {
        replicas: 1, selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { nodeSelector: { "kubernetes.io/hostname": node }, containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] } },
      },
    } });
    await policy.createNamespacedPodDisruptionBudget({ namespace: "default", body: { metadata: { name: "guarded" }, spec: { minAvailable: 1, selector: { matchLabels: labels } } } });
    try {
      await until("the budget to allow no disruption", async () => {
        const pdb = await policy.readNamespacedPodDisruptionBudget({ name: "guarded", namespace: "default" });
        return pdb.status?.observedGeneration === pdb.metadata?.generation && pdb.status?.currentHealthy === 1 && pdb.status.disruptionsAllowed === 0;
      });
    } catch (e) {
      await unguard();
      throw e;
    }
    return unguard;
  };

  before(async () => {
    s = await sim({ controlPlanes: 1, workers: 3 });
    ({ kube, talos } = adapters(s));
    boots = recordBoots(s);
    await grantGateRead(kube, CLUSTER, ["safety-gate"]);
  });

  after(async () => {
    await s?.stop();
  });

  it("a first run that fails part way records the converged version, so setting it back is an ungated revert", async () => {
    await setGate(core(), "safety-gate", true);
    const gate = configMapGateCheck(CLUSTER, "safety-gate");
    // The gate opens for the control plane, then closes: the first run fails with cp-1 upgraded, the workers not.
    // (12 s: under load a passing check took more than 4 s, and the run failed before cp-1.)
    const first = await rejection(runRollout(kube, talos, runOptions(CLUSTER, {
      healthchecks: [gate], holdTimeoutMs: 12_000,
      onProgress: (l) => {
        if (/node cp-1: back on/.test(l)) void setGate(core(), "safety-gate", false);
      },
    })));
    assert.match(first.message, /held the upgrade longer than holdTimeout/);
    assert.equal(first.status.lastUpgradeVersion, FROM, "the version the cluster had converged to is recorded");
    assert.deepEqual(versions(s), { "cp-1": TARGET, "w-1": FROM, "w-2": FROM, "w-3": FROM });
    // Setting the version back, with the check still failing: a revert, not held (before the fix: an upgrade, gated).
    const back = await runRollout(kube, talos, runOptions(CLUSTER, {
      targetVersion: FROM, lastUpgradeVersion: first.status.lastUpgradeVersion, healthchecks: [gate], holdTimeoutMs: 4000,
    }));
    assert.equal(back.phase, "Done");
    assert.equal(back.mode, "done");
    assert.deepEqual(versions(s), { "cp-1": FROM, "w-1": FROM, "w-2": FROM, "w-3": FROM });
    assert.equal(back.healthchecks.find((h) => h.id === gate.id)?.attempts ?? 0, 0, "the revert ran no check");
    await setGate(core(), "safety-gate", true);
  });

  it("18.3 legacy path: talos-gate drains first, PodDisruptionBudgets honoured; a drain that cannot finish leaves the node as it was", async () => {
    // A pod on w-1 that its budget allows no disruption of. Talos' own drain logs the refusal and, after 5 minutes,
    // reboots anyway (siderolabs/talos pkg/kubernetes Drain: "WARNING: failed to evict pod"); ours refuses the node.
    const unguard = await guardPod("w-1");
    try {
      const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { drainTimeoutMs: 3000, nodeTimeoutMs: 20_000 })));
      assert.match(err.message, /^upgrade of node w-1 failed: drain of node w-1 did not finish within 3s: .*PodDisruptionBudget default\/guarded/);
      assert.equal(s.talos.node("w-1").received.upgrade, 0, "Talos was never asked to upgrade w-1 (before the fix: it was, and drained it itself)");
      assert.deepEqual(versions(s), { "cp-1": TARGET, "w-1": FROM, "w-2": FROM, "w-3": FROM });
      assert.equal(await cordoned("w-1"), false, "our cordon is lifted");
    } finally {
      await unguard();
    }
  });

  it("an administrator's cordon survives a legacy upgrade (Talos cordons and uncordons for itself)", async () => {
    await core().patchNode({ name: "w-1", body: [{ op: "add", path: "/spec/unschedulable", value: true }] }); // kubectl cordon
    const done = await runRollout(kube, talos, runOptions(CLUSTER));
    assert.equal(done.phase, "Done");
    assert.deepEqual(versions(s), { "cp-1": TARGET, "w-1": TARGET, "w-2": TARGET, "w-3": TARGET });
    assert.equal(await cordoned("w-1"), true, "the administrator's cordon is still there (before the fix it was lifted)");
    for (const n of ["cp-1", "w-2", "w-3"]) assert.equal(await cordoned(n), false, `${n} schedulable`);
    await core().patchNode({ name: "w-1", body: [{ op: "add", path: "/spec/unschedulable", value: false }] });
  });

  it("18.5 a cordon someone lifted loses talos-gate's mark at the next run: an administrator's later cordon is never lifted", async () => {
    const holder = runOptions(CLUSTER).holder;
    assert.equal(await kube.cordon("w-3", holder), true); // what a killed run leaves
    await core().patchNode({ name: "w-3", body: [{ op: "add", path: "/spec/unschedulable", value: false }] }); // kubectl uncordon: the mark stays
    // A run (every node on the target already) drops the stale mark at its start.
    assert.equal((await runRollout(kube, talos, runOptions(CLUSTER))).phase, "Done");
    assert.equal((await core().readNode({ name: "w-3" })).metadata?.annotations?.["talos-gate.dev/cordoned-by"], undefined, "the stale mark is gone");
    await core().patchNode({ name: "w-3", body: [{ op: "add", path: "/spec/unschedulable", value: true }] }); // an administrator's kubectl cordon
    try {
      assert.equal((await runRollout(kube, talos, runOptions(CLUSTER))).phase, "Done");
      assert.equal(await cordoned("w-3"), true, "the administrator's cordon stays (before the fix the run lifted it as its own leftover)");
    } finally {
      await core().patchNode({ name: "w-3", body: [{ op: "add", path: "/spec/unschedulable", value: false }] });
    }
  });

  it("a node that comes back on the old version (A/B rollback) fails the run without staying cordoned by us", async () => {
    // v1.13.2 → v1.13.3: the LifecycleService path, where talos-gate drains (and so cordons) the node itself.
    s.talos.node("w-2").faults.rollback = true;
    boots.downs.length = 0;
    try {
      const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: NEXT })));
      assert.match(err.message, /w-2/);
      assert.equal(versions(s)["w-2"], TARGET, "w-2 rolled back");
      assert.equal(await cordoned("w-2"), false, "our cordon of the failed node is lifted (before the fix it stayed)");
      assert.equal(versions(s)["w-3"], TARGET, "the node after it was not touched");
      const marked = (await kube.listMachines()).filter((m) => m.cordonedBy !== undefined);
      assert.deepEqual(marked, [], "no node carries talos-gate's cordon mark");
    } finally {
      s.talos.node("w-2").faults.rollback = false;
    }
    const done = await runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: NEXT }));
    assert.equal(done.phase, "Done");
  });

  it("one not-ready node does not freeze the rollout: the others go, it is set aside and named; a later run finishes it", async () => {
    await s.kube.nodes.down("w-2"); // its kubelet stops reporting; Talos itself is fine
    boots.downs.length = 0;
    const lines: string[] = [];
    const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, {
      targetVersion: "v1.13.4", healthchecks: [configMapGateCheck(CLUSTER, "safety-gate")], holdTimeoutMs: 20000,
      onProgress: (l) => lines.push(l),
    })));
    assert.match(err.message, /^3\/4 machines on the target; set aside because they were not ready when their turn came: w-2; make them Ready/);
    assert.deepEqual(versions(s), { "cp-1": "v1.13.4", "w-1": "v1.13.4", "w-2": NEXT, "w-3": "v1.13.4" });
    assert.deepEqual(boots.downs.map((d) => d.node).sort(), ["cp-1", "w-1", "w-3"], "the not-ready node was not touched");
    assert.equal(err.status.machines.find((m) => m.name === "w-2")?.state, "set-aside");
    assert.ok(lines.some((l) => l.endsWith("node w-2: set aside: not ready when its turn came (not upgraded; a later run upgrades it once it is Ready)")), lines.join("\n"));
    assert.ok(lines.filter((l) => / gate before wave /.test(l)).length >= 3, "every wave was still gated");
    await s.kube.nodes.up("w-2");
    const again = await runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: "v1.13.4" }));
    assert.equal(again.phase, "Done");
    assert.equal(versions(s)["w-2"], "v1.13.4");
  });

  it("waits watch the Nodes instead of polling them: no Node is read one by one, the cluster is listed a bounded number of times", async () => {
    let lists = 0;
    let reads = 0;
    // A counting view over the port (not another implementation): the run's reads of Nodes go through it.
    const counted = Object.assign(Object.create(kube), {
      listMachines: () => { lists++; return kube.listMachines(); },
      readMachine: (name: string) => { reads++; return kube.readMachine!(name); },
    }) as KubeClient;
    const done = await runRollout(counted, talos, runOptions(CLUSTER, { targetVersion: "v1.13.5", readyPollMs: 100 }));
    assert.equal(done.phase, "Done");
    assert.equal(reads, 0, "no Node polled while waiting for it to come back Ready");
    // The end-of-run look for leftover cordons is a fresh list; everything else comes from the one watch.
    assert.ok(lists <= 2, `lists: ${lists} (before: one per wave and one per 100 ms of every wait)`);
  });

  it("a kubeconfig that may not read VolumeAttachments gets a warning, not a failed node, on the >= 1.13 path", async () => {
    // A view over the port whose VolumeAttachment reads are refused as an API server refuses them (403 Forbidden).
    const refused = Object.assign(Object.create(kube), {
      waitForVolumeDetach: async () => {
        throw new KubeError('volumeattachments.storage.k8s.io is forbidden: User "ci" cannot list resource "volumeattachments"', 403, "Forbidden");
      },
    }) as KubeClient;
    const warnings: string[] = [];
    const done = await runRollout(refused, talos, runOptions(CLUSTER, {
      targetVersion: "v1.13.6", volumeDetachTimeoutMs: 60_000, onWarning: (l) => warnings.push(l),
    }));
    assert.equal(done.phase, "Done");
    assert.ok(warnings.some((w) => /node cp-1: not waiting for its volumes to detach before the reboot: the kubeconfig may not list or watch volumeattachments/.test(w)), warnings.join("\n"));
  });
  it("a whole rollout runs with a kubeconfig bound to exactly the shipped role (talos-gate rbac): no request refused", async () => {
    // The pipeline's identity as a user sets it up: a ServiceAccount, `talos-gate rbac --service-account ci/pipeline`
    // applied by an administrator, and a kubeconfig with the account's token instead of admin credentials.
    await setGate(core(), "safety-gate", true);
    const subject = { kind: "ServiceAccount" as const, namespace: "ci", name: "pipeline" };
    await kube.applyManifests([{
      name: "pipeline-rbac",
      content: [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "ci" } },
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "pipeline", namespace: "ci" } }, ...pipelineRbac(subject)],
    }], { cluster: "administrator" }); // its own inventory: an apply for CLUSTER would prune the gate's RBAC
    const kc = new k8s.KubeConfig();
    kc.loadFromString(s.kubeconfig);
    const token = (await kc.makeApiClient(k8s.CoreV1Api).createNamespacedServiceAccountToken({
      name: "pipeline", namespace: "ci", body: { spec: { audiences: [] } },
    })).status!.token;
    const admin = YAML.parse(s.kubeconfig);
    const text = YAML.stringify({ ...admin, users: [{ name: admin.users[0].name, user: { token } }] });
    const refused: string[] = [];
    const pipeline = createKubeApi(text, { log: (l) => refused.push(l) });
    try {
      const warnings: string[] = [];
      const done = await runRollout(pipeline, talos, runOptions(CLUSTER, {
        targetVersion: "v1.13.7", healthchecks: [configMapGateCheck(CLUSTER, "safety-gate")], onWarning: (l) => warnings.push(l),
      })).catch((e) => {
        throw new Error(`${e.message}\n${[...warnings, ...refused].join("\n")}`);
      });
      assert.equal(done.phase, "Done");
      assert.deepEqual(versions(s), { "cp-1": "v1.13.7", "w-1": "v1.13.7", "w-2": "v1.13.7", "w-3": "v1.13.7" });
      await pipeline.flush();
      assert.deepEqual([...warnings, ...refused].filter((l) => /forbidden|403/i.test(l)), [], "nothing the rollout asked for was refused");
      // ...and nothing beyond: the role cannot, for example, read Secrets.
      await assert.rejects(pipeline.applyManifests([{ name: "x", content: [{ apiVersion: "v1", kind: "Secret", metadata: { name: "x", namespace: "ci" } }] }], { cluster: "probe" }), /forbidden/);
    } finally {
      await pipeline.close();
    }
  });

  it("18.4 a >= 1.13 upgrade that fails after the install leaves the node armed: the status says so, and a revert disarms it", async () => {
    // From v1.13.7 everywhere (the previous test). w-1's drain is refused after v1.13.8 was installed on it.
    const unguard = await guardPod("w-1");
    boots.downs.length = 0;
    let failed;
    try {
      failed = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: "v1.13.8", drainTimeoutMs: 3000 })));
    } finally {
      await unguard();
    }
    assert.match(failed.message, /^upgrade of node w-1 failed: drain of node w-1 .* \(node w-1 is armed: v1\.13\.8 is installed and boots at its next reboot/);
    assert.match(failed.message, /PodDisruptionBudget default\/guarded/, "the drain refused during the rollout names the budget");
    assert.equal(await cordoned("w-1"), false, "the failed node's cordon (ours) is lifted");
    assert.equal(failed.status.machines.find((m) => m.name === "w-1")?.armed, "v1.13.8", "the status says w-1 is armed");
    assert.match(s.talos.node("w-1").stagedImage ?? "", /:v1\.13\.8$/, "the sim agrees: v1.13.8 waits on w-1's disk");
    assert.deepEqual(boots.downs.map((d) => d.node), ["cp-1"]);
    // Setting the version back: cp-1 is rolled back, w-1 (still running v1.13.7, so not planned) is disarmed.
    const lines: string[] = [];
    const back = await runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: "v1.13.7", lastUpgradeVersion: "v1.13.7", onProgress: (l) => lines.push(l) }));
    assert.equal(back.phase, "Done");
    assert.match(s.talos.node("w-1").stagedImage ?? "", /:v1\.13\.7$/, "before the fix v1.13.8 stayed armed: an unplanned reboot would boot it, ungated");
    assert.equal(back.machines.find((m) => m.name === "w-1")?.armed, undefined);
    assert.ok(lines.some((l) => l.endsWith("node w-1: disarmed: v1.13.7, the version it runs, installed again (no reboot)")), lines.join("\n"));
    assert.deepEqual(boots.downs.map((d) => d.node), ["cp-1", "cp-1"], "w-1 was not rebooted");
    assert.deepEqual(new Set(Object.values(versions(s))), new Set(["v1.13.7"]));
  });

  it("18.1 a worker that went down to boot the target and never came back is not counted as reverted: set aside, named, reverted once back", async () => {
    // From v1.13.7 everywhere (the previous test). w-1 goes down to boot v1.13.8 and never comes back.
    const w1 = s.talos.node("w-1");
    w1.faults.neverComesBack = true;
    const failed = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: "v1.13.8", nodeTimeoutMs: 12_000 })));
    assert.match(failed.message, /^node w-1 was not back on v1\.13\.8 within nodeTimeout/);
    // Its Node still shows v1.13.7 (its kubelet has not reported since it went down), as a real one does.
    assert.equal((await kube.listMachines()).find((m) => m.name === "w-1")?.talosVersion, "v1.13.7");
    // Setting the version back while it is still down: cp-1 is rolled back; w-1 is not taken for a node on v1.13.7.
    const down = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: "v1.13.7", lastUpgradeVersion: "v1.13.7" })));
    assert.match(down.message, /^3\/4 machines on the target; set aside because they were not ready when their turn came: w-1;/,
      "before the fix the revert ended Done while w-1 was on its way to v1.13.8");
    assert.equal(down.status.machines.find((m) => m.name === "w-1")?.state, "set-aside");
    // Back (on v1.13.8, where it was going): the next run reverts it.
    w1.faults.neverComesBack = false;
    assert.ok(w1.recover());
    await until("w-1 Ready on v1.13.8", async () => {
      const m = (await kube.listMachines()).find((x) => x.name === "w-1");
      return m?.ready === true && m.talosVersion === "v1.13.8";
    });
    const back = await runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: "v1.13.7", lastUpgradeVersion: "v1.13.7" }));
    assert.equal(back.phase, "Done");
    assert.deepEqual(new Set(Object.values(versions(s))), new Set(["v1.13.7"]));
  });

  it("18.1 a node back on the target that goes down again in the same run stops the run naming it, not as done", async () => {
    // From v1.13.7 everywhere (the previous test). Right after w-2 is back on v1.13.8 it is rebooted and never returns.
    const w2 = s.talos.node("w-2");
    const failed = await rejection(runRollout(kube, talos, runOptions(CLUSTER, {
      targetVersion: "v1.13.8",
      onProgress: (l) => {
        if (!/node w-2: back on/.test(l)) return;
        w2.faults.neverComesBack = true;
        void talos.client.reboot(w2.address);
      },
    })));
    assert.match(failed.message, /^node w-2 was back on v1\.13\.8, then went down again \(not Ready, and Talos does not answer for it\)/,
      "before the fix the run ended Done with w-2 down");
    w2.faults.neverComesBack = false;
    assert.ok(w2.recover());
    const done = await runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: "v1.13.8" }));
    assert.equal(done.phase, "Done");
    assert.deepEqual(new Set(Object.values(versions(s))), new Set(["v1.13.8"]));
  });

  it("issue 23: on the >= 1.13 path a node is cordoned (ours) while its image is pulled; a pull that fails leaves it schedulable", async () => {
    // From v1.13.8 everywhere (the previous test). Pulls take 1.5 s; w-2's fails at once, 2.5 s before its cordon
    // lands (held that long on its way, longer than the run takes to end after the failure, whose own lift of leftover
    // cordons would otherwise hide it): the node's lift after the failure must come after it.
    const holder = runOptions(CLUSTER).holder;
    const cordons: Promise<unknown>[] = [];
    const slowCordons: KubeClient = {
      ...kube,
      cordon: (node, owner) => {
        const landed = delay(node === "w-2" ? 2500 : 0).then(() => kube.cordon(node, owner));
        cordons.push(landed.catch(() => undefined));
        return landed;
      },
    };
    const pullMs = s.talos.timing.pullMs;
    s.talos.timing.pullMs = 1500;
    s.talos.node("w-2").faults.pullFailure = "manifest unknown";
    const machine = async (name: string) => (await kube.listMachines()).find((m) => m.name === name)!;
    let cordonedWhilePulling = false;
    const watching = until("w-1 cordoned by the run before its installer is installed", async () => {
      const w1 = await machine("w-1");
      // Ours, and v1.13.9 never installed on it yet (the list is kept across boots: after the reboot it still names it).
      cordonedWhilePulling = w1.cordonedBy === holder && !s.talos.node("w-1").installedImages.some((i) => i.endsWith(":v1.13.9"));
      return cordonedWhilePulling;
    }, 30_000).catch(() => undefined);
    let failed;
    try {
      failed = await rejection(runRollout(slowCordons, talos, runOptions(CLUSTER, { targetVersion: "v1.13.9" })));
    } finally {
      s.talos.timing.pullMs = pullMs;
      s.talos.node("w-2").faults.pullFailure = undefined;
    }
    await watching;
    await Promise.all(cordons); // every cordon the run sent has landed by now
    assert.ok(cordonedWhilePulling, "before the change the cordon was sent after the install, as the drain began");
    assert.match(failed.message, /^upgrade of node w-2 failed: .*manifest unknown/);
    const w2 = await machine("w-2");
    assert.equal(w2.cordoned, false, "the failed pull's node is schedulable again (its cordon landed after the failure)");
    assert.equal(w2.cordonedBy, undefined, "and carries no mark");
    assert.equal((await machine("w-1")).cordoned, false, "w-1, upgraded, was uncordoned");
    const done = await runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: "v1.13.9" }));
    assert.equal(done.phase, "Done");
    assert.deepEqual(new Set(Object.values(versions(s))), new Set(["v1.13.9"]));
  });

  it("issue 23: a cordon someone else set when the pull began and lifted while it ran: the drain cordons the node itself", async () => {
    // From v1.13.9 everywhere (the previous test). w-1 is cordoned by an administrator; the cordon sent at the pull
    // claims nothing; the administrator lifts theirs 0.5 s into w-1's 1.5 s pull.
    const holder = runOptions(CLUSTER).holder;
    const pullMs = s.talos.timing.pullMs;
    s.talos.timing.pullMs = 1500;
    await core().patchNode({ name: "w-1", body: [{ op: "add", path: "/spec/unschedulable", value: true }] }); // kubectl cordon
    const atDown: Array<Promise<string>> = [];
    const onDown = (n: { name: string }) => {
      if (n.name !== "w-1") return;
      atDown.push(kube.listMachines().then((ms) => {
        const w1 = ms.find((m) => m.name === "w-1")!;
        return `${w1.cordoned ? "cordoned" : "schedulable"} by ${w1.cordonedBy === holder ? "us" : w1.cordonedBy ?? "nobody"}`;
      }));
    };
    s.talos.on("down", onDown);
    try {
      const done = await runRollout(kube, talos, runOptions(CLUSTER, {
        targetVersion: "v1.13.10",
        onProgress: (l) => {
          if (!/node w-1: pulling/.test(l)) return;
          setTimeout(() => void core().patchNode({ name: "w-1", body: [{ op: "replace", path: "/spec/unschedulable", value: false }] }), 500);
        },
      }));
      assert.equal(done.phase, "Done");
    } finally {
      s.talos.off("down", onDown);
      s.talos.timing.pullMs = pullMs;
    }
    assert.deepEqual(await Promise.all(atDown), ["cordoned by us"], "before the fix w-1 went down schedulable: the drain took the early cordon for ours");
    assert.equal(await cordoned("w-1"), false, "and lifted once back");
  });
});
