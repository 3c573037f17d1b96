// Every talos-gate resource registers as pulumi.dynamic.Resource would register it, with the provider text written
// once (provider/shimText.ts) instead of serialized in each program. Derived here with Pulumi's own serializer, in a
// process of its own (Pulumi's mocks are global to a process).
import * as assert from "node:assert/strict";
import { SHIM_TEXT } from "../../../provider/shimText";
import { runWithPulumiMocks, type Registration } from "../../support/pulumiMocks";

/** What the SDK and pulumi.dynamic.Resource register, seen through Pulumi's mocks. */
function registrations(): Registration[] {
  return runWithPulumiMocks(`
    const { shim } = require(dist + "/provider/shim");
    const { Smoke } = require(dist + "/sdk/smoke");
    new pulumi.dynamic.Resource(shim, "by-pulumi", { kind: "Smoke", message: "m" }, undefined, "talos-gate", "Smoke");
    new Smoke("by-sdk", { message: "m" });
    // Until both registered (a loaded machine takes seconds; the process is bounded at 60 s).
    const wait = setInterval(() => { if (seen.length >= 2) { clearInterval(wait); done(seen); } }, 20);
  `);
}

describe("sdk: the provider text", function () {
  this.timeout(90_000);
  it("is what pulumi.dynamic.Resource stores for the shim, and the SDK registers its resources as that class does", () => {
    const seen = registrations();
    const byPulumi = seen.find((r) => r.name === "by-pulumi");
    const bySdk = seen.find((r) => r.name === "by-sdk");
    assert.ok(byPulumi && bySdk, JSON.stringify(seen.map((r) => r.name)));
    assert.equal(SHIM_TEXT, byPulumi.inputs.__provider,
      "provider/shimText.ts differs from what Pulumi's serializer makes of provider/shim.ts: copy the serializer's text there");
    assert.equal(bySdk.type, byPulumi.type);
    assert.equal(bySdk.type, "pulumi-nodejs:dynamic/talos-gate:Smoke");
    assert.deepEqual(bySdk.inputs, byPulumi.inputs);
  });
});
