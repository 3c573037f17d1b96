// Every talos-gate resource registers as pulumi.dynamic.Resource would register it, with the provider text written
// once (provider/shimText.ts) instead of serialized in each program. Derived here with Pulumi's own serializer, in a
// process of its own (Pulumi's mocks are global to a process).
import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { SHIM_TEXT } from "../../../provider/shimText";

interface Registration { type: string; name: string; inputs: Record<string, unknown> }

/** What the SDK and pulumi.dynamic.Resource register, seen through Pulumi's mocks. */
function registrations(): Registration[] {
  const dist = path.resolve(__dirname, "../../..");
  const script = `
    const pulumi = require("@pulumi/pulumi");
    const seen = [];
    pulumi.runtime.setMocks({
      newResource: (a) => { seen.push({ type: a.type, name: a.name, inputs: a.inputs }); return { id: a.name, state: a.inputs }; },
      call: () => ({}),
    }, "p", "s", true);
    const { shim } = require(${JSON.stringify(path.join(dist, "provider/shim"))});
    const { Smoke } = require(${JSON.stringify(path.join(dist, "sdk/smoke"))});
    new pulumi.dynamic.Resource(shim, "by-pulumi", { kind: "Smoke", message: "m" }, undefined, "talos-gate", "Smoke");
    new Smoke("by-sdk", { message: "m" });
    // Until both registered (a loaded machine takes seconds), at most 50 s.
    const until = Date.now() + 50_000;
    const done = () => seen.length >= 2 || Date.now() > until;
    const wait = setInterval(() => { if (done()) { clearInterval(wait); process.stdout.write(JSON.stringify(seen)); process.exit(0); } }, 20);
  `;
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { cwd: path.resolve(dist, ".."), encoding: "utf8", timeout: 60_000 }));
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
