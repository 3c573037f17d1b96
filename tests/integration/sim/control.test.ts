// The sim daemon's control endpoint on its own (no control plane): only a caller with the token may change the sim,
// requests are checked, and faults land on the sim's knobs.
import * as assert from "node:assert/strict";
import { control, startControlServer, type ControlServer } from "../../../sim/control";
import { APPLY_MODE, patchKubernetesImages } from "../../../provider/talos";
import { TalosNodeSim } from "../../../sim/talos";

describe("integration: sim — the control endpoint behind `talos-gate sim fault`", function () {
  this.timeout(20000);
  let sim: TalosNodeSim;
  let server: ControlServer;
  before(async () => {
    sim = await TalosNodeSim.start({ nodes: 2, controlPlanes: 1, timing: { pullMs: 1, installMs: 1, downMs: 50 } });
    server = await startControlServer(sim);
  });
  after(async () => {
    await server?.close();
    await sim?.stop();
  });

  it("listens on loopback only, and refuses a caller without the token (nothing changes)", async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${server.url}/fault`, { method: "POST", body: JSON.stringify({ node: "w-1", fault: "rollback" }) });
    assert.equal(res.status, 401);
    await assert.rejects(control.setFault({ url: server.url, token: "x".repeat(48) }, "w-1", "rollback"), /needs the token from its state\.json/);
    assert.deepEqual(sim.node("w-1").faults, {});
  });

  it("sets each fault on the sim's knobs, lists them, and clears them", async () => {
    assert.deepEqual(await control.setFault(server, "w-1", "rollback"), { node: "w-1", faults: ["rollback"] });
    await control.setFault(server, "10.5.0.3", "slow-boot=2s");
    await control.setFault(server, "w-1", "never-comes-back");
    await control.setFault(server, "cp-1", "etcd-unhealthy");
    assert.deepEqual(sim.node("w-1").faults, { rollback: true, slowBootMs: 2000, neverComesBack: true });
    assert.equal(sim.etcd.member("cp-1")!.healthy, false);
    assert.deepEqual(await control.faults(server), { "cp-1": ["etcd-unhealthy"], "w-1": ["never-comes-back", "rollback", "slow-boot=2s"] });
    await control.setFault(server, "w-1", "clear");
    await control.setFault(server, "cp-1", "clear");
    assert.deepEqual(sim.node("w-1").faults, {});
    assert.equal(sim.etcd.member("cp-1")!.healthy, true);
  });

  it("an unhealthy etcd member stays unhealthy through its node's reboot until cleared", async () => {
    await control.setFault(server, "cp-1", "etcd-unhealthy");
    sim.node("cp-1").reboot();
    await new Promise<void>((r) => sim.once("up", () => r()));
    assert.equal(sim.etcd.member("cp-1")!.healthy, false);
    await control.setFault(server, "cp-1", "clear");
    assert.equal(sim.etcd.member("cp-1")!.healthy, true);
  });

  it("never-comes-back set while the node is down keeps it down from then on; recover boots it", async () => {
    const ups: string[] = [];
    let cpBack!: () => void;
    const cpUp = new Promise<void>((r) => (cpBack = r));
    const onUp = (n: { name: string }) => {
      ups.push(n.name);
      if (n.name === "cp-1") cpBack();
    };
    sim.on("up", onUp);
    // Both nodes stay down 2 s longer than the file's 50 ms: the fault must be set while w-1 is down, and under load
    // the control call alone took longer than 50 ms (w-1 was back first and the test failed).
    for (const n of ["w-1", "cp-1"]) sim.node(n).faults.slowBootMs = 2000;
    try {
      const wentDown = new Promise<void>((r) => sim.once("down", () => r()));
      sim.node("w-1").reboot();
      await wentDown;
      await control.setFault(server, "w-1", "never-comes-back");
      // cp-1 goes down after w-1, with the same down time: once it is back, w-1 would have been back too.
      sim.node("cp-1").reboot();
      await cpUp;
      assert.deepEqual(ups, ["cp-1"]);
      assert.equal(sim.node("w-1").up, false);
      delete sim.node("w-1").faults.slowBootMs;
      assert.deepEqual(await control.recover(server, "w-1"), { node: "w-1", faults: [] });
      assert.equal(sim.node("w-1").up, true);
    } finally {
      sim.off("up", onUp);
      for (const n of ["w-1", "cp-1"]) delete sim.node(n).faults.slowBootMs;
    }
  });

  it("issue 24: static-pod-never-ready and kubelet-never-returns hold what a Kubernetes upgrade restarts; recover ends them", async () => {
    const cp = sim.node("cp-1");
    await control.setFault(server, "cp-1", "static-pod-never-ready");
    await control.setFault(server, "cp-1", "kubelet-never-returns");
    assert.deepEqual((await control.faults(server))["cp-1"], ["static-pod-never-ready", "kubelet-never-returns"]);
    const images = { apiServer: "registry.k8s.io/kube-apiserver:v1.35.0", kubelet: "ghcr.io/siderolabs/kubelet:v1.35.0" };
    cp.kubernetes.apply({ data: Buffer.from(patchKubernetesImages(cp.kubernetes.config, images)), mode: APPLY_MODE.NO_REBOOT });
    assert.equal(cp.kubernetes.staticPods()[0].ready, false);
    assert.equal(cp.kubernetes.kubelet.running, false);
    assert.deepEqual(await control.recover(server, "cp-1"), { node: "cp-1", faults: [] });
    assert.deepEqual(cp.kubernetes.staticPods().map((p) => [p.image, p.ready]), [
      [images.apiServer, true], ["registry.k8s.io/kube-controller-manager:v1.34.1", true], ["registry.k8s.io/kube-scheduler:v1.34.1", true],
    ]);
    assert.deepEqual(cp.kubernetes.kubelet, { image: images.kubelet, version: "v1.35.0", running: true });
    await assert.rejects(control.recover(server, "cp-1"), /node cp-1 is not down, so there is nothing to recover \(nor is any of its static pods or its kubelet held\)/);
  });

  it("reports each node's own time per upgrade, first upgrade call → booted again (what the rollout bench subtracts)", async () => {
    assert.deepEqual(await control.nodeTimes(server), [], "reboots without an upgrade call are not upgrades");
    const back = new Promise<void>((r) => sim.once("up", () => r()));
    const called = Date.now();
    await sim.node("w-1").legacyUpgrade({ image: "ghcr.io/siderolabs/installer:v1.13.1", stage: false });
    await back;
    const times = await control.nodeTimes(server);
    assert.equal(times.length, 1);
    assert.ok(times[0] >= 50, `${times[0]} ms covers the node's 50 ms down time`);
    // With its node and start, so the bench can place each span in the rollout's waves.
    const [span, ...more] = await control.nodeSpans(server);
    assert.deepEqual([span.node, span.ms, more.length], ["w-1", times[0], 0]);
    assert.ok(span.at >= called && span.at + span.ms <= Date.now(), `the span starts at the call (${span.at - called} ms after it) and has ended`);
    // The legacy Upgrade reboots by itself: the whole span is the node's own.
    assert.equal(span.ownMs, span.ms);
    assert.equal(span.reportedMs, undefined, "no Kubernetes side has reported this boot");
  });

  it("leaves the caller's time between install and Reboot (its drain) out of the node's own time", async () => {
    const node = sim.node("w-1");
    const image = "ghcr.io/siderolabs/installer:v1.13.2";
    await node.pull(image, () => undefined);
    await node.lifecycleUpgrade(image, () => undefined);
    const callerMs = 300; // the caller drains the node before it asks for the reboot
    await new Promise((r) => setTimeout(r, callerMs));
    // The Kubernetes side reports the boot 40 ms after it (the kubelet's Ready report in the API server).
    const back = new Promise<void>((r) => sim.once("up", (_n, info) => setTimeout(() => {
      info.reported();
      info.reported(); // only the first report counts
      r();
    }, 40)));
    node.reboot();
    await back;
    const spans = await control.nodeSpans(server);
    assert.equal(spans.length, 2);
    const { reportedMs } = spans[1];
    assert.ok(reportedMs !== undefined && reportedMs >= 40 && reportedMs < 2000, `booted → reported ${reportedMs} ms (reported 40 ms after the boot)`);
    const { ms, ownMs } = spans[1];
    assert.ok(ms >= callerMs + 50, `the span (${ms} ms) covers the caller's ${callerMs} ms and the 50 ms down time`);
    assert.ok(ownMs >= 50 && ownMs <= ms - callerMs, `the node's own time (${ownMs} ms) is its calls and reboot, not the caller's ${callerMs} ms`);
  });

  it("refuses bad requests with what it expected", async () => {
    const res = await fetch(`${server.url}/fault`, { method: "POST", headers: { authorization: `Bearer ${server.token}` }, body: JSON.stringify({ node: "" }) });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: string }).error, /bad request to the sim's control endpoint: node: .*; fault: /);
    await assert.rejects(control.recover(server, "w-1"), /node w-1 is not down, so there is nothing to recover/);
  });
});
