// gRPC keepalive within what apid accepts. apid enforces gRPC-Go's default policy (pings at most every 5 minutes
// while calls are active, none without calls; the third offending ping earns GOAWAY too_many_pings and closes the
// connection, failing every call on it). The simulated endpoints enforce the same policy. The policy and the client's
// ping timing are both relative times, so the tests scale them by the same factor to run in seconds.
import * as assert from "node:assert/strict";
import type * as grpc from "@grpc/grpc-js";
import { createTalosApi, DEFAULT_CHANNEL_OPTIONS, TalosApiImpl, TalosEvent } from "../../../provider/talos";
import { GO_DEFAULT_KEEPALIVE_POLICY, TalosNodeSim } from "../../../sim/talos";
import { FAST, spec } from "./helpers";

const SCALE = 1 / 200;
const POLICY = { minTimeMs: GO_DEFAULT_KEEPALIVE_POLICY.minTimeMs * SCALE, permitWithoutStream: GO_DEFAULT_KEEPALIVE_POLICY.permitWithoutStream };

/**
 * Channel options with the ping interval scaled like the policy. The ping timeout is not: it bounds the wait for the
 * answer to one ping, which the policy does not govern, and scaled it was 100 ms — a process that waited that long for
 * a core (the full suite on 2 cores) ran its timers before reading the answer and dropped the connection itself
 * ("Connection dropped" instead of the GOAWAY; seen in CI, reproduced by stalling the event loop).
 */
function scaled(opts: grpc.ChannelOptions): grpc.ChannelOptions {
  return { ...opts, "grpc.keepalive_time_ms": Math.round(Number(opts["grpc.keepalive_time_ms"]) * SCALE) };
}

/** Holds an Events stream on an idle node for `ms`; resolves with how it ended ("open" if it was still open). */
async function holdIdleStream(api: TalosApiImpl, node: string, ms: number): Promise<string> {
  const stream = api.client.events(node, { tailEvents: 0 });
  const got: TalosEvent[] = [];
  const reading = (async () => {
    try {
      for await (const e of stream) got.push(e);
      return "ended";
    } catch (err) {
      return `failed: ${(err as Error).message}`;
    }
  })();
  const outcome = await Promise.race([reading, new Promise<string>((r) => setTimeout(() => r("open"), ms))]);
  stream.cancel();
  assert.equal(got[0]?.type, "", "the stream was live (hello received)");
  return outcome;
}

describe("talos: keepalive pings within apid's enforcement policy", function () {
  this.timeout(30000);
  let sim: TalosNodeSim;
  const apis: TalosApiImpl[] = [];
  before(async () => {
    sim = await TalosNodeSim.start({ nodes: [spec("cp-1", 2, "v1.13.1", "controlplane"), spec("w-1", 3, "v1.13.1")], timing: FAST, keepalivePolicy: POLICY });
  });
  after(async () => {
    for (const a of apis) a.close();
    await sim?.stop();
  });
  const api = (channelOptions: grpc.ChannelOptions) => {
    const a = createTalosApi(sim.talosconfig(), { pollIntervalMs: 25, channelOptions });
    apis.push(a);
    return a;
  };

  it("the defaults ping no more often than apid's minimum (5 minutes), and only during calls", () => {
    assert.ok(Number(DEFAULT_CHANNEL_OPTIONS["grpc.keepalive_time_ms"]) > GO_DEFAULT_KEEPALIVE_POLICY.minTimeMs);
    assert.equal(DEFAULT_CHANNEL_OPTIONS["grpc.keepalive_permit_without_calls"], 0);
  });

  it("the simulated apid enforces the policy: a client pinging every 30 s (scaled) loses its open calls to GOAWAY too_many_pings", async () => {
    const before = sim.keepaliveViolations.length;
    const eager = api(scaled({ ...DEFAULT_CHANNEL_OPTIONS, "grpc.keepalive_time_ms": 30_000, "grpc.keepalive_timeout_ms": 10_000 }));
    const outcome = await holdIdleStream(eager, "10.5.0.3", 8 * POLICY.minTimeMs);
    // grpc-js reports the GOAWAY ENHANCE_YOUR_CALM as RESOURCE_EXHAUSTED; the port classifies it as a lost connection
    assert.match(outcome, /^failed: talos: node 10\.5\.0\.3: events: the node is unreachable \(Bandwidth exhausted or memory limit exceeded\)/);
    assert.equal(sim.keepaliveViolations.length, before + 1);
  });

  it("with the default options (scaled) an idle call outlives several pings, and the connection stays usable", async () => {
    const before = sim.keepaliveViolations.length;
    const a = api(scaled(DEFAULT_CHANNEL_OPTIONS));
    const pingMs = Number(scaled(DEFAULT_CHANNEL_OPTIONS)["grpc.keepalive_time_ms"]);
    // long enough for 4 pings: Go's third strike would close the connection on the fourth
    const outcome = await holdIdleStream(a, "10.5.0.3", 4 * pingMs + 1000);
    assert.equal(outcome, "open");
    assert.equal(sim.keepaliveViolations.length, before);
    assert.equal(await a.version("10.5.0.3"), "v1.13.1");
  });
});
