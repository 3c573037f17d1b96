import * as assert from "node:assert/strict";
import * as crypto from "node:crypto";
import fc from "fast-check";
import type { NodeImageFacts } from "../../../provider/rollout/ports";
import { installerImage, nodeInstallerImage, parseImageRef, targetVersion, TalosError, versionFromImage } from "../../../provider/talos";
import { installImageOf } from "../../../provider/talos/facts";
import { checkFactoryHost, DEFAULT_SCHEMATIC, factoryHostOf } from "../../../provider/talos/image";

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

describe("talos: each node's own installer image (Omni's rule)", () => {
  const S = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";
  const X = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515";
  const facts = (o: Partial<NodeImageFacts> = {}): NodeImageFacts => ({ platform: "metal", extensions: [], secureBoot: false, ...o });

  it("<factory>/<platform>-installer[-secureboot]/<schematic>:<version> from Talos 1.10 on", () => {
    assert.equal(nodeInstallerImage("n", "v1.13.2", facts({ schematic: S })), `factory.talos.dev/metal-installer/${S}:v1.13.2`);
    assert.equal(nodeInstallerImage("n", "1.10.0", facts({ platform: "aws", schematic: S })), `factory.talos.dev/aws-installer/${S}:v1.10.0`);
    assert.equal(nodeInstallerImage("n", "v1.13.2", facts({ platform: "gcp", schematic: S, secureBoot: true })),
      `factory.talos.dev/gcp-installer-secureboot/${S}:v1.13.2`);
    assert.equal(nodeInstallerImage("n", "v2.0.0", facts({ schematic: S })), `factory.talos.dev/metal-installer/${S}:v2.0.0`, "not Omni's minor-only check");
  });

  it("no platform prefix below Talos 1.10 (the target decides, as in Omni)", () => {
    assert.equal(nodeInstallerImage("n", "v1.9.5", facts({ platform: "aws", schematic: S })), `factory.talos.dev/installer/${S}:v1.9.5`);
    assert.equal(nodeInstallerImage("n", "v1.10.0-beta.1", facts({ schematic: S, secureBoot: true })), `factory.talos.dev/installer-secureboot/${S}:v1.10.0-beta.1`);
  });

  it("a node without a schematic (and no extensions) gets the vanilla installer", () => {
    assert.equal(nodeInstallerImage("n", "v1.13.2", facts()), "ghcr.io/siderolabs/installer:v1.13.2");
  });

  it("issue 18 point 8: a non-metal node without a schematic gets Omni's image: its platform's installer of the default schematic (from 1.10)", () => {
    assert.equal(nodeInstallerImage("n", "v1.13.2", facts({ platform: "aws" })), `factory.talos.dev/aws-installer/${S}:v1.13.2`);
    assert.equal(nodeInstallerImage("n", "v1.9.5", facts({ platform: "aws" })), "ghcr.io/siderolabs/installer:v1.9.5");
    assert.equal(nodeInstallerImage("n", "v1.13.2", facts({ platform: "metal" })), "ghcr.io/siderolabs/installer:v1.13.2");
    assert.equal(DEFAULT_SCHEMATIC, crypto.createHash("sha256").update("customization: {}\n").digest("hex"), "Image Factory's id of the empty schematic");
  });

  it("issue 18 point 8: the factory host comes from the node's own install image when that is an Image Factory image; an explicit host wins", () => {
    const own = (installImage: string) => nodeInstallerImage("n", "v1.13.2", facts({ schematic: X, ...(factoryHostOf(installImage) ? { factoryHost: factoryHostOf(installImage) } : {}) }));
    assert.equal(own(`factory.corp.example/metal-installer/${S}:v1.12.0`), `factory.corp.example/metal-installer/${X}:v1.13.2`);
    assert.equal(own(`registry:5000/mirror/factory.talos.dev/installer-secureboot/${S}:v1.9.0@sha256:${"a".repeat(64)}`), `registry:5000/mirror/factory.talos.dev/metal-installer/${X}:v1.13.2`);
    assert.equal(own("ghcr.io/siderolabs/installer:v1.12.0"), `factory.talos.dev/metal-installer/${X}:v1.13.2`, "not a factory image: the default factory");
    assert.equal(own("registry.local/installer-nvidia:v1.12.0"), `factory.talos.dev/metal-installer/${X}:v1.13.2`);
    assert.equal(nodeInstallerImage("n", "v1.13.2", facts({ schematic: X, factoryHost: "factory.corp.example" }), { factoryHost: "f.example:443" }),
      `f.example:443/metal-installer/${X}:v1.13.2`);
    assert.equal(factoryHostOf(undefined), undefined);
    const config = "version: v1alpha1\nmachine:\n  token: s3cret\n  install:\n    image: f.example/installer/" + S + ":v1.12.0\n---\napiVersion: v1alpha1\nkind: HostnameConfig\n";
    assert.equal(installImageOf(config), `f.example/installer/${S}:v1.12.0`);
    assert.equal(installImageOf("kind: HostnameConfig\n---\n: [unbalanced"), undefined);
    assert.equal(checkFactoryHost("factory.example.com:5000/prefix"), "factory.example.com:5000/prefix");
    for (const bad of ["https://factory.talos.dev", "factory.talos.dev/", "a b", ""]) {
      assert.throws(() => checkFactoryHost(bad), /is not an Image Factory host; give the registry host/, bad);
    }
  });

  it("an explicit installer image wins over everything; an explicit schematic replaces each node's own", () => {
    assert.equal(nodeInstallerImage("n", "v1.13.2", facts({ schematic: S }), { installerImage: "registry.local/installer:v1.13.2" }), "registry.local/installer:v1.13.2");
    assert.equal(nodeInstallerImage("n", "v1.13.2", facts({ platform: "aws", schematic: S }), { schematic: X }), `factory.talos.dev/aws-installer/${X}:v1.13.2`);
    assert.equal(nodeInstallerImage("n", "v1.13.2", facts(), { schematic: X, factoryHost: "factory.internal:5000" }), `factory.internal:5000/metal-installer/${X}:v1.13.2`);
    assert.equal(nodeInstallerImage("n", "v1.13.2", facts({ extensions: ["nvidia"] }), { schematic: X }), `factory.talos.dev/metal-installer/${X}:v1.13.2`);
  });

  it("refuses what it cannot derive, naming the node and what to set", () => {
    assert.throws(() => nodeInstallerImage("w-7", "v1.13.2", facts({ extensions: ["iscsi-tools", "zfs"] })), (e: unknown) =>
      e instanceof TalosError && e.code === "CONFIG" && e.node === "w-7" &&
      /node w-7 runs system extensions \(iscsi-tools, zfs\) without an Image Factory schematic: set installerImage/.test(e.message));
    assert.throws(() => nodeInstallerImage("w-8", "v1.13.2", facts({ platform: "", schematic: S })), /node w-8 reports no platform/);
    // Neither the vanilla installer nor Image Factory's Sidero-signed one boots an image signed outside Image Factory.
    for (const platform of ["metal", "azure"]) {
      assert.throws(() => nodeInstallerImage("w-9", "v1.13.2", facts({ platform, secureBoot: true })), (e: unknown) =>
        e instanceof TalosError && e.code === "CONFIG" && e.node === "w-9" &&
        /node w-9 boots with SecureBoot without an Image Factory schematic: set installerImage/.test(e.message), platform);
    }
    assert.equal(nodeInstallerImage("w-9", "v1.13.2", facts({ secureBoot: true }), { schematic: S }), `factory.talos.dev/metal-installer-secureboot/${S}:v1.13.2`);
    assert.equal(nodeInstallerImage("w-9", "v1.13.2", facts({ secureBoot: true }), { installerImage: "r.local/installer-secureboot:v1.13.2" }), "r.local/installer-secureboot:v1.13.2");
    assert.throws(() => nodeInstallerImage("n", "latest", facts()), /"latest" is not a Talos version/);
    assert.throws(() => nodeInstallerImage("n", "v1.13.2", facts(), { schematic: "abc" }), /not an Image Factory schematic ID/);
  });

  it("property: the image installs the target, and carries the node's schematic unless one is chosen", () => {
    const ver = fc.tuple(fc.constant(1), fc.nat(20), fc.nat(20));
    const sch = fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: undefined });
    fc.assert(fc.property(ver, sch, sch, fc.constantFrom("metal", "aws", "azure"), fc.boolean(), ([a, b, c], own, chosen, platform, sb) => {
      const v = `v${a}.${b}.${c}`;
      if (sb && !own && !chosen) {
        assert.throws(() => nodeInstallerImage("n", v, facts({ platform, secureBoot: sb })), /boots with SecureBoot/);
        return;
      }
      const img = nodeInstallerImage("n", v, facts({ platform, schematic: own, secureBoot: sb }), chosen ? { schematic: chosen } : {});
      assert.equal(versionFromImage(img), v);
      // without a schematic: the default one on a platform of its own from 1.10 (Omni), else the vanilla installer
      const want = chosen ?? own ?? (platform !== "metal" && b >= 10 ? DEFAULT_SCHEMATIC : undefined);
      if (want) {
        assert.ok(img.includes(`/${want}:`));
        assert.equal(img.includes(`/${platform}-installer`), b >= 10);
        assert.equal(img.includes("installer-secureboot/"), sb);
      } else assert.equal(img, `ghcr.io/siderolabs/installer:${v}`);
    }));
  });
});
