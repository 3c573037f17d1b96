// Several talosconfig endpoints, as in a real talosconfig: one apid per control plane, each on its own address. When
// the endpoint node reboots its listener is gone (calls fail at connection level) and the client fails over to
// another endpoint and stays there; a single control plane loses its only endpoint for the reboot and the client
// waits it out within nodeTimeout; an endpoint that takes no packets, or presents a certificate we cannot verify, is
// skipped for the next one.
import * as assert from "node:assert/strict";
import * as net from "node:net";
import { createTalosApi, parseTalosconfig, TalosApiImpl } from "../../../provider/talos";
import { TalosError } from "../../../provider/talos/errors";
import { TalosNodeSim } from "../../../sim/talos";
import { controlPlanes, FAST, image, rejectsWith, spec } from "./helpers";

const TARGET = "v1.13.2";

/** The talosconfig with its endpoints replaced. */
function withEndpoints(text: string, endpoints: string[]): string {
  return text.replace(/endpoints:\n(?:\s+- .*\n)+/, `endpoints:\n${endpoints.map((e) => `      - ${e}\n`).join("")}`);
}

describe("talos: several endpoints (one apid per control plane) and failover", function () {
  this.timeout(30000);
  let sim: TalosNodeSim;
  const apis: TalosApiImpl[] = [];
  const api = (cfg = sim.talosconfig(), o: Parameters<typeof createTalosApi>[1] = {}) => {
    const a = createTalosApi(cfg, { pollIntervalMs: 25, probeTimeoutMs: 2000, ...o });
    apis.push(a);
    return a;
  };
  before(async () => {
    sim = await TalosNodeSim.start({
      nodes: [
        ...controlPlanes(3, "v1.13.1"),
        spec("w-1", 5, "v1.13.1"), spec("w-2", 6, "v1.13.1"),
      ],
      timing: { ...FAST, downMs: 600 },
    });
  });
  after(async () => {
    for (const a of apis) a.close();
    await sim?.stop();
  });

  it("the talosconfig lists each control plane's own endpoint; each proxies to every node by the node header", async () => {
    const cfg = parseTalosconfig(sim.talosconfig());
    assert.equal(cfg.endpoints.length, 3);
    assert.deepEqual(cfg.endpoints.map((e) => e.target), sim.endpoints);
    assert.equal(new Set(cfg.endpoints.map((e) => e.host)).size, 3, "distinct addresses");
    assert.deepEqual(sim.endpoints, ["cp-1", "cp-2", "cp-3"].map((n) => sim.endpointOf(n)!.endpoint));
    for (const ep of sim.endpoints) {
      const one = api(withEndpoints(sim.talosconfig(), [ep]));
      assert.deepEqual(await Promise.all(["10.5.0.2", "10.5.0.4", "10.5.0.6"].map((n) => one.version(n))), ["v1.13.1", "v1.13.1", "v1.13.1"]);
    }
    assert.equal(sim.endpointOf("w-1"), undefined, "workers have no listener");
  });

  it("the endpoint node reboots: its own endpoint fails at connection level, the client fails over and stays on the next", async () => {
    const a = api();
    const direct = api(withEndpoints(sim.talosconfig(), [sim.endpointOf("cp-1")!.endpoint]));
    assert.equal(await a.version("10.5.0.5"), "v1.13.1");
    assert.equal(a.client.currentEndpoint, sim.endpointOf("cp-1")!.endpoint);
    const down = new Promise<void>((r) => sim.once("down", () => r()));
    const up = new Promise<void>((r) => sim.once("up", () => r()));
    await a.client.reboot("10.5.0.2");
    await down;
    while (sim.endpointOf("cp-1")!.listening) await new Promise((r) => setTimeout(r, 5)); // apid stops shortly after
    // through the node's own endpoint: nothing answers
    const e = await rejectsWith(direct.version("10.5.0.5"), "UNAVAILABLE");
    assert.match(e.message, /ECONNREFUSED/);
    // through the talosconfig's endpoints: every call answers while cp-1 is down
    const during: string[] = [];
    while (!sim.node("cp-1").up) {
      during.push(await a.version("10.5.0.5"));
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(during.length >= 5, `${during.length} calls while down`);
    assert.ok(during.every((v) => v === "v1.13.1"));
    assert.equal(a.client.currentEndpoint, sim.endpointOf("cp-2")!.endpoint);
    await up;
    // a call for the rebooting node itself is answered by the new endpoint's proxy until it is back
    assert.equal(await a.version("10.5.0.2"), "v1.13.1");
    assert.equal(a.client.currentEndpoint, sim.endpointOf("cp-2")!.endpoint, "sticky: stays on the endpoint that answered");
  });

  it("a call sent just as the endpoint's apid goes away (reset under it, or refused) is answered by the next endpoint", async () => {
    for (let round = 0; round < 6; round++) {
      const victim = sim.node(`cp-${(round % 3) + 1}`);
      const others = sim.endpoints.filter((e) => e !== sim.endpointOf(victim.name)!.endpoint);
      const a = api(withEndpoints(sim.talosconfig(), [sim.endpointOf(victim.name)!.endpoint, ...others]));
      assert.equal(await a.version("10.5.0.6"), "v1.13.1");
      victim.reboot();
      while (sim.endpointOf(victim.name)!.listening) await new Promise((r) => setTimeout(r, 2));
      assert.equal(await a.version("10.5.0.6"), "v1.13.1", `round ${round}`);
      while (!victim.up || !sim.endpointOf(victim.name)!.listening) await new Promise((r) => setTimeout(r, 10));
    }
  });

  it("upgrading the endpoint node itself (>= 1.13 path): one reboot, back on the target through another endpoint", async () => {
    const a = api();
    const n = sim.node("cp-3");
    // make cp-3 the endpoint in use
    const only3 = withEndpoints(sim.talosconfig(), [sim.endpointOf("cp-3")!.endpoint, sim.endpointOf("cp-1")!.endpoint, sim.endpointOf("cp-2")!.endpoint]);
    const b = api(only3);
    assert.equal(await b.version("10.5.0.4"), "v1.13.1");
    const res = await b.upgradeNode("10.5.0.4", { image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs: 15000 });
    assert.equal(res.path, "lifecycle");
    assert.equal(n.version, TARGET);
    assert.equal(n.received.reboot, 1);
    assert.notEqual(b.client.currentEndpoint, sim.endpointOf("cp-3")!.endpoint);
    assert.equal(await a.version("10.5.0.4"), TARGET);
  });

  it("an endpoint that takes connections but never completes TLS is skipped after the call's deadline", async () => {
    const sockets: net.Socket[] = [];
    const hole = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => hole.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (hole.address() as net.AddressInfo).port;
      const a = api(withEndpoints(sim.talosconfig(), [`127.0.0.1:${port}`, ...sim.endpoints]), { probeTimeoutMs: 800 });
      const t0 = Date.now();
      assert.equal(await a.client.version("10.5.0.5", { timeoutMs: 800 }).then((v) => v.tag), "v1.13.1");
      assert.ok(Date.now() - t0 < 10000);
      assert.equal(a.client.currentEndpoint, sim.endpoints[0]);
      assert.equal(await a.version("10.5.0.6"), "v1.13.1");
    } finally {
      sockets.forEach((s) => s.destroy());
      hole.close();
    }
  });

  it("a failed call neither captures nor formats its caller's stack (a rebooting node's polls fail by the thousand)", async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const a = api(withEndpoints(sim.talosconfig(), [`127.0.0.1:${port}`]), { probeTimeoutMs: 800 });
    // Every stack formatted meanwhile, frame by frame (under Pulumi, source-map-support formats each one).
    const files: string[] = [];
    const previous = Error.prepareStackTrace;
    Error.prepareStackTrace = (err, frames) => {
      for (const f of frames) files.push(String(f.getFileName()));
      return previous ? previous(err, frames) : [String(err), ...frames.map((f) => `    at ${f}`)].join("\n");
    };
    try {
      await rejectsWith(a.client.version("10.5.0.5", { timeoutMs: 800 }), "UNAVAILABLE");
    } finally {
      Error.prepareStackTrace = previous;
    }
    assert.deepEqual(files.filter((f) => /provider\/talos\/(transport|client)\.js$/.test(f)), [], "no frame of the caller was formatted");
  });

  it("nor does the error grpc-js makes of a failed status carry grpc-js' frames to format", async () => {
    const a = api(sim.talosconfig());
    const files: string[] = [];
    const previous = Error.prepareStackTrace;
    Error.prepareStackTrace = (err, frames) => {
      for (const f of frames) files.push(String(f.getFileName()));
      return previous ? previous(err, frames) : [String(err), ...frames.map((f) => `    at ${f}`)].join("\n");
    };
    let e: TalosError;
    try {
      // An answer from a live endpoint (NOT_FOUND), and a call that never reaches a node (UNAVAILABLE): both statuses.
      const limit = Error.stackTraceLimit;
      e = await rejectsWith(a.client.getResource("10.5.0.5", "runtime", "NoSuchTypes.talos.dev", "x"), "NOT_FOUND");
      await rejectsWith(a.client.version("10.5.0.250", { timeoutMs: 800 }), "UNAVAILABLE");
      // A server stream's failure, and a status grpc-js makes itself (its own deadline).
      await rejectsWith(a.client.listResources("10.5.0.250", "runtime", "ExtensionStatuses.runtime.talos.dev"), "UNAVAILABLE");
      await assert.rejects(a.client.version("10.5.0.5", { timeoutMs: 0 }), (err) => err instanceof TalosError);
      assert.equal(Error.stackTraceLimit, limit, "the stack limit is back");
    } finally {
      Error.prepareStackTrace = previous;
    }
    assert.deepEqual(files.filter((f) => f.includes("@grpc/grpc-js")), [], "no frame of grpc-js was formatted");
    assert.match(e.message, /node 10\.5\.0\.5/, "the error still names the node and what failed");
  });

  it("an endpoint whose certificate cannot be verified is skipped; only when every endpoint fails so is it CERTIFICATE", async () => {
    const foreign = await TalosNodeSim.start({ nodes: [spec("cp-1", 2, "v1.12.3", "controlplane")], foreignServerCert: true, timing: FAST });
    try {
      const a = api(withEndpoints(sim.talosconfig(), [foreign.endpoint, ...sim.endpoints]));
      assert.equal(await a.version("10.5.0.5"), "v1.13.1");
      const bad = api(withEndpoints(sim.talosconfig(), [foreign.endpoint]));
      const e = await rejectsWith(bad.version("10.5.0.5"), "CERTIFICATE");
      assert.equal(e.retryable, false);
    } finally {
      await foreign.stop();
    }
  });
});

describe("talos: a single control plane loses its only endpoint while it reboots", function () {
  this.timeout(30000);
  let sim: TalosNodeSim;
  let a: TalosApiImpl;
  before(async () => {
    sim = await TalosNodeSim.start({ nodes: [spec("cp-1", 2, "v1.13.1", "controlplane"), spec("w-1", 3, "v1.13.1")], timing: { ...FAST, downMs: 800 } });
    a = createTalosApi(sim.talosconfig(), { pollIntervalMs: 25, probeTimeoutMs: 2000 });
  });
  after(async () => {
    a?.close();
    await sim?.stop();
  });

  it("the client waits for the endpoint to come back within nodeTimeout (retryable errors meanwhile) and finishes with one reboot", async () => {
    const errors: string[] = [];
    sim.once("down", () => setTimeout(() => {
      a.version("10.5.0.3").then(() => errors.push("answered"), (e) => errors.push(`${e.code} ${e.retryable}`));
    }, 200));
    const res = await a.upgradeNode("10.5.0.2", { image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs: 20000 });
    assert.equal(res.path, "lifecycle");
    assert.equal(sim.node("cp-1").received.reboot, 1);
    assert.deepEqual(errors, ["UNAVAILABLE true"], "no endpoint while the only control plane reboots: retryable");
    assert.equal(await a.version("10.5.0.3"), "v1.13.1");
  });

  it("a Reboot that reaches no endpoint never left: it is sent once the endpoint is back (one reboot)", async () => {
    const w = sim.node("w-1");
    const res = await a.upgradeNode("10.5.0.3", {
      image: image(TARGET), targetVersion: TARGET, nodeTimeoutMs: 20000,
      // the only endpoint goes down just before the worker's Reboot is sent
      beforeReboot: async () => {
        const down = new Promise<void>((r) => sim.once("down", () => r()));
        sim.node("cp-1").reboot();
        await down;
        while (sim.endpointOf("cp-1")!.listening) await new Promise((r) => setTimeout(r, 5));
      },
    });
    assert.equal(res.path, "lifecycle");
    assert.equal(w.version, TARGET);
    assert.equal(w.received.reboot, 1);
  });
});
