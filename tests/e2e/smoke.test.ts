// The chain works end to end with the real Pulumi CLI: a talos-gate resource, serialized as the thin shim, goes
// through preview, up, a no-op up, and destroy, and state holds neither absolute paths nor copied code.
import * as assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Smoke } from "../../sdk";
import { packageRoot } from "../../sim/tools";
import { inlineStack, pulumiEnv, stateText } from "../support/pulumi";

describe("e2e: smoke resource through the real pulumi CLI", function () {
  this.timeout(300000);

  it("previews, creates, is a no-op the second time, and destroys", async () => {
    const env = await pulumiEnv();
    const version = env.command.version?.toString() ?? "";
    process.stdout.write(`      pulumi CLI ${version}\n`);
    assert.match(version, /^v?3\.\d+\.\d+/);

    let message = "hello talos-gate";
    const stack = await inlineStack(env, "smoke", async () => {
      const s = new Smoke("smoke", { message });
      return { digest: s.digest };
    });

    const preview = await stack.preview({ diff: true });
    assert.equal(preview.changeSummary.create, 2, "stack + smoke resource to create");

    const up = await stack.up();
    assert.equal(up.summary.result, "succeeded", up.stdout + up.stderr);
    assert.equal(up.outputs.digest.value, createHash("sha256").update(message).digest("hex"));
    process.stdout.write(`      pulumi up: ${JSON.stringify(up.summary.resourceChanges)}\n`);

    const again = await stack.up();
    assert.deepEqual(again.summary.resourceChanges, { same: 2 }, "second up changes nothing");

    // What the provider put in state: the resource's inputs and outputs, including the serialized shim. (Pulumi's own
    // sourcePosition metadata records where the program registered resources; that is not ours to control.)
    const smoke = JSON.parse(await stateText(stack)).resources.find((r: { type: string }) => r.type.endsWith("Smoke"));
    const stored = JSON.stringify({ inputs: smoke.inputs, outputs: smoke.outputs });
    assert.ok(!stored.includes(packageRoot), "provider state holds no absolute path of the package");
    const provider = smoke.inputs.__provider as string;
    assert.ok(provider.includes('require("talos-gate/dist/provider/handlers")'), "shim requires handlers by package name");
    assert.ok(!/createHash|KindHandler|smokeHandler/.test(provider), "no implementation code is copied into state");
    assert.ok(provider.length < 4000, `serialized shim is small (${provider.length} bytes)`);
    process.stdout.write(`      serialized provider: ${provider.length} bytes\n`);

    message = "changed";
    const update = await stack.up();
    assert.deepEqual(update.summary.resourceChanges, { same: 1, update: 1 });

    const destroy = await stack.destroy();
    assert.equal(destroy.summary.result, "succeeded");
    assert.equal((await stack.exportStack()).deployment.resources?.length ?? 0, 0);
  });
});


