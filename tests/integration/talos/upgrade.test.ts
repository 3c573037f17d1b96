// One node upgraded through the real gRPC wire: the legacy path from v1.12.x, the >= 1.13 path (pull, install,
// beforeReboot, reboot), the staged legacy path on 1.9.x and the idempotent no-op, observing the downtime.
import * as assert from "node:assert/strict";
import { NodeUpgradeStep } from "../../../provider/rollout/ports";
import { createTalosApi, EventStream, TalosClient, TalosEvent } from "../../../provider/talos";
import { upgradeNode } from "../../../provider/talos/upgrade";
import { Harness, image, spec, startHarness } from "./helpers";

describe("talos: upgrading one simulated node over gRPC", function () {
  this.timeout(20000);
  let h: Harness;
  before(async () => {
    h = await startHarness({
      nodes: [
        spec("cp-1", 2, "v1.12.3", "controlplane"),
        spec("w-1", 3, "v1.13.1"),
        spec("w-2", 4, "v1.13.2"),
        spec("w-3", 5, "v1.9.1"),
        spec("w-4", 6, "v1.13.1"),
        spec("w-5", 7, "v1.13.1"),
        spec("w-6", 8, "v1.13.1"),
        spec("w-7", 9, "v1.13.1"),
        spec("w-8", 10, "v1.13.1"),
        spec("w-9", 11, "v1.13.1"),
        spec("w-10", 12, "v1.13.1"),
      ],
    });
  });
  after(async () => h?.stop());

  it("legacy path (v1.12.3 → v1.13.2): Talos cordons and drains itself, is unreachable while down, returns with a new boot id and version", async () => {
    const { sim, api } = h;
    const node = "10.5.0.2";
    const before = await api.bootId(node);
    const seen: string[] = [];
    const downProbes: Promise<unknown>[] = [];
    let drained = false;
    sim.hooks.beforeLegacyDown = async (n) => {
      seen.push(`drain ${n.name}`);
      drained = true;
    };
    sim.on("cordon", (n) => seen.push(`cordon ${n.name}`));
    sim.once("down", (n, info) => {
      seen.push(`down ${n.name} ${info.reason} cordon=${info.cordon}`);
      downProbes.push(api.version(node).then(() => "answered", (e) => e));
    });
    sim.once("up", (n, info) => seen.push(`up ${n.name} ${info.version} uncordon=${info.uncordon}`));
    const steps: NodeUpgradeStep[] = [];
    const res = await api.upgradeNode(node, {
      image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 10000, onStep: (s) => steps.push(s),
    });
    sim.hooks.beforeLegacyDown = undefined;
    assert.equal(res.path, "legacy");
    assert.equal(res.fromVersion, "v1.12.3");
    assert.equal(res.toVersion, "v1.13.2");
    assert.equal(res.oldBootId, before);
    assert.notEqual(res.newBootId, before);
    assert.equal(await api.bootId(node), res.newBootId);
    assert.equal(await api.version(node), "v1.13.2");
    assert.ok(drained);
    assert.deepEqual(seen, ["cordon cp-1", "drain cp-1", "down cp-1 upgrade cordon=true", "up cp-1 v1.13.2 uncordon=true"]);
    assert.deepEqual(steps, ["installing", "rebooting", "waiting", "back"]);
    const probe = (await downProbes[0]) as { code?: string; retryable?: boolean; message?: string };
    assert.equal(probe.code, "UNAVAILABLE", `while down: ${String(probe.message ?? probe)}`);
    assert.equal(probe.retryable, true);
    // cp-1 is the only control plane, so the only endpoint: refused by its apid as it stops, then gone
    assert.match(probe.message!, /node 10\.5\.0\.2.*(connection refused|ECONNREFUSED)/);
  });

  it(">= 1.13 path (v1.13.1 → v1.13.2): pull, install without reboot, beforeReboot, reboot, back on the target", async () => {
    const { sim, api } = h;
    const node = "10.5.0.3";
    const n = sim.node(node);
    const before = n.bootId;
    const steps: string[] = [];
    let duringDrain: { version: string; staged?: string; up: boolean } | undefined;
    let downAt = 0, upAt = 0;
    sim.once("down", (_n, info) => { downAt = Date.now(); steps.push(`down:${info.reason}:${info.cordon}`); });
    sim.once("up", () => (upAt = Date.now()));
    const res = await api.upgradeNode(node, {
      image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 10000,
      onStep: (s) => steps.push(s),
      beforeReboot: async () => {
        duringDrain = { version: await api.version(node), staged: n.stagedImage, up: n.up };
      },
    });
    assert.equal(res.path, "lifecycle");
    assert.notEqual(res.newBootId, before);
    assert.equal(n.version, "v1.13.2");
    assert.deepEqual(steps.filter((s) => !s.startsWith("down")), ["pulling", "installing", "draining", "rebooting", "waiting", "back"]);
    assert.ok(steps.includes("down:reboot:false"), "a plain reboot does not make Talos cordon");
    assert.ok(steps.indexOf("draining") < steps.indexOf("down:reboot:false"));
    assert.deepEqual(duringDrain, { version: "v1.13.1", staged: image("v1.13.2"), up: true });
    assert.ok(upAt - downAt >= 240, `down for ${upAt - downAt} ms`);
  });

  it("issue 23.2: a change of the node's Node (nodeChanged) ends the pause between looks at once: the boot is seen without waiting for the next poll", async () => {
    const { sim } = h;
    // Pauses of ten minutes between looks: the wait can only end this test in time by looking when nodeChanged says so.
    const api = createTalosApi(sim.talosconfig(), { firstPollMs: 600_000, pollIntervalMs: 600_000, probeTimeoutMs: 2000 });
    const node = sim.node("w-4");
    const before = node.bootId;
    let asked = 0;
    let woken = 0;
    try {
      const res = await api.upgradeNode(node.address, {
        image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 15_000,
        // Stands in for the run's Node watch: the node's Node changes when the sim brings it up.
        nodeChanged: (signal) => new Promise<void>((resolve) => {
          asked++;
          const up = (n: { name: string }) => {
            if (n.name !== "w-4") return;
            woken++;
            done();
          };
          const done = () => {
            sim.off("up", up);
            signal.removeEventListener("abort", done);
            resolve();
          };
          sim.on("up", up);
          signal.addEventListener("abort", done, { once: true });
        }),
      });
      assert.deepEqual([res.path, res.toVersion, node.version], ["lifecycle", "v1.13.2", "v1.13.2"]);
      assert.notEqual(res.newBootId, before);
      assert.equal(woken, 1, "the node's boot woke the wait");
      assert.ok(asked >= 2, `asked before each look (${asked})`);
    } finally {
      api.close();
    }
  });

  it("issue 23.2: the first look asks Version and boot id at once, with the event stream opened beside them and the installer image still being read (one round trip, not four)", async () => {
    const { api } = h;
    const seen: string[] = [];
    // The node's own installer image, read from the node by the caller: it is known only once the look is under way.
    let imageKnown!: (image: string) => void;
    const imageRead = new Promise<string>((resolve) => (imageKnown = resolve));
    // The real client, with each call's start and answer noted in order.
    const client = new Proxy(api.client, {
      get(target, prop, receiver) {
        const real = Reflect.get(target, prop, receiver);
        if (prop === "events") {
          return (...args: unknown[]) => {
            seen.push("events opened");
            return real.apply(target, args);
          };
        }
        if (prop !== "version" && prop !== "bootId") return typeof real === "function" ? real.bind(target) : real;
        return async (...args: unknown[]) => {
          seen.push(`${prop} asked`);
          if (prop === "version") imageKnown(image("v1.13.2"));
          try {
            return await real.apply(target, args);
          } finally {
            seen.push(`${prop} answered`);
          }
        };
      },
    }) as TalosClient;
    const steps: string[] = [];
    const res = await upgradeNode(client, "10.5.0.7", {
      image: imageRead, targetVersion: "v1.13.2", nodeTimeoutMs: 10_000, onStep: (step, detail) => steps.push(`${step} ${detail ?? ""}`.trim()),
    }, { pollIntervalMs: 25 });
    assert.deepEqual(steps.slice(0, 2), [`pulling ${image("v1.13.2")}`, `installing ${image("v1.13.2")}`], "the image read meanwhile is the one installed");
    assert.equal(res.toVersion, "v1.13.2");
    const first = seen.slice(0, 3).sort();
    assert.deepEqual(first, ["bootId asked", "events opened", "version asked"], `nothing waits for another: ${seen.join(", ")}`);
  });

  it("issue 23: once the node is back, one look asks its boot id and Version at once (one round trip, not two)", async () => {
    const { api, sim } = h;
    const seen: string[] = [];
    let waiting = false;
    const client = new Proxy(api.client, {
      get(target, prop, receiver) {
        const real = Reflect.get(target, prop, receiver);
        if (prop !== "version" && prop !== "bootId") return typeof real === "function" ? real.bind(target) : real;
        return async (...args: unknown[]) => {
          if (waiting) seen.push(`${prop} asked`);
          try {
            const answer = await real.apply(target, args);
            if (waiting) seen.push(`${prop} answered ${prop === "version" ? (answer as { tag: string }).tag : answer}`);
            return answer;
          } catch (e) {
            if (waiting) seen.push(`${prop} failed`);
            throw e;
          }
        };
      },
    }) as TalosClient;
    const res = await upgradeNode(client, "10.5.0.8", {
      image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 10_000, onStep: (step) => (waiting ||= step === "waiting"),
    }, { pollIntervalMs: 25 });
    assert.equal(res.toVersion, "v1.13.2");
    assert.equal(sim.node("10.5.0.8").bootId, res.newBootId);
    // The look that saw the new boot (after the previous look's boot id answer or failure): its Version was asked
    // before its boot id was answered, and no Version was asked after it.
    const sawBoot = seen.indexOf(`bootId answered ${res.newBootId}`);
    const previous = Math.max(...seen.slice(0, sawBoot).map((x, i) => (/^bootId (answered|failed)/.test(x) ? i : -1)));
    const look = seen.slice(previous + 1, sawBoot);
    assert.deepEqual([...look].filter((x) => x.endsWith("asked")).sort(), ["bootId asked", "version asked"], `asked at once: ${seen.join(", ")}`);
    assert.ok(!seen.slice(sawBoot).includes("version asked"), `no second Version: ${seen.join(", ")}`);
    assert.ok(seen.includes("version answered v1.13.2"));
  });

  it("issue 23: the event stream is awaited right before the Reboot, not before the pull (pull and install go while its hello is still out)", async () => {
    const { api } = h;
    const order: string[] = [];
    let releaseHello!: () => void;
    const hello = new Promise<void>((r) => (releaseHello = r));
    // Let through after 2 s at the latest (an upgrade that waits for it before pulling would wait for its probeMs).
    const late = setTimeout(() => {
      order.push("hello released late");
      releaseHello();
    }, 2000);
    const client = new Proxy(api.client, {
      get(target, prop, receiver) {
        const real = Reflect.get(target, prop, receiver);
        if (prop === "events") {
          // The stream's first event is held until the test lets it through.
          return (...args: unknown[]) => {
            const stream = real.apply(target, args) as EventStream;
            return {
              cancel: () => stream.cancel(),
              async *[Symbol.asyncIterator]() {
                await hello;
                yield* stream;
              },
            } satisfies EventStream;
          };
        }
        if (prop !== "pull" && prop !== "lifecycleUpgrade" && prop !== "reboot") return typeof real === "function" ? real.bind(target) : real;
        return (...args: unknown[]) => {
          order.push(String(prop));
          return real.apply(target, args);
        };
      },
    }) as TalosClient;
    const res = await upgradeNode(client, "10.5.0.9", {
      image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 10_000,
      beforeReboot: async () => {
        order.push("hello released");
        releaseHello();
      },
    }, { pollIntervalMs: 25, probeTimeoutMs: 8000 });
    clearTimeout(late);
    assert.equal(res.toVersion, "v1.13.2");
    assert.deepEqual(order, ["pull", "lifecycleUpgrade", "hello released", "reboot"]);
  });

  it("issue 23: an image known at the start, on a node expected on >= 1.13, is pulled beside the first look, once; not on a node expected on the legacy path", async () => {
    const { api } = h;
    const ordered = (seen: string[]) => new Proxy(api.client, {
      get(target, prop, receiver) {
        const real = Reflect.get(target, prop, receiver);
        if (prop !== "version" && prop !== "bootId" && prop !== "pull") return typeof real === "function" ? real.bind(target) : real;
        return async (...args: unknown[]) => {
          if (prop === "pull") seen.push("pull sent");
          const answer = await real.apply(target, args);
          if (prop !== "pull" && !seen.includes("looked")) seen.push("looked");
          return answer;
        };
      },
    }) as TalosClient;
    const early: string[] = [];
    const res = await upgradeNode(ordered(early), "10.5.0.10", {
      image: image("v1.13.2"), expectedVersion: "v1.13.1", targetVersion: "v1.13.2", nodeTimeoutMs: 10_000,
    }, { pollIntervalMs: 25 });
    assert.equal(res.toVersion, "v1.13.2");
    assert.deepEqual(early, ["pull sent", "looked"], "before the change the pull waited for the look's answer, and was sent once");

    // Expected on v1.12 (the legacy path, no ImageService): the look decides first, as before (here it finds v1.13.1).
    const after: string[] = [];
    const res2 = await upgradeNode(ordered(after), "10.5.0.11", {
      image: image("v1.13.2"), expectedVersion: "v1.12.9", targetVersion: "v1.13.2", nodeTimeoutMs: 10_000,
    }, { pollIntervalMs: 25 });
    assert.equal(res2.path, "lifecycle");
    assert.deepEqual(after, ["looked", "pull sent"]);
  });

  it("issue 23: a pull sent before a reboot the first look waits through is sent again after it (what it pulled may be gone)", async () => {
    const { api, sim } = h;
    let pulls = 0;
    let rebooting!: () => void;
    const wentDown = new Promise<void>((r) => (rebooting = r));
    // The node answers the early pull, then reboots (a killed run's reboot, say); the first look is asked after that.
    const client = new Proxy(api.client, {
      get(target, prop, receiver) {
        const real = Reflect.get(target, prop, receiver);
        if (prop === "pull") {
          return async (...args: unknown[]) => {
            const answer = await real.apply(target, args);
            if (++pulls === 1) {
              sim.node("w-10").reboot();
              setTimeout(rebooting, 50);
            }
            return answer;
          };
        }
        if (prop !== "version" && prop !== "bootId") return typeof real === "function" ? real.bind(target) : real;
        return async (...args: unknown[]) => {
          await wentDown;
          return real.apply(target, args);
        };
      },
    }) as TalosClient;
    const res = await upgradeNode(client, "10.5.0.12", {
      image: image("v1.13.2"), expectedVersion: "v1.13.1", targetVersion: "v1.13.2", nodeTimeoutMs: 10_000,
    }, { pollIntervalMs: 25 });
    assert.equal(res.toVersion, "v1.13.2");
    assert.equal(pulls, 2, "the pull answered before the reboot is not taken for one after it");
  });

  it("issue 23: a node its Node showed behind but found on the target: the early pull is all it gets (no install, no reboot)", async () => {
    const { sim, api } = h;
    const calls: string[] = [];
    const client = new Proxy(api.client, {
      get(target, prop, receiver) {
        const real = Reflect.get(target, prop, receiver);
        if (prop !== "pull" && prop !== "lifecycleUpgrade" && prop !== "reboot") return typeof real === "function" ? real.bind(target) : real;
        return (...args: unknown[]) => {
          calls.push(String(prop));
          return real.apply(target, args);
        };
      },
    }) as TalosClient;
    const before = sim.node("w-2").bootId;
    const res = await upgradeNode(client, "10.5.0.4", {
      image: image("v1.13.2"), expectedVersion: "v1.13.1", targetVersion: "v1.13.2", nodeTimeoutMs: 5000,
      beforeReboot: async () => assert.fail("must not drain"),
    });
    assert.deepEqual(res, { path: "none", fromVersion: "v1.13.2", toVersion: "v1.13.2", oldBootId: before, newBootId: before });
    assert.deepEqual(calls, ["pull"]);
    assert.equal(sim.node("w-2").stagedImage, undefined, "nothing installed");
  });

  it("a node already at the target is not touched (path none)", async () => {
    const { sim, api } = h;
    let downs = 0;
    const count = () => downs++;
    sim.on("down", count);
    const before = sim.node("w-2").bootId;
    const res = await api.upgradeNode("10.5.0.4", {
      image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 5000,
      beforeReboot: async () => assert.fail("must not drain"),
    });
    sim.off("down", count);
    assert.deepEqual(res, { path: "none", fromVersion: "v1.13.2", toVersion: "v1.13.2", oldBootId: before, newBootId: before });
    assert.equal(downs, 0);
  });

  it("legacy path on 1.9.1 stages the upgrade (two boots) and still returns on the target", async () => {
    const { sim, api } = h;
    let downAt = 0, upAt = 0;
    sim.once("down", () => (downAt = Date.now()));
    sim.once("up", () => (upAt = Date.now()));
    const res = await api.upgradeNode("w-3", { image: image("v1.10.0"), targetVersion: "v1.10.0", nodeTimeoutMs: 10000 });
    assert.equal(res.path, "legacy");
    assert.equal(sim.node("w-3").version, "v1.10.0");
    assert.ok(upAt - downAt >= 490, `a staged upgrade boots twice (down ${upAt - downAt} ms)`);
  });

  it("the installer refuses a version its release does not take, like Talos' pre-flight check: the node stays on its version", async () => {
    // w-3 is on v1.10.0 (the test before): Talos 1.13 upgrades from >= 1.11.0 only (legacy path, the FATAL sequence
    // reboots the node on its old version).
    const { sim, api } = h;
    await assert.rejects(api.upgradeNode("w-3", { image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 10000 }),
      /host version 1\.10\.0 is too old to upgrade to Talos 1\.13\.2/);
    assert.equal(sim.node("w-3").version, "v1.10.0");
    // >= 1.13 on both sides (LifecycleService): going back to 1.13 from 1.15 is refused (Talos 1.13 takes hosts < 1.15.0).
    await api.upgradeNode("w-2", { image: image("v1.15.1"), targetVersion: "v1.15.1", nodeTimeoutMs: 10000 });
    await assert.rejects(api.upgradeNode("w-2", { image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 10000 }),
      /host version 1\.15\.1 is too new to downgrade to Talos 1\.13\.2/);
    assert.equal(sim.node("w-2").version, "v1.15.1");
  });

  it("Events asked with a signal that has already aborted end at once (a listener added to an aborted signal never runs)", async () => {
    const stream = h.api.client.events("10.5.0.3", { tailEvents: 0 }, { signal: AbortSignal.abort() });
    const got: TalosEvent[] = [];
    const reading = (async () => {
      for await (const e of stream) got.push(e);
      return "ended";
    })();
    const outcome = await Promise.race([reading, new Promise<string>((r) => setTimeout(() => r("still open"), 3000))]);
    stream.cancel();
    assert.equal(outcome, "ended");
    assert.deepEqual(got, [], "nothing read from a stream cancelled before it opened");
  });

  it("Events: hello first, then talos/runtime/machine.* payloads of the node's sequences", async () => {
    const { api } = h;
    const node = "10.5.0.3";
    const stream = api.client.events(node, { tailEvents: 0 });
    const got: TalosEvent[] = [];
    const reading = (async () => {
      for await (const e of stream) {
        got.push(e);
        if (e.type === "MachineStatusEvent" && e.payload.stage === 5) break; // REBOOTING
      }
    })();
    while (got.length === 0) await new Promise((r) => setTimeout(r, 10));
    const { actorId } = await api.client.reboot(node);
    await reading;
    assert.equal(got[0].type, "");
    assert.equal(got[0].id.length, 20);
    const seq = got.find((e) => e.type === "SequenceEvent");
    assert.deepEqual([seq?.payload.sequence, seq?.payload.action, seq?.actorId], ["reboot", 1, actorId]);
    // the node reboots: wait until it is back before the suite ends
    const back = await api.upgradeNode(node, { image: image("v1.13.2"), targetVersion: "v1.13.2", nodeTimeoutMs: 5000 });
    assert.equal(back.path, "none");
  });
});
