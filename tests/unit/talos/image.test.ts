import * as assert from "node:assert/strict";
import fc from "fast-check";
import { installerImage, parseImageRef, targetVersion, TalosError, versionFromImage } from "../../../provider/talos";

const SCHEMATIC = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";

describe("talos: installer image naming", () => {
  it("ghcr installer without a schematic; Image Factory forms with one", () => {
    assert.equal(installerImage({ version: "1.13.2" }), "ghcr.io/siderolabs/installer:v1.13.2");
    assert.equal(installerImage({ version: "v1.13.2", schematic: SCHEMATIC }), `factory.talos.dev/installer/${SCHEMATIC}:v1.13.2`);
    assert.equal(installerImage({ version: "v1.14.0", schematic: SCHEMATIC, platform: "metal" }), `factory.talos.dev/metal-installer/${SCHEMATIC}:v1.14.0`);
    assert.equal(installerImage({ version: "v1.14.0", schematic: SCHEMATIC, platform: "aws", secureBoot: true }),
      `factory.talos.dev/aws-installer-secureboot/${SCHEMATIC}:v1.14.0`);
    assert.equal(installerImage({ version: "v1.13.0-beta.1", schematic: SCHEMATIC, factoryHost: "factory.internal:5000" }),
      `factory.internal:5000/installer/${SCHEMATIC}:v1.13.0-beta.1`);
  });
  it("rejects a bad version or schematic with a message saying what to use", () => {
    assert.throws(() => installerImage({ version: "latest" }), /"latest" is not a Talos version; use the form v1\.13\.2/);
    assert.throws(() => installerImage({ version: "v1.13.2", schematic: "abc" }), /not an Image Factory schematic ID/);
  });
});

describe("talos: image references and the target version", () => {
  it("splits digests and ignores registry ports", () => {
    assert.deepEqual(parseImageRef("registry.local:5000/siderolabs/installer"), { repository: "registry.local:5000/siderolabs/installer", digest: undefined });
    assert.deepEqual(parseImageRef("registry.local:5000/installer:v1.13.2@sha256:abcd"), {
      repository: "registry.local:5000/installer", tag: "v1.13.2", digest: "sha256:abcd",
    });
    assert.deepEqual(parseImageRef("ghcr.io/siderolabs/installer@sha256:abcd"), { repository: "ghcr.io/siderolabs/installer", digest: "sha256:abcd" });
  });
  it("reads the version from an explicit tag", () => {
    assert.equal(versionFromImage("ghcr.io/siderolabs/installer:v1.13.2"), "v1.13.2");
    assert.equal(versionFromImage(`factory.talos.dev/metal-installer/${SCHEMATIC}:v1.14.0`), "v1.14.0");
    assert.equal(versionFromImage("registry:5000/installer:1.13.0-beta.1@sha256:ab"), "v1.13.0-beta.1");
    assert.equal(versionFromImage("registry:5000/installer"), undefined);
    assert.equal(versionFromImage("ghcr.io/siderolabs/installer:latest"), undefined);
    assert.equal(versionFromImage("ghcr.io/siderolabs/installer@sha256:abcd"), undefined);
  });
  it("latest / missing tag → 'target unknown' asking for an explicit version; explicit versions must agree with the tag", () => {
    for (const img of ["ghcr.io/siderolabs/installer:latest", "ghcr.io/siderolabs/installer", "registry:5000/installer@sha256:ab"]) {
      assert.throws(() => targetVersion(img), (e: unknown) =>
        e instanceof TalosError && e.code === "TARGET_UNKNOWN" && !e.retryable && /target Talos version is unknown; .*explicit/.test(e.message));
    }
    assert.equal(targetVersion("ghcr.io/siderolabs/installer:latest", "1.13.2"), "v1.13.2");
    assert.equal(targetVersion("ghcr.io/siderolabs/installer:v1.13.2", "v1.13.2"), "v1.13.2");
    assert.throws(() => targetVersion("ghcr.io/siderolabs/installer:v1.13.2", "v1.13.3"), /installs v1\.13\.2, but the target version is v1\.13\.3/);
  });
  it("property: the version of a built image is the version it was built for", () => {
    const ver = fc.tuple(fc.nat(5), fc.nat(30), fc.nat(30), fc.option(fc.constantFrom("alpha.1", "beta.2", "rc.0"), { nil: undefined }));
    const schematic = fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: undefined });
    const platform = fc.option(fc.constantFrom("metal", "aws", "gcp"), { nil: undefined });
    fc.assert(fc.property(ver, schematic, platform, fc.boolean(), ([a, b, c, pre], s, p, sb) => {
      const v = `v${a}.${b}.${c}${pre ? "-" + pre : ""}`;
      const img = installerImage({ version: v, schematic: s, platform: s ? p : undefined, secureBoot: sb && !!s });
      assert.equal(versionFromImage(img), v);
      assert.equal(versionFromImage(`${img}@sha256:${"0".repeat(64)}`), v);
      assert.equal(targetVersion(img), v);
    }));
  });
});
