// The engine-gone rule the provider and the language host share (provider/handlers/engineWatch.ts), on real sockets:
// an engine that answers is never gone, however long; one that refuses is gone after PROBE_FAILURES probes.
import assert from "node:assert/strict";
import * as net from "node:net";
import { PROBE_FAILURES, watchAddress } from "../../../provider/handlers/engineWatch";

const EVERY_MS = 20;

async function listening(onConnect: () => void = () => undefined): Promise<{ server: net.Server; address: string }> {
  const server = net.createServer((s) => {
    onConnect();
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, address: `127.0.0.1:${(server.address() as net.AddressInfo).port}` };
}

describe("integration: handlers — the engine-gone rule (engineWatch)", function () {
  this.timeout(30000);

  it("an engine that answers is not gone after many probes", async () => {
    let probes = 0;
    let enough: () => void;
    const tenProbes = new Promise<void>((resolve) => (enough = resolve));
    const { server, address } = await listening(() => ++probes === 10 && enough());
    let gone = false;
    let saidGone: () => void;
    const goneSaid = new Promise<void>((resolve) => (saidGone = resolve));
    const stop = watchAddress(address, () => {
      gone = true;
      saidGone();
    }, EVERY_MS);
    try {
      await Promise.race([tenProbes, goneSaid]);
      assert.equal(gone, false, `taken for gone after ${probes} answered probes`);
    } finally {
      stop();
      server.close();
    }
  });

  it(`an engine that stopped listening is gone after ${PROBE_FAILURES} refusals, and said once`, async () => {
    const { server, address } = await listening();
    await new Promise((resolve) => server.close(resolve));
    let calls = 0;
    await new Promise<void>((resolve) => watchAddress(address, () => {
      calls++;
      resolve();
    }, EVERY_MS));
    await new Promise((r) => setTimeout(r, EVERY_MS * 5)); // later probes would call again: the watch stopped
    assert.equal(calls, 1);
  });
});
