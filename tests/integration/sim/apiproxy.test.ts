// The sim's API proxy (issue 18.6's API behind its control plane): it forwards in a process of its own, so the sim's
// busy event loop (every node's apid, the kubelet emulator) does not hold every request to the API server (issue 23:
// ~80 ms per request at 1,000 nodes); it still goes away with its control plane and comes back with it.
import * as assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import * as net from "node:net";
import { Worker } from "node:worker_threads";
import { startApiProxy, type ApiProxy } from "../../../sim/apiproxy";
import type { SimNode } from "../../../sim/talos";

/** An echo server and a client in a thread of their own: they go on while this thread's event loop is blocked. */
const ECHO_AND_CLIENT = `
const net = require("node:net");
const { parentPort } = require("node:worker_threads");
const server = net.createServer((s) => s.on("error", () => undefined).pipe(s)).listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
parentPort.on("message", ({ proxyPort }) => {
  const c = net.connect(proxyPort, "127.0.0.1", () => c.write("ping"));
  c.once("data", (d) => { parentPort.postMessage({ echoed: String(d), at: Date.now() }); c.destroy(); });
  c.on("error", (e) => parentPort.postMessage({ error: e.message }));
});`;

function nodeEvents() {
  const e = new EventEmitter();
  return { events: e as unknown as { on(ev: "down" | "up", fn: (n: SimNode) => void): unknown; off(ev: "down" | "up", fn: (n: SimNode) => void): unknown }, emit: (ev: "down" | "up", name: string) => e.emit(ev, { name }) };
}

const connectOutcome = (port: number) => new Promise<string>((resolve) => {
  const c = net.connect(port, "127.0.0.1");
  c.once("connect", () => {
    c.write("x");
    c.once("data", (d) => { c.destroy(); resolve(`echoed ${String(d)}`); });
  });
  c.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
});

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("integration: sim API proxy", function () {
  this.timeout(30000);
  let worker: Worker | undefined;
  let proxy: ApiProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    await worker?.terminate();
    proxy = worker = undefined;
  });

  it("forwards while the sim's own event loop is busy", async () => {
    worker = new Worker(ECHO_AND_CLIENT, { eval: true });
    const messages: Array<Record<string, unknown>> = [];
    worker.on("message", (m: Record<string, unknown>) => messages.push(m));
    const { port } = await until("the echo server listens", async () => messages.find((m) => m.port) as { port: number } | undefined);
    const { events } = nodeEvents();
    proxy = await startApiProxy(`https://127.0.0.1:${port}`, "cp-1", events);
    worker.postMessage({ proxyPort: Number(new URL(proxy.server).port) });
    // This thread stands for the sim's process at 1,000 nodes: busy for 2 s.
    const blockedUntil = Date.now() + 2000;
    while (Date.now() < blockedUntil) { /* busy */ }
    const done = await until("the echo through the proxy", async () => messages.find((m) => m.echoed || m.error));
    assert.equal(done.error, undefined);
    assert.equal(done.echoed, "ping");
    assert.ok((done.at as number) < blockedUntil,
      `the request through the proxy waited for the sim's event loop (answered ${(done.at as number) - blockedUntil} ms after it was free)`);
  });

  it("refuses and resets connections while its control plane is down, forwards again once it is up, and exits when closed", async () => {
    const echo = net.createServer((s) => s.on("error", () => undefined).pipe(s)); // the proxy resets its side at "down"
    await new Promise<void>((r) => echo.listen(0, "127.0.0.1", () => r()));
    try {
      const { events, emit } = nodeEvents();
      proxy = await startApiProxy(`https://127.0.0.1:${(echo.address() as net.AddressInfo).port}`, "cp-1", events);
      const port = Number(new URL(proxy.server).port);
      assert.equal(await connectOutcome(port), "echoed x");
      const held = net.connect(port, "127.0.0.1");
      const heldEnded = new Promise<string>((r) => { held.on("error", (e: NodeJS.ErrnoException) => r(e.code ?? e.message)); held.once("close", () => r("closed")); });
      await new Promise((r) => held.once("connect", r));
      emit("down", "cp-2"); // another node: nothing changes
      assert.equal(await connectOutcome(port), "echoed x");
      emit("down", "cp-1");
      assert.equal(await heldEnded, "ECONNRESET", "a connection open when the node went down");
      await until("connections refused", async () => ((await connectOutcome(port)) === "ECONNREFUSED" ? true : undefined));
      emit("up", "cp-1");
      await until("forwarding again", async () => ((await connectOutcome(port)) === "echoed x" ? true : undefined));
      await proxy.close();
      proxy = undefined;
      assert.equal(await connectOutcome(port), "ECONNREFUSED", "the proxy's process still listens after close()");
    } finally {
      echo.close();
    }
  });
});
