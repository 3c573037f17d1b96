// Actions that reboot a node (Reboot, legacy Upgrade) against a harsher Talos: the answer can be lost when the node
// goes down fast (the action may have started: the boot id decides, never a second call), Talos' own refusals on
// control planes (upgrade mutex, etcd not healthy: retried within nodeTimeout; etcd quorum: stops at once), and other
// clients' sequences on the same node, told apart by the actor id our call returned.
import * as assert from "node:assert/strict";
import { createTalosApi } from "../../../provider/talos";
import { packEvent } from "../../../provider/talos/proto";
import { TalosNodeSim } from "../../../sim/talos";
import { controlPlanes, FAST, Harness, image, rejectsWith, spec, startHarness } from "./helpers";

const TARGET = "v1.13.2";
const up = (h: Harness, node: string, nodeTimeoutMs = 8000, onStep?: (s: string, d?: string) => void) =>
  h.api.upgradeNode(node, { image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs, ...(onStep ? { onStep } : {}) });

describe("talos: a Reboot/Upgrade whose answer is lost", function () {
  this.timeout(30000);
  let h: Harness;
  before(async () => {
    h = await startHarness({
      nodes: [
        ...controlPlanes(3, "v1.13.1"),
        spec("w-1", 5, "v1.13.1"), spec("w-2", 6, "v1.12.3"), spec("w-3", 7, "v1.13.1"),
      ],
    });
  });
  after(async () => h?.stop());

  it("through the node's own endpoint (the connection drops): the node is upgraded, Reboot was sent once", async () => {
    const n = h.sim.node("cp-1");
    n.faults.replyLost = true;
    const res = await up(h, n.address);
    assert.equal(res.path, "lifecycle");
    assert.equal(n.version, TARGET);
    assert.equal(n.received.reboot, 1);
    assert.notEqual(res.newBootId, res.oldBootId);
  });

  it("through another endpoint (the proxy answers EOF): upgraded, Reboot sent once", async () => {
    const n = h.sim.node("w-1");
    n.faults.replyLost = true;
    const res = await up(h, n.address);
    assert.equal(n.version, TARGET);
    assert.equal(n.received.reboot, 1);
    assert.equal(res.path, "lifecycle");
  });

  it("legacy Upgrade whose answer is lost: the upgrade runs, Upgrade sent once", async () => {
    const n = h.sim.node("w-2");
    n.faults.replyLost = true;
    const res = await up(h, n.address);
    assert.equal(res.path, "legacy");
    assert.equal(n.version, TARGET);
    assert.equal(n.received.upgrade, 1);
  });

  it("an answer lost before the node acted: not sent again; nodeTimeout ends it, saying so", async () => {
    const n = h.sim.node("w-3");
    n.faults.replyLost = "unprocessed";
    const before = n.bootId;
    // 8 s, not less: the message needs a look at the node that answered. Looks after it that time out under load keep it
    // (talos/look.ts afterFailedLook: a slow answer is no proof the node went down).
    const e = await rejectsWith(up(h, n.address, 8000), "TIMEOUT");
    assert.match(e.message, /node 10\.5\.0\.7: the answer to Reboot was lost \(error reading from server: EOF\) and the node did not reboot within 8s \(last seen: up with the same boot id/);
    assert.match(e.message, /Reboot is not sent twice without proof that the first did not take/);
    assert.equal(n.received.reboot, 1);
    assert.equal(n.bootId, before);
  });
});

describe("talos: other clients' sequences on the node, told apart by actor id", function () {
  this.timeout(30000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ nodes: [spec("cp-1", 2, "v1.12.3", "controlplane"), spec("w-1", 3, "v1.12.3"), spec("w-2", 4, "v1.13.1")] });
  });
  after(async () => h?.stop());

  it("someone else's Reboot is locked out while our legacy upgrade runs: our upgrade still succeeds", async () => {
    const n = h.sim.node("w-1");
    const them = createTalosApi(h.sim.talosconfig());
    // another administrator reboots the node while its upgrade sequence runs (here: while it drains): Talos answers,
    // then publishes "sequence not started: locked" for that reboot, without an actor id
    h.sim.hooks.beforeLegacyDown = async () => {
      await them.client.reboot(n.address);
      await new Promise((r) => setTimeout(r, 100));
    };
    let res;
    try {
      res = await up(h, n.address);
    } finally {
      h.sim.hooks.beforeLegacyDown = undefined;
      them.close();
    }
    assert.equal(n.received.reboot, 1, "the other client's Reboot reached the node");
    assert.equal(res.path, "legacy");
    assert.equal(n.version, TARGET);
  });

  it("a sequence failure of another actor on the node is not ours", async () => {
    const n = h.sim.node("w-2");
    h.sim.hooks.beforeLegacyDown = undefined;
    const res = await h.api.upgradeNode(n.address, {
      image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs: 8000,
      beforeReboot: async () => {
        n.publish(packEvent("SequenceEvent", {
          sequence: "reboot", action: 0, error: { code: 0, message: "sequence failed: error running phase 3 in reboot sequence: task 1/1: failed, EOF" },
        }), "2b1d5d8e-0000-4000-8000-000000000001");
      },
    });
    assert.equal(res.path, "lifecycle");
    assert.equal(n.version, TARGET);
  });

  it("our own locked sequence (no actor id, our sequence, before anything of ours) is still ours: LOCKED", async () => {
    const n = h.sim.node("cp-1");
    n.faults.locked = true;
    try {
      const e = await rejectsWith(up(h, n.address), "LOCKED");
      assert.match(e.message, /the upgrade did not start \(sequence not started: locked\)/);
    } finally {
      n.faults.locked = false;
    }
  });
});

describe("talos: Talos' own refusals on control planes (legacy Upgrade, Talos before v1.12.9, v1.13.0–v1.13.3)", function () {
  this.timeout(40000);
  let h: Harness;
  before(async () => {
    // Etcd refusals are retried from 250 ms here, as on a Talos that does not leak a client per refusal (the default
    // 5 s first pause of a leaking one is the subject of its own test).
    h = await startHarness({
      nodes: [
        ...controlPlanes(3, "v1.12.3"),
      ],
      etcd: { unhealthyAfterBootMs: 0 },
    }, { leakyRefusalRetryFirstMs: 250 });
  });
  after(async () => h?.stop());

  it("the upgrade mutex is held by another session for a while: retried, then upgraded (one accepted Upgrade)", async () => {
    const release = h.sim.etcd.holdUpgradeMutex("someone else's talosctl upgrade");
    setTimeout(release, 800);
    const details: string[] = [];
    const res = await up(h, "10.5.0.2", 10000, (_s, d) => d && details.push(d));
    assert.equal(res.path, "legacy");
    assert.equal(h.sim.node("cp-1").version, TARGET);
    assert.ok(h.sim.node("cp-1").received.upgrade >= 2);
    assert.ok(details.some((d) => d.includes("failed to acquire upgrade mutex: error trying to lock etcd upgrade mutex: mutex: Locked by another session")));
  });

  it("a member not healthy yet: 'etcd member … is not healthy' is retried until it is, then upgraded", async () => {
    h.sim.etcd.setHealthy("cp-3", false);
    setTimeout(() => h.sim.etcd.setHealthy("cp-3", true), 800);
    const details: string[] = [];
    const res = await up(h, "10.5.0.3", 10000, (_s, d) => d && details.push(d));
    assert.equal(res.path, "legacy");
    assert.equal(h.sim.node("cp-2").version, TARGET);
    const id = h.sim.etcd.member("cp-3")!.id.toString(16).padStart(16, "0");
    assert.ok(details.some((d) => d.includes(`error validating etcd for upgrade: etcd member ${id} is not healthy; all members must be healthy to perform an upgrade`)), details.join("\n"));
  });

  it("the mutex never comes free: the refusal is reported after nodeTimeout and the node is untouched", async () => {
    const release = h.sim.etcd.holdUpgradeMutex("stuck session");
    try {
      const n = h.sim.node("cp-3");
      const before = n.bootId;
      const e = await rejectsWith(up(h, n.address, 1500), "TIMEOUT");
      assert.match(e.message, /node 10\.5\.0\.4: not upgraded to v1\.13\.2: Talos still refused after nodeTimeout 1500ms \(last refusal: failed to acquire upgrade mutex/);
      assert.equal(n.bootId, before);
      assert.equal(n.version, "v1.12.3");
    } finally {
      release();
    }
  });
});

describe("talos: etcd refusals that waiting cannot fix, and the versions that skip Talos' checks", function () {
  this.timeout(20000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ nodes: [spec("cp-1", 2, "v1.12.3", "controlplane"), spec("cp-2", 3, "v1.12.3", "controlplane"), spec("cp-3", 4, "v1.13.5", "controlplane")] });
  });
  after(async () => h?.stop());

  it("2 control planes: ETCD_QUORUM, permanent, with Talos' words; not retried", async () => {
    const two = await TalosNodeSim.start({ nodes: [...controlPlanes(2, "v1.12.3")], timing: FAST });
    const api = createTalosApi(two.talosconfig(), { pollIntervalMs: 25 });
    try {
      const e = await rejectsWith(api.upgradeNode("10.5.0.2", { image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs: 10000 }), "ETCD_QUORUM");
      assert.equal(e.retryable, false);
      assert.match(e.message, /node 10\.5\.0\.2: upgrade: Talos refused: error validating etcd for upgrade: etcd member count\(2\) is insufficient to maintain quorum if upgrade commences; etcd would lose quorum/);
      assert.match(e.message, /etcdQuorumLoss: "allow" cannot help here: this Talos checks etcd itself before a legacy upgrade/, "issue 25: the opt-in is named where it cannot help");
      assert.equal(two.node("cp-1").received.upgrade, 1, "asked once: not retried until nodeTimeout");
      assert.equal(two.node("cp-1").version, "v1.12.3");
    } finally {
      api.close();
      await two.stop();
    }
  });

  it("from v1.13.4 on, preserve skips Talos' etcd checks: a legacy downgrade of a v1.13.5 control plane is not refused", async () => {
    const release = h.sim.etcd.holdUpgradeMutex("held");
    try {
      const res = await h.api.upgradeNode("10.5.0.4", { image: image("v1.12.9"), targetVersion: "v1.12.9", nodeTimeoutMs: 8000 });
      assert.equal(res.path, "legacy");
      assert.equal(h.sim.node("cp-3").version, "v1.12.9");
      assert.equal(h.sim.node("cp-3").received.upgrade, 1);
    } finally {
      release();
    }
  });

  it("issue 18 point 9: v1.12.9 has the backport too, so preserve skips Talos' etcd checks: upgraded while the mutex is held", async () => {
    assert.equal(h.sim.node("cp-3").version, "v1.12.9", "left on v1.12.9 by the test before");
    const release = h.sim.etcd.holdUpgradeMutex("held");
    try {
      const res = await h.api.upgradeNode("10.5.0.4", { image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 4000 });
      assert.equal(res.path, "legacy");
      assert.equal(h.sim.node("cp-3").version, "v1.13.2");
      assert.equal(h.sim.node("cp-3").received.upgrade, 2, "one Upgrade for each of the two upgrades: none refused");
    } finally {
      release();
    }
  });
});

describe("talos: issue 18 point 7 — Talos errors read right", function () {
  this.timeout(40000);
  let h: Harness;
  before(async () => {
    h = await startHarness({
      nodes: [
        ...controlPlanes(3, "v1.12.3"),
        spec("w-1", 5, "v1.13.1"), spec("w-2", 6, "v1.12.3"), spec("w-3", 7, "v1.13.1"),
      ],
      etcd: { unhealthyAfterBootMs: 0 },
    }, { leakyRefusalRetryFirstMs: 100 });
  });
  after(async () => h?.stop());

  it("a node mid-reboot whose TLS handshake breaks off ('authentication handshake failed: EOF') is waited for, not a certificate failure", async () => {
    const n = h.sim.node("w-1");
    n.faults.handshakeWhileDown = true;
    try {
      const res = await up(h, n.address, 8000);
      assert.equal(res.path, "lifecycle");
      assert.equal(n.version, TARGET);
    } finally {
      n.faults.handshakeWhileDown = false;
    }
  });

  it("a Reboot refused with 'connection refused' never reached the node: sent again, not waited out as a lost answer", async () => {
    const n = h.sim.node("w-3");
    n.faults.refuseActions = 1;
    const res = await up(h, n.address, 4000);
    assert.equal(res.path, "lifecycle");
    assert.equal(n.version, TARGET);
    assert.equal(n.received.reboot, 1, "the refused Reboot never reached the node; the second did");
    assert.equal(n.faults.refuseActions, 0);
  });

  it("a resumed run locked out by a killed run's legacy upgrade still draining: waits for that upgrade's reboot into the target", async () => {
    const n = h.sim.node("w-2");
    let releaseDrain!: () => void;
    const drained = new Promise<void>((r) => (releaseDrain = r));
    h.sim.hooks.beforeLegacyDown = () => drained;
    try {
      // The killed run's Upgrade: accepted, its sequence drains (held here).
      await h.api.client.upgrade(n.address, { image: image(TARGET), preserve: true, stage: false, force: false });
      const steps: string[] = [];
      const resumed = up(h, n.address, 8000, (s, d) => {
        steps.push(`${s}: ${d ?? ""}`);
        if (d?.includes("another run's upgrade is still running")) releaseDrain();
      });
      const res = await resumed;
      assert.equal(res.path, "legacy");
      assert.equal(n.version, TARGET);
      assert.ok(steps.some((s) => s.includes("another run's upgrade is still running on the node")), steps.join("\n"));
      assert.equal(n.received.upgrade, 2, "the killed run's Upgrade and the resumed run's (locked out)");
    } finally {
      releaseDrain();
      h.sim.hooks.beforeLegacyDown = undefined;
    }
  });

  it("'etcdserver: request timed out' from Talos' etcd check is retried, then the control plane is upgraded", async () => {
    h.sim.etcd.knobs.requestTimeouts = 1;
    const details: string[] = [];
    const res = await up(h, "10.5.0.2", 8000, (_s, d) => d && details.push(d));
    assert.equal(res.path, "legacy");
    assert.equal(h.sim.node("cp-1").version, TARGET);
    assert.equal(h.sim.etcd.knobs.requestTimeouts, 0);
    assert.ok(details.some((d) => d.includes("error validating etcd for upgrade: etcdserver: request timed out")), details.join("\n"));
  });

  it("refused legacy Upgrades of a Talos that leaks an etcd client per refusal are retried slowly (first pause 5 s), never at the deadline", async () => {
    const api = createTalosApi(h.sim.talosconfig(), { pollIntervalMs: 25 }); // the default pauses
    const release = h.sim.etcd.holdUpgradeMutex("stuck session");
    const n = h.sim.node("cp-2");
    try {
      const e = await rejectsWith(api.upgradeNode(n.address, { image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs: 3000 }), "TIMEOUT");
      assert.match(e.message, /not upgraded to v1\.13\.2: Talos still refused after nodeTimeout 3s \(last refusal: failed to acquire upgrade mutex/);
      assert.equal(n.received.upgrade, 1, "one refused Upgrade: the next would have come after the deadline");
      assert.equal(n.version, "v1.12.3");
    } finally {
      release();
      api.close();
    }
  });
});
