import * as assert from "node:assert/strict";
import { needsStagedUpgrade, supportsLifecycleApi } from "../../../provider/talos";

describe("talos: version rules", () => {
  it("picks the path like talosctl/Omni: the new API after 1.13.0-alpha.2; staged legacy upgrade on 1.9.0–1.9.2", () => {
    assert.ok(!supportsLifecycleApi("v1.12.9"));
    assert.ok(!supportsLifecycleApi("v1.13.0-alpha.2"));
    assert.ok(supportsLifecycleApi("v1.13.0-alpha.10"));
    assert.ok(supportsLifecycleApi("v1.13.0-beta.1"));
    assert.ok(supportsLifecycleApi("v1.13.0"));
    assert.ok(!supportsLifecycleApi("not-a-version"));
    assert.deepEqual(["v1.8.4", "v1.9.0", "v1.9.2", "v1.9.3"].map(needsStagedUpgrade), [false, true, true, false]);
  });
});
