// What a program pays for talos-gate before its first resource registers: neither the template reader (zod, yaml),
// nor the context rewriter, nor Pulumi's closure serializer (a V8 inspector session) — each measured at 50–270 ms of
// every preview and up. Seen in a process of its own, with Pulumi's mocks (they are global to a process).
import * as assert from "node:assert/strict";
import * as path from "node:path";
import { runWithPulumiMocks } from "../../support/pulumiMocks";

/** The modules a program loads after `@pulumi/pulumi` when it builds the README's three resources. */
function loadedByProgram(): string[] {
  return runWithPulumiMocks(`
    const before = new Set(Object.keys(require.cache));
    const gate = require(dist + "/sdk");
    const cluster = new gate.Cluster("prod", { kubeconfig: pulumi.secret("k"), talosconfig: pulumi.secret("t") });
    const check = new gate.Healthcheck("ceph", { cluster, name: "ceph", job: { apiVersion: "batch/v1", kind: "Job", spec: {} } });
    const upgrade = new gate.TalosUpgrade("talos", { cluster, version: "v1.13.2", healthchecks: [check] });
    // Once all three registered (a loaded machine takes seconds): what loads on the way to the engine counts too.
    pulumi.all([cluster.urn, check.urn, upgrade.urn]).apply(() => done(Object.keys(require.cache).filter((k) => !before.has(k))));
  `);
}

describe("sdk: start-up", function () {
  this.timeout(90_000);
  it("builds a Cluster, a Healthcheck and a TalosUpgrade without the template reader, the context rewriter or Pulumi's closure serializer", () => {
    const loaded = loadedByProgram();
    assert.ok(loaded.some((f) => f.endsWith(path.join("sdk", "talosUpgrade.js"))), "the SDK itself was loaded");
    const heavy = loaded.filter((f) => /node_modules[\\/](zod|yaml)[\\/]|credentialContext|[\\/]runtime[\\/]closure[\\/]/.test(f));
    assert.deepEqual(heavy, [], "loaded by a program that uses neither a ClusterTemplate nor a Cluster context");
  });
});
