// Every fault knob of the simulated nodes, seen through the real client: each gives a classified TalosError that
// names the node (or, for slow boots, a slower success).
import * as assert from "node:assert/strict";
import { status } from "@grpc/grpc-js";
import { createTalosApi } from "../../../provider/talos";
import { Harness, image, rejectsWith, spec, startHarness } from "./helpers";

const TARGET = "v1.13.2";

describe("talos: fault knobs of the simulated nodes", function () {
  this.timeout(20000);
  let h: Harness;
  // even addresses: legacy (v1.12.3); odd: >= 1.13 (v1.13.1)
  before(async () => {
    h = await startHarness({
      nodes: Array.from({ length: 18 }, (_, i) => spec(`n-${i}`, 10 + i, i % 2 === 0 ? "v1.12.3" : "v1.13.1")),
    });
  });
  after(async () => h?.stop());
  afterEach(() => {
    for (const n of h.sim.nodes()) n.faults = {};
  });
  const up = (node: string, nodeTimeoutMs = 5000) =>
    h.api.upgradeNode(node, { image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs });

  it("upgrade rejected (legacy): FAILED_PRECONDITION with Talos' text, permanent, node untouched", async () => {
    const n = h.sim.node("10.5.0.10");
    n.faults.rejectUpgrade = true;
    const e = await rejectsWith(up(n.address), "FAILED_PRECONDITION");
    assert.equal(e.retryable, false);
    assert.equal(e.node, n.address);
    assert.match(e.message, /node 10\.5\.0\.10: upgrade: refused: method is not supported in container mode/);
    assert.equal(n.version, "v1.12.3");
  });

  it("upgrade rejected (lifecycle) with a custom status", async () => {
    const n = h.sim.node("10.5.0.11");
    n.faults.rejectUpgrade = { code: status.FAILED_PRECONDITION, message: "machine is not installed" };
    const e = await rejectsWith(up(n.address), "FAILED_PRECONDITION");
    assert.match(e.message, /install: refused: machine is not installed/);
  });

  it("node never comes back: TIMEOUT after nodeTimeout, naming the node and the last error", async () => {
    const n = h.sim.node("10.5.0.12");
    n.faults.neverComesBack = true;
    const e = await rejectsWith(up(n.address, 2000), "TIMEOUT");
    assert.equal(e.retryable, false);
    assert.match(e.message, /node 10\.5\.0\.12 did not come back on v1\.13\.2 within 2s \(last seen: unreachable: .*connection refused/);
    assert.equal(n.up, false);
    assert.ok(h.sim.recover(n.address));
    assert.equal(n.up, true);
    assert.equal(n.version, TARGET);
  });

  it("the abort signal ends the wait at once (ABORTED, retryable: re-run to resume)", async () => {
    const n = h.sim.node("10.5.0.24");
    n.faults.neverComesBack = true;
    const ac = new AbortController();
    h.sim.once("down", () => setTimeout(() => ac.abort(), 100));
    // ABORTED, not TIMEOUT: ended by the signal, not by nodeTimeout.
    const e = await rejectsWith(
      h.api.upgradeNode(n.address, { image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs: 60000, signal: ac.signal }), "ABORTED");
    assert.equal(e.retryable, true);
    assert.match(e.message, /node 10\.5\.0\.24: upgrade interrupted \(cancelled\); re-run to resume/);
    h.sim.recover(n.address);
    assert.equal((await up(n.address)).path, "none", "a re-run finds the node on the target");
  });

  /** Upgrades `addr` with its own client (probe timeout `probeTimeoutMs`); the node stops answering `hangAfterMs` after it went down. */
  async function hangsWhileDown(addr: string, o: { probeTimeoutMs: number; nodeTimeoutMs: number; hangAfterMs: number }) {
    const api = createTalosApi(h.sim.talosconfig(), { pollIntervalMs: 25, probeTimeoutMs: o.probeTimeoutMs });
    const n = h.sim.node(addr);
    n.faults.neverComesBack = true;
    h.sim.once("down", () => setTimeout(() => (n.faults.unresponsive = true), o.hangAfterMs));
    try {
      return await rejectsWith(api.upgradeNode(addr, { image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs: o.nodeTimeoutMs }), "TIMEOUT");
    } finally {
      api.close();
      n.faults = {};
      h.sim.recover(addr);
    }
  }

  it("a last probe cut short by nodeTimeout does not hide what was seen before it (connection refused)", async () => {
    // Refused while down, then a probe that would wait 10 s — longer than what is left of nodeTimeout.
    const e = await hangsWhileDown("10.5.0.26", { probeTimeoutMs: 10000, nodeTimeoutMs: 3000, hangAfterMs: 1000 });
    assert.match(e.message, /node 10\.5\.0\.26 did not come back on v1\.13\.2 within 3s \(last seen: unreachable: .*connection refused/);
    assert.doesNotMatch(e.message, /no answer in time/);
  });

  it("a node that takes connections but never answers: 'no answer in time' once whole probes time out", async () => {
    const e = await hangsWhileDown("10.5.0.27", { probeTimeoutMs: 300, nodeTimeoutMs: 3000, hangAfterMs: 300 });
    assert.match(e.message, /node 10\.5\.0\.27 did not come back on v1\.13\.2 within 3s \(last seen: unreachable: .*no answer in time; the node may be overloaded or rebooting/);
  });

  it("A/B rollback (legacy): the node comes back on the old version → ROLLED_BACK", async () => {
    const n = h.sim.node("10.5.0.14");
    n.faults.rollback = true;
    const before = n.bootId;
    const e = await rejectsWith(up(n.address), "ROLLED_BACK");
    assert.equal(e.message.split(":")[0] + ":" + e.message.split(":")[1],
      "talos: node 10.5.0.14 came back on v1.12.3 instead of v1.13.2");
    assert.match(e.message, /the upgrade was rolled back by Talos \(A\/B\)/);
    assert.notEqual(n.bootId, before);
  });

  it("A/B rollback (lifecycle): same classification", async () => {
    const n = h.sim.node("10.5.0.13");
    n.faults.rollback = true;
    const e = await rejectsWith(up(n.address), "ROLLED_BACK");
    assert.match(e.message, /came back on v1\.13\.1 instead of v1\.13\.2/);
  });

  it("slow boot: extra down time, then success", async () => {
    const n = h.sim.node("10.5.0.15");
    n.faults.slowBootMs = 400;
    let downAt = 0, upAt = 0;
    const onDown = (x: typeof n) => x === n && (downAt = Date.now());
    const onUp = (x: typeof n) => x === n && (upAt = Date.now());
    h.sim.on("down", onDown).on("up", onUp);
    const res = await up(n.address);
    h.sim.off("down", onDown).off("up", onUp);
    assert.equal(res.path, "lifecycle");
    assert.ok(upAt - downAt >= 640, `down ${upAt - downAt} ms`);
  });

  it("slow boot beyond nodeTimeout: TIMEOUT, then the node still comes back", async () => {
    const n = h.sim.node("10.5.0.17");
    n.faults.slowBootMs = 1500;
    await rejectsWith(up(n.address, 600), "TIMEOUT");
    await new Promise<void>((r) => h.sim.once("up", () => r()));
    assert.equal(n.version, TARGET);
  });

  it("locked (lifecycle): 'another installation/upgrade is already in progress' is retried until nodeTimeout, then reported; the node is untouched", async () => {
    const n = h.sim.node("10.5.0.19");
    n.faults.locked = true;
    const before = n.bootId;
    const details: string[] = [];
    const e = await rejectsWith(h.api.upgradeNode(n.address, {
      image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs: 2000, onStep: (_s, d) => d && details.push(d),
    }), "TIMEOUT");
    assert.match(e.message, /node 10\.5\.0\.19: not upgraded to v1\.13\.2: Talos still refused after nodeTimeout 2s \(last refusal: another installation\/upgrade is already in progress\); the node was not touched/);
    assert.ok(n.received.install >= 2, `retried (${n.received.install} install calls)`);
    assert.ok(details.some((d) => /^Talos refused for now, retrying in \S+: another installation\/upgrade is already in progress$/.test(d)), details.join("\n"));
    assert.equal(n.version, "v1.13.1");
    assert.equal(n.bootId, before);
    assert.equal(n.received.reboot, 0);
  });

  it("locked (lifecycle) until the other installation ends: retried, then upgraded with one reboot", async () => {
    const n = h.sim.node("10.5.0.25");
    n.faults.locked = true;
    setTimeout(() => (n.faults.locked = false), 700);
    const res = await up(n.address, 8000);
    assert.equal(res.path, "lifecycle");
    assert.equal(n.version, TARGET);
    assert.ok(n.received.install >= 2);
    assert.equal(n.received.reboot, 1);
  });

  it("locked (legacy): the RPC succeeds but the sequence does not start → LOCKED from the event stream", async () => {
    const n = h.sim.node("10.5.0.16");
    n.faults.locked = true;
    const e = await rejectsWith(up(n.address), "LOCKED");
    assert.match(e.message, /node 10\.5\.0\.16: the upgrade did not start \(sequence not started: locked\)/);
    assert.equal(n.up, true);
  });

  it("installer non-zero exit (lifecycle): INSTALLER_EXIT, the node is not rebooted", async () => {
    const n = h.sim.node("10.5.0.21");
    n.faults.installerExitCode = 3;
    const before = n.bootId;
    let drained = false;
    const e = await rejectsWith(
      h.api.upgradeNode(n.address, { image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs: 5000, beforeReboot: async () => void (drained = true) }),
      "INSTALLER_EXIT");
    assert.match(e.message, /installer exited with code 3 .*still runs v1\.13\.1/);
    assert.equal(drained, false);
    assert.equal(n.bootId, before);
    assert.equal(n.stagedImage, undefined);
  });

  it("installer non-zero exit (legacy): the upgrade sequence fails → INSTALLER_EXIT", async () => {
    const n = h.sim.node("10.5.0.18");
    n.faults.installerExitCode = 1;
    const e = await rejectsWith(up(n.address), "INSTALLER_EXIT");
    assert.match(e.message, /upgrade sequence failed on the node: upgrade: sequence failed: .*exit status 1/);
    await new Promise<void>((r) => (n.up ? r() : h.sim.once("up", () => r())));
    assert.equal(n.version, "v1.12.3");
  });

  it("pull failure (lifecycle): NOT_FOUND 'error pulling image'", async () => {
    const n = h.sim.node("10.5.0.23");
    n.faults.pullFailure = "failed to resolve reference: not found";
    const e = await rejectsWith(up(n.address), "NOT_FOUND");
    assert.equal(e.retryable, false);
    assert.match(e.message, /node 10\.5\.0\.23: pull ghcr\.io\/siderolabs\/installer:v1\.13\.2: error pulling image: failed to resolve reference: not found; check the installer image/);
  });

  it("pull failure (legacy): 'error validating installer image' is classified NOT_FOUND", async () => {
    const n = h.sim.node("10.5.0.20");
    n.faults.pullFailure = true;
    const e = await rejectsWith(up(n.address), "NOT_FOUND");
    assert.match(e.message, /error validating installer image "ghcr\.io\/siderolabs\/installer:v1\.13\.2"/);
  });

  it("certificate mismatch behind the endpoint: CERTIFICATE, permanent", async () => {
    const n = h.sim.node("10.5.0.22");
    n.faults.certMismatch = true;
    const e = await rejectsWith(h.api.version(n.address), "CERTIFICATE");
    assert.equal(e.retryable, false);
    assert.match(e.message, /node 10\.5\.0\.22: Version: TLS certificate verification failed .*x509: certificate signed by unknown authority/);
    await rejectsWith(up(n.address), "CERTIFICATE");
  });
});
