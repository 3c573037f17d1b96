import * as assert from "node:assert/strict";
import { compareVersions, needsStagedUpgrade, normalizeVersion, sameVersion, supportsLifecycleApi } from "../../../provider/talos";

describe("talos: versions", () => {
  it("normalizes with a tolerated v and missing parts", () => {
    assert.equal(normalizeVersion("1.13.2"), "v1.13.2");
    assert.equal(normalizeVersion("v1.13"), "v1.13.0");
    assert.equal(normalizeVersion("v1.13.0-beta.1+build5"), "v1.13.0-beta.1");
    assert.equal(normalizeVersion("latest"), undefined);
  });
  it("orders like semver, pre-releases first", () => {
    const sorted = ["v1.13.0", "v1.9.2", "v1.13.0-beta.1", "v1.13.0-alpha.10", "v1.13.0-alpha.2", "v1.12.10", "v1.12.9"]
      .sort(compareVersions);
    assert.deepEqual(sorted, ["v1.9.2", "v1.12.9", "v1.12.10", "v1.13.0-alpha.2", "v1.13.0-alpha.10", "v1.13.0-beta.1", "v1.13.0"]);
    assert.ok(sameVersion("1.13.2", "v1.13.2"));
    assert.ok(!sameVersion("v1.13.2", "v1.13.2-rc.1"));
  });
  it("picks the path like talosctl/Omni: the new API after 1.13.0-alpha.2; staged legacy upgrade on 1.9.0–1.9.2", () => {
    assert.ok(!supportsLifecycleApi("v1.12.9"));
    assert.ok(!supportsLifecycleApi("v1.13.0-alpha.2"));
    assert.ok(supportsLifecycleApi("v1.13.0-beta.1"));
    assert.ok(supportsLifecycleApi("v1.13.0"));
    assert.deepEqual(["v1.8.4", "v1.9.0", "v1.9.2", "v1.9.3"].map(needsStagedUpgrade), [false, true, true, false]);
  });
});
