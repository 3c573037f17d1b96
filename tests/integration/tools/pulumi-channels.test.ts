// The Pulumi runtime's clients in the test process (inline programs, tests/support/pulumi.ts): a run's monitor client
// that an earlier run left retrying a port whose CLI is gone must not fail a later run whose CLI listens on that port.
// Seen once in a full run: template.test's preview failed with `14 UNAVAILABLE: No connection established. Last
// error: null` instead of the template's error.
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import "../../support/pulumi";

// The runtime's own client and options (@pulumi/pulumi runtime/settings.js `getMonitor`); untyped (no .d.ts).
const settings = require("@pulumi/pulumi/runtime/settings") as { grpcClientOptions: grpc.ClientOptions };
const resrpc = require("@pulumi/pulumi/proto/resource_grpc_pb");
const resproto = require("@pulumi/pulumi/proto/resource_pb");

type Monitor = grpc.Client & { supportsFeature(req: unknown, cb: (err: grpc.ServiceError | null, res?: { getHassupport(): boolean }) => void): void };

/** A monitor client as the runtime makes one for a run. */
const monitorClient = (port: number): Monitor => new resrpc.ResourceMonitorClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), settings.grpcClientOptions);

/** SupportsFeature("secrets"): the answer, or the call's error text. */
function supportsSecrets(client: Monitor): Promise<string> {
  const req = new resproto.SupportsFeatureRequest();
  req.setId("secrets");
  return new Promise((resolve) => client.supportsFeature(req, (err, res) => resolve(err ? err.message : `hasSupport=${res?.getHassupport()}`)));
}

/** A resource monitor (the CLI's end) on 127.0.0.1:port (0: any free port) that supports every feature. */
function monitorServer(port: number): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(resrpc.ResourceMonitorService, {
    supportsFeature: (_call: unknown, cb: (err: null, res: unknown) => void) => cb(null, new resproto.SupportsFeatureResponse().setHassupport(true)),
  });
  return new Promise((resolve, reject) => server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => {
    if (err) reject(err);
    else resolve({ server, port: p });
  }));
}

describe("integration: the Pulumi runtime's clients in the test process", function () {
  this.timeout(30000);

  it("a run's monitor client answers although an earlier run's client still retries the same port, its CLI gone", async () => {
    const first = await monitorServer(0);
    const leaked = monitorClient(first.port); // never closed, as the runtime leaves it
    try {
      assert.equal(await supportsSecrets(leaked), "hasSupport=true");
      first.server.forceShutdown(); // the first run's CLI exits...
      assert.match(await supportsSecrets(leaked), /UNAVAILABLE/); // ...under one more RPC of its runtime
      const second = await monitorServer(first.port); // a later CLI binds the same port
      const client = monitorClient(first.port);
      try {
        assert.equal(await supportsSecrets(client), "hasSupport=true");
      } finally {
        client.close();
        second.server.forceShutdown();
      }
    } finally {
      leaked.close();
    }
  });
});
