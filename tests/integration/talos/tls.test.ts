// mTLS and roles on the wire: certificates from another CA (either side), a reader-role certificate, a certificate
// without EKU clientAuth, and the endpoint's routing-header rules.
import * as assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { createTalosApi, parseTalosconfig } from "../../../provider/talos";
import { wire } from "../../../provider/talos/proto";
import { EKU } from "../../../sim/talos/x509";
import { TalosNodeSim } from "../../../sim/talos";
import { FAST, image, rejectsWith, spec } from "./helpers";

describe("talos: mTLS, roles and routing against the simulated endpoint", function () {
  this.timeout(20000);
  let sim: TalosNodeSim;
  const closers: (() => void)[] = [];
  before(async () => {
    sim = await TalosNodeSim.start({ nodes: [spec("cp-1", 2, "v1.12.3", "controlplane"), spec("w-1", 3, "v1.13.1")], timing: FAST });
  });
  after(async () => {
    closers.forEach((c) => c());
    await sim?.stop();
  });
  const api = (cfg: string) => {
    const a = createTalosApi(cfg, { pollIntervalMs: 25 });
    closers.push(() => a.close());
    return a;
  };

  it("the talosconfig it writes carries the key under the Talos ED25519 label, and the client loads it", async () => {
    const text = sim.talosconfig();
    const raw = /key: (\S+)/.exec(text)![1];
    assert.match(Buffer.from(raw, "base64").toString(), /^-----BEGIN ED25519 PRIVATE KEY-----/);
    const cfg = parseTalosconfig(text);
    assert.deepEqual(cfg.endpoints.map((e) => e.target), [sim.endpoint]);
    assert.deepEqual(cfg.nodes, ["10.5.0.2", "10.5.0.3"]);
    assert.equal(await api(text).version("10.5.0.2"), "v1.12.3");
  });

  it("a client certificate from another CA is refused at the handshake: CERTIFICATE, permanent", async () => {
    const e = await rejectsWith(api(sim.talosconfig({ foreignCa: true })).version("10.5.0.2"), "CERTIFICATE");
    assert.equal(e.retryable, false);
    assert.match(e.message, /node 10\.5\.0\.2: Version: TLS certificate verification failed/);
  });

  it("a server certificate from another CA: the client's verification fails with CERTIFICATE", async () => {
    const other = await TalosNodeSim.start({ nodes: [spec("cp-1", 2, "v1.12.3")], foreignServerCert: true, timing: FAST });
    try {
      const e = await rejectsWith(api(other.talosconfig()).version("10.5.0.2"), "CERTIFICATE");
      assert.match(e.message, /self-signed certificate|unable to (verify|get)/);
      assert.match(e.message, /do not match this cluster's Talos CA/);
    } finally {
      await other.stop();
    }
  });

  it("an IP endpoint is verified against the certificate's IP addresses: one it does not list is refused", async () => {
    // Listening on every loopback address; the certificate lists 127.0.0.1, ::1, localhost and 0.0.0.0, not 127.0.0.2.
    const any = await TalosNodeSim.start({ nodes: [spec("cp-1", 2, "v1.12.3")], host: "0.0.0.0", timing: FAST });
    try {
      const ok = any.talosconfig().replace(`0.0.0.0:${any.port}`, `127.0.0.1:${any.port}`);
      assert.equal(await api(ok).version("10.5.0.2"), "v1.12.3");
      const wrong = any.talosconfig().replace(`0.0.0.0:${any.port}`, `127.0.0.2:${any.port}`);
      const e = await rejectsWith(api(wrong).version("10.5.0.2"), "CERTIFICATE");
      assert.equal(e.retryable, false);
      assert.match(e.message, /127\.0\.0\.2/);
    } finally {
      await any.stop();
    }
  });

  it("an endpoint that is down is UNAVAILABLE (retryable), not a certificate error", async () => {
    const gone = await TalosNodeSim.start({ nodes: [spec("cp-1", 2, "v1.12.3")], timing: FAST });
    const cfg = gone.talosconfig();
    await gone.stop();
    const e = await rejectsWith(api(cfg).version("10.5.0.2"), "UNAVAILABLE");
    assert.equal(e.retryable, true);
  });

  it("a reader-role certificate reads the version but gets PERMISSION_DENIED 'not authorized' for Upgrade and Read", async () => {
    const reader = api(sim.talosconfig({ roles: ["os:reader"] }));
    assert.equal(await reader.version("10.5.0.3"), "v1.13.1");
    const e1 = await rejectsWith(reader.client.upgrade("10.5.0.2", { image: image("v1.13.2"), preserve: true, stage: false, force: false }), "PERMISSION_DENIED");
    assert.match(e1.message, /node 10\.5\.0\.2: upgrade: not authorized; .*lacks the os:admin role/);
    await rejectsWith(reader.bootId("10.5.0.3"), "PERMISSION_DENIED");
    const e2 = await rejectsWith(reader.upgradeNode("10.5.0.3", { image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 3000 }), "PERMISSION_DENIED");
    assert.equal(e2.retryable, false);
    assert.equal(sim.node("w-1").version, "v1.13.1");
  });

  it("an operator may pull and reboot but not install", async () => {
    const op = api(sim.talosconfig({ roles: ["os:operator"] }));
    assert.match(await op.client.pull("10.5.0.3", image("v1.13.2")), /@sha256:[0-9a-f]{64}$/);
    await rejectsWith(op.client.lifecycleUpgrade("10.5.0.3", image("v1.13.2")), "PERMISSION_DENIED");
  });

  it("a certificate whose EKU is not exactly clientAuth gets no role", async () => {
    const bad = api(sim.talosconfig({ extKeyUsage: [EKU.clientAuth, EKU.serverAuth] }));
    const e = await rejectsWith(bad.version("10.5.0.2"), "PERMISSION_DENIED");
    assert.equal(e.retryable, false);
  });

  it("Version/LifecycleService on an old node: UNIMPLEMENTED", async () => {
    const a = api(sim.talosconfig());
    await rejectsWith(a.client.pull("10.5.0.2", image("v1.13.2")), "UNIMPLEMENTED");
    await rejectsWith(a.client.lifecycleUpgrade("10.5.0.2", image("v1.13.2")), "UNIMPLEMENTED");
  });

  it("routing: a multi-valued node header, the deprecated nodes header and an unknown node", async () => {
    const cfg = parseTalosconfig(sim.talosconfig());
    const client = new grpc.Client(sim.endpoint, grpc.credentials.createSsl(cfg.ca, cfg.key, cfg.crt));
    closers.push(() => client.close());
    const m = (wire().MachineService as any).Version as grpc.MethodDefinition<object, any>;
    const call = (md: grpc.Metadata) => new Promise<grpc.ServiceError | undefined>((r) =>
      client.makeUnaryRequest(m.path, m.requestSerialize, m.responseDeserialize, {}, md, (e) => r(e ?? undefined)));
    const two = new grpc.Metadata();
    two.add("node", "10.5.0.2");
    two.add("node", "10.5.0.3");
    assert.equal((await call(two))?.details, "node metadata must be single-valued");
    const fan = new grpc.Metadata();
    fan.set("nodes", "10.5.0.2");
    assert.equal((await call(fan))?.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(await call(new grpc.Metadata()), undefined, "no header: the endpoint node answers");
    const e = await rejectsWith(api(sim.talosconfig()).version("10.9.9.9"), "UNAVAILABLE");
    assert.match(e.message, /node 10\.9\.9\.9: Version: the node is unreachable/);
  });
});
