// The rollout against a harsher Talos, with the real adapters: several endpoints (the control planes' own apids,
// gone while they reboot), Talos refusing a control plane while the previous one's etcd member catches up (legacy
// path, Talos before v1.12.9), Reboot answers lost as nodes go down fast, Nodes that stay Ready on the old osImage
// through a fast reboot with a kubelet that reports late, per-node installer images, and a single control plane that
// is the only endpoint; and 2 control planes, which Talos refuses for good. Each run upgrades every node exactly once
// (no node twice, none skipped). The runs of one cluster follow one another (each starts where the previous ended).
import * as assert from "node:assert/strict";
import type { KubeClient } from "../../../provider/kube";
import type { Machine } from "../../../provider/rollout/ports";
import { RolloutError, runRollout } from "../../../provider/rollout/run";
import type { UpgradeStatus } from "../../../provider/rollout/status";
import { nodeInstallerImage, TalosApiImpl } from "../../../provider/talos";
import type { SimCluster } from "../../../sim/cluster";
import { adapters, delay, recordBoots, rejection, runOptions, sim, until, versions } from "./helpers";

const S_METAL = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";
const S_AWS = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515";

/** Each machine's own installer image, from what its node reports (how the provider builds them, Omni's rule). */
async function perNodeImages(kube: KubeClient, talos: TalosApiImpl): Promise<(m: Machine, v: string) => string> {
  const facts = new Map(await Promise.all((await kube.listMachines()).map(async (m) => [m.name, await talos.imageFacts(m.address)] as const)));
  return (m, v) => nodeInstallerImage(m.name, v, facts.get(m.name)!);
}

/** Runs a rollout to `target` and checks the outcome every run must have: Done, every node on target, booted once. */
async function rollTo(s: SimCluster, kube: KubeClient, talos: TalosApiImpl, cluster: string, target: string, lines: string[]): Promise<UpgradeStatus> {
  const boots = recordBoots(s);
  const images: string[] = [];
  const perNode = await perNodeImages(kube, talos);
  const status = await runRollout(kube, talos, runOptions(cluster, {
    targetVersion: target,
    lastUpgradeVersion: s.talos.nodes()[0].version,
    installerImage: (m, v) => {
      const img = perNode(m, v);
      images.push(`${m.name} ${img}`);
      return img;
    },
    onProgress: (l) => lines.push(l),
  }));
  assert.equal(status.phase, "Done");
  assert.deepEqual(new Set(Object.values(versions(s))), new Set([target]));
  for (const n of s.talos.nodes()) assert.equal(boots.downsOf(n.name), 1, `${n.name} went down once (no node twice, none skipped)`);
  assert.equal(images.length, s.talos.nodes().length);
  await s.settled();
  return status;
}

/** Records every etcd member's node that goes down while another member is unhealthy, until `restore()`. */
function watchUnhealthyAtDown(etcd: SimCluster["talos"]["etcd"]): { seen: string[]; restore(): void } {
  const seen: string[] = [];
  const nodeDown = etcd.nodeDown.bind(etcd);
  etcd.nodeDown = (name: string) => {
    const sick = etcd.list().filter((m) => !m.healthy && m.name !== name).map((m) => m.name);
    if (sick.length && etcd.member(name)) seen.push(`${name} went down while ${sick.join(", ")} was unhealthy`);
    nodeDown(name);
  };
  return { seen, restore: () => { etcd.nodeDown = nodeDown; } };
}

describe("integration: rollout — a harsher Talos (3 control planes, 1 worker; real adapters)", function () {
  this.timeout(300000);
  let s: SimCluster;
  let kube: KubeClient;
  let talos: TalosApiImpl;
  /** Every control plane that went down while another was down (an etcd quorum at risk); the tests keep it empty. */
  const cpDownWhileAnotherDown: string[] = [];

  before(async () => {
    s = await sim({
      controlPlanes: 3, workers: 1, version: "v1.12.4",
      nodes: {
        "cp-1": { platform: "metal", schematic: S_METAL },
        "cp-2": { platform: "metal", schematic: S_METAL },
        "cp-3": { platform: "metal", schematic: S_METAL },
        "w-1": { platform: "aws", schematic: S_AWS, extensions: [{ name: "iscsi-tools", version: "v0.2.0" }] },
      },
    });
    ({ kube, talos } = adapters(s));
    s.talos.on("down", (n: { name: string; role: string }) => {
      const others = s.talos.nodes().filter((o) => o.role === "controlplane" && o.name !== n.name && !o.up).map((o) => o.name);
      if (n.role === "controlplane" && others.length) cpDownWhileAnotherDown.push(`${n.name} went down while ${others.join(", ")} was down`);
    });
  });
  after(async () => {
    await s?.stop();
  });

  it("the gate holds the next control plane while the last one's etcd member catches up (etcd asked first); never twice", async () => {
    const lines: string[] = [];
    // Each member catches up for 2 s after its node boots (only in this run: the others need no hold).
    s.talos.etcd.knobs.unhealthyAfterBootMs = 2000;
    try {
      await rollTo(s, kube, talos, "harsh-etcd", "v1.13.2", lines);
    } finally {
      s.talos.etcd.knobs.unhealthyAfterBootMs = 0;
    }
    // talos-gate asks etcd before each control plane goes down: the gate holds with the member's problem in the step,
    // so Talos is never even asked while a member is catching up (its own refusal is the port's retried fallback).
    const held = lines.filter((l) => /gate held: "talos-gate:etcd": etcd is not healthy, so control plane cp-[23] must not go down yet: member cp-[12] \([0-9a-f]{16}\)/.test(l));
    assert.ok(held.length > 0, `the user sees the etcd hold:\n${lines.join("\n")}`);
    assert.equal(s.talos.node("cp-2").received.upgrade + s.talos.node("cp-3").received.upgrade, 2, "each control plane asked once");
    // the endpoints rebooted one after another: the talosconfig's other endpoints carried the run
    assert.equal(s.talos.endpoints.length, 3);
  });

  it("per-node images: each node keeps its platform's installer and its schematic (and its extensions)", async () => {
    for (const n of ["cp-1", "cp-2", "cp-3"]) assert.equal(s.talos.node(n).schematic, S_METAL);
    assert.equal(s.talos.node("w-1").schematic, S_AWS);
    assert.deepEqual(await talos.imageFacts(s.talos.node("w-1").address), { platform: "aws", schematic: S_AWS, extensions: ["iscsi-tools"], secureBoot: false });
  });

  it(">= 1.13 path: every Reboot answer is lost as the node goes down; each node still rebooted exactly once", async () => {
    for (const n of s.talos.nodes()) n.faults.replyLost = true;
    const before = Object.fromEntries(s.talos.nodes().map((n) => [n.name, n.received.reboot]));
    try {
      await rollTo(s, kube, talos, "harsh-lost", "v1.13.3", []);
    } finally {
      for (const n of s.talos.nodes()) n.faults.replyLost = undefined;
    }
    for (const n of s.talos.nodes()) assert.equal(n.received.reboot - before[n.name], 1, `${n.name}: Reboot sent once`);
  });

  it("Nodes stay Ready on the old osImage through the reboot and the kubelet reports late: waited out, never taken as done, uncordoned after the report", async () => {
    s.kubelet.staleWhileDown = true;
    s.kubelet.reportDelayMs = 2500;
    const seenStale: string[] = [];
    const onUp = (n: { name: string }) => {
      void kube.readMachine!(n.name).then((m) => {
        if (m?.ready && m.talosVersion === "v1.13.3") seenStale.push(n.name);
      });
    };
    s.talos.on("up", onUp);
    // A worker's cordon is lifted only once its Node reports Ready on the target (issue 23: lifted right after the boot,
    // its patch raced the kubelet's report and was refused and retried on the node's critical path). A control plane's
    // is lifted first, which waits for the API server it may be behind.
    const uncordon = kube.uncordon;
    const liftedBeforeReport: string[] = [];
    kube.uncordon = async (node, owner) => {
      const m = await kube.readMachine!(node);
      if (m?.role === "worker" && !(m?.ready && m.talosVersion === "v1.13.4")) liftedBeforeReport.push(`${node} (${m?.talosVersion}, ready ${m?.ready})`);
      return uncordon.call(kube, node, owner);
    };
    try {
      await rollTo(s, kube, talos, "harsh-kubelet", "v1.13.4", []);
    } finally {
      kube.uncordon = uncordon;
      s.talos.off("up", onUp);
      s.kubelet.staleWhileDown = false;
      s.kubelet.reportDelayMs = 0;
    }
    assert.ok(seenStale.length >= 3, `Talos was back while its Node still read Ready on the old osImage: ${seenStale.join(", ")}`);
    assert.deepEqual(liftedBeforeReport, [], "a worker uncordoned before its Node reported Ready on the target");
  });

  it(">= 1.13 path with 3 control planes: each one hands etcd leadership over before it reboots (as Omni does)", async () => {
    const etcd = s.talos.etcd;
    const leaderWentDown: string[] = [];
    const nodeDown = etcd.nodeDown.bind(etcd);
    etcd.nodeDown = (name: string) => {
      if (etcd.leaderMember?.name === name) leaderWentDown.push(name);
      nodeDown(name);
    };
    const lines: string[] = [];
    try {
      await rollTo(s, kube, talos, "harsh-leader", "v1.13.5", lines);
    } finally {
      etcd.nodeDown = nodeDown;
    }
    assert.deepEqual(leaderWentDown, [], "no control plane went down while it led etcd");
    assert.ok(lines.some((l) => /node cp-\d: draining \(etcd leadership handed to cp-\d\)/.test(l)), lines.join("\n"));
  });

  it("18.1 a revert never takes a control plane down while another is down, and asks etcd before each one", async () => {
    // From v1.13.5 everywhere (the previous test). cp-2 goes down for v1.13.6 and does not come back.
    const boots = recordBoots(s);
    const cluster = "harsh-revert";
    s.talos.node("cp-2").faults.neverComesBack = true;
    try {
      const failed = await rejection(runRollout(kube, talos, runOptions(cluster, { targetVersion: "v1.13.6", lastUpgradeVersion: "v1.13.5", nodeTimeoutMs: 8000 })));
      assert.match(failed.message, /^node cp-2 was not back on v1\.13\.6/);
    } finally {
      s.talos.node("cp-2").faults.neverComesBack = false;
    }
    assert.deepEqual(boots.downs.map((d) => d.node), ["cp-1", "cp-2"]);
    // Setting the version back while cp-2 is down: cp-1 (on v1.13.6) must wait, not go down too (before the fix it
    // rebooted at once, ungated: two of three etcd members down, quorum lost).
    const held = await rejection(runRollout(kube, talos, runOptions(cluster, { targetVersion: "v1.13.5", lastUpgradeVersion: "v1.13.5", holdTimeoutMs: 3000 })));
    assert.match(held.message, /^the cluster was not ready within holdTimeout 3s \(not ready: cp-2\)/);
    assert.deepEqual(boots.downs.map((d) => d.node), ["cp-1", "cp-2"], "cp-1 stayed up while cp-2 was down");
    // cp-2 comes back (on v1.13.6, installed before its reboot): the revert goes, each control plane after etcd's
    // consent — which waits while the member of the control plane that booted last catches up.
    s.talos.etcd.knobs.unhealthyAfterBootMs = 2000;
    const lines: string[] = [];
    let done;
    try {
      assert.ok(s.talos.recover("cp-2"));
      await until("cp-2 to be Ready", async () => (await kube.listMachines()).some((m) => m.name === "cp-2" && m.ready));
      done = await runRollout(kube, talos, runOptions(cluster, {
        targetVersion: "v1.13.5", lastUpgradeVersion: "v1.13.5", onProgress: (l) => lines.push(l),
      }));
    } finally {
      s.talos.etcd.knobs.unhealthyAfterBootMs = 0;
    }
    assert.equal(done.phase, "Done");
    assert.deepEqual(new Set(Object.values(versions(s))), new Set(["v1.13.5"]));
    assert.deepEqual(boots.downs.slice(2).map((d) => d.node), ["cp-1", "cp-2"], "reverted one control plane at a time");
    // cp-2's member catches up for 2 s after its boot (and cp-1's after the revert): the revert held for etcd.
    assert.ok(lines.some((l) => /gate held: "talos-gate:etcd": etcd is not healthy, so control plane cp-[12] must not go down yet/.test(l)), lines.join("\n"));
    assert.deepEqual(cpDownWhileAnotherDown, [], "no control plane went down while another was down");
    await s.settled();
  });

  it("18.2 etcd is asked again for the very node right before its Reboot (the gate's answer is stale by then)", async () => {
    // cp-3's member fails after the gate let cp-2 go (as cp-2 starts) and recovers 3 s later.
    const etcd = s.talos.etcd;
    const { seen: unhealthyAtDown, restore } = watchUnhealthyAtDown(etcd);
    const lines: string[] = [];
    try {
      const done = await runRollout(kube, talos, runOptions("harsh-recheck", {
        targetVersion: "v1.13.6", lastUpgradeVersion: "v1.13.5",
        onProgress: (l) => {
          lines.push(l);
          if (/node cp-2: upgrading v1\.13\.5 → v1\.13\.6 /.test(l)) {
            etcd.setHealthy("cp-3", false);
            setTimeout(() => etcd.setHealthy("cp-3", true), 3000);
          }
        },
      }));
      assert.equal(done.phase, "Done");
    } finally {
      restore();
    }
    assert.deepEqual(unhealthyAtDown, [], "before the fix cp-2 rebooted with cp-3's member unhealthy");
    assert.ok(lines.some((l) => /node cp-2: draining \(waiting for etcd: .*cp-3/.test(l)), lines.join("\n"));
    await s.settled();
  });

  it("18.2 etcd's consent is the last thing before the Reboot: a control plane lost while the Lease is written is still seen", async () => {
    // From v1.13.6 everywhere (the previous test). cp-3's member fails while the Lease is extended for cp-2's reboot
    // (a write that can take seconds on a busy API server) and recovers 3 s later.
    const etcd = s.talos.etcd;
    const { seen: unhealthyAtDown, restore } = watchUnhealthyAtDown(etcd);
    let holding = "";
    let holds = 0;
    const leaseWatched: KubeClient = Object.create(kube);
    leaseWatched.acquireLease = async (o) => {
      const lease = await kube.acquireLease(o);
      const holdThrough = lease.holdThrough?.bind(lease);
      if (holdThrough) {
        lease.holdThrough = async (ms: number) => {
          // Held for each control plane's reboot in turn: cp-1, then cp-2.
          if (++holds === 2) {
            holding = (await kube.listMachines()).filter((m) => m.cordoned).map((m) => m.name).join(",");
            etcd.setHealthy("cp-3", false);
            setTimeout(() => etcd.setHealthy("cp-3", true), 3000);
          }
          return holdThrough(ms);
        };
      }
      return lease;
    };
    try {
      const done = await runRollout(leaseWatched, talos, runOptions("harsh-recheck-last", { targetVersion: "v1.13.7", lastUpgradeVersion: "v1.13.6" }));
      assert.equal(done.phase, "Done");
    } finally {
      restore();
    }
    assert.equal(holding, "cp-2", "cp-3's member failed while the Lease was held for cp-2's reboot");
    assert.deepEqual(unhealthyAtDown, [], "before the fix cp-2 rebooted with cp-3's member unhealthy");
    await s.settled();
  });
});

describe("integration: rollout — a single control plane is the only endpoint (1 control plane, 1 worker)", function () {
  this.timeout(180000);
  let s: SimCluster;
  let kube: KubeClient;
  let talos: TalosApiImpl;
  before(async () => {
    // The kubeconfig's API server is behind cp-1, as on a real one-control-plane cluster: away while it reboots.
    s = await sim({ controlPlanes: 1, workers: 1, version: "v1.13.1", apiBehindControlPlane: true });
    ({ kube, talos } = adapters(s));
  });
  after(async () => {
    await s?.stop();
  });

  it("the endpoint is gone while its node reboots; the run waits for it and finishes, each node once", async () => {
    assert.equal(s.talos.endpoints.length, 1);
    await rollTo(s, kube, talos, "harsh-single", "v1.13.2", []);
    assert.equal(s.talos.node("cp-1").received.reboot, 1);
  });

  it("18.6 the API server is away for the whole reboot of its control plane: the run keeps its Lease, lets no one in, and finishes", async () => {
    assert.equal(s.apiNode, "cp-1");
    const cluster = "harsh-api-away";
    // Down about 5 s, more than twice the Lease's 2 s: before the fix its renewals failed until it expired, and the run
    // stopped before w-1 with "lost the rollout lease" (a second pipeline could take it as soon as the API was back).
    s.talos.node("cp-1").faults.slowBootMs = 4000;
    const secondPipeline: string[] = [];
    let apiWasAway = false;
    const onUp = (n: { name: string }) => {
      if (n.name !== "cp-1") return;
      void (async () => {
        for (let i = 0; i < 100; i++) {
          try {
            const lease = await kube.acquireLease({ cluster, holder: "pipeline-b@ci-2", durationSeconds: 2 });
            secondPipeline.push("pipeline-b took the Lease while cp-1 was coming back");
            await lease.release();
            return;
          } catch (e) {
            if (/another rollout holds the lease \(holder "test:/.test((e as Error).message)) return void secondPipeline.push("refused");
            await delay(100); // the API is not back yet
          }
        }
      })();
    };
    const probeDown = (n: { name: string }) => {
      if (n.name === "cp-1") void kube.listMachines().then(() => undefined, () => (apiWasAway = true));
    };
    s.talos.on("up", onUp);
    s.talos.on("down", probeDown);
    try {
      const done = await runRollout(kube, talos, runOptions(cluster, {
        targetVersion: "v1.13.3", lastUpgradeVersion: "v1.13.2", leaseDurationSeconds: 2, nodeTimeoutMs: 60_000,
      }));
      assert.equal(done.phase, "Done");
    } finally {
      s.talos.off("up", onUp);
      s.talos.off("down", probeDown);
      s.talos.node("cp-1").faults.slowBootMs = undefined;
    }
    assert.ok(apiWasAway, "the kubeconfig's API server was unreachable while cp-1 was down");
    assert.deepEqual(new Set(Object.values(versions(s))), new Set(["v1.13.3"]));
    await until("the second pipeline's attempt", () => secondPipeline.length > 0, 20000);
    assert.deepEqual(secondPipeline, ["refused"], "no second pipeline got the Lease while the run waited for its control plane");
  });
});

describe("integration: rollout — 2 control planes on Talos before v1.12.9 (legacy path)", function () {
  this.timeout(180000);
  let s: SimCluster;
  let kube: KubeClient;
  let talos: TalosApiImpl;
  before(async () => {
    s = await sim({ controlPlanes: 2, workers: 1, version: "v1.12.4" });
    ({ kube, talos } = adapters(s));
  });
  after(async () => {
    await s?.stop();
  });

  it("etcd could never keep quorum (2 members): the run stops at once with the reason, before Talos is asked; no node touched", async () => {
    const boots = recordBoots(s);
    const err = await runRollout(kube, talos, runOptions("harsh-two", { targetVersion: "v1.13.2" })).then(
      () => assert.fail("the run should have failed"), (e: RolloutError) => e);
    assert.ok(err instanceof RolloutError, String(err));
    assert.equal(err.status.phase, "Failed");
    assert.match(err.message, /^taking control plane cp-1 down would lose etcd quorum: 1 of 2 voting members would be left healthy, 2 are needed; a cluster with 2 control planes cannot keep quorum through any reboot/);
    assert.deepEqual(boots.downs, []);
    assert.equal(s.talos.node("cp-1").received.upgrade, 0, "Talos was never asked");
    assert.deepEqual(new Set(Object.values(versions(s))), new Set(["v1.12.4"]));
  });
});
