import assert from "node:assert/strict";
import fc from "fast-check";
import {
  atLeast,
  atLeastMinor,
  compareVersions,
  isValidVersion,
  mustParseVersion,
  normalizeVersion,
  parseVersion,
  parsedVersionsHeld,
  sameVersion,
  sortVersions,
} from "../../provider/version";

describe("version", () => {
  it("parses versions with and without a leading v", () => {
    assert.deepEqual(parseVersion("v1.13.2"), { major: 1, minor: 13, patch: 2, prerelease: [], build: [] });
    assert.deepEqual(parseVersion("1.13.2"), { major: 1, minor: 13, patch: 2, prerelease: [], build: [] });
    assert.deepEqual(parseVersion("v1.13.0-beta.1+g1234"), {
      major: 1,
      minor: 13,
      patch: 0,
      prerelease: ["beta", 1],
      build: ["g1234"],
    });
  });

  it("rejects text that is not a semantic version", () => {
    for (const bad of ["", "v", "1.13", "v1.13.2.1", "latest", "v01.2.3", "1.2.3-", "1.2.3-01", "V1.2.3", "1.2.3+"]) {
      assert.equal(parseVersion(bad), undefined, bad);
      assert.equal(isValidVersion(bad), false, bad);
    }
  });

  it("mustParseVersion names the text and the expected form", () => {
    assert.throws(
      () => mustParseVersion("v1.13", "target version"),
      { message: 'invalid target version "v1.13": expected a semantic version such as "v1.13.2" or "1.13.0-beta.1"' },
    );
  });

  it("normalizes to a leading v without build metadata", () => {
    assert.equal(normalizeVersion("1.13.2"), "v1.13.2");
    assert.equal(normalizeVersion("v1.13.0-alpha.0+abc"), "v1.13.0-alpha.0");
  });

  it("orders by semver precedence, pre-releases below their release", () => {
    const ordered = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "v1.9.5",
      "v1.10.0",
      "1.12.3",
      "v1.13.2",
      "2.0.0",
    ];
    for (let i = 0; i < ordered.length; i++) {
      for (let j = 0; j < ordered.length; j++) {
        assert.equal(compareVersions(ordered[i], ordered[j]), Math.sign(i - j), `${ordered[i]} vs ${ordered[j]}`);
      }
    }
    assert.deepEqual(sortVersions(["v1.13.2", "1.9.5", "v1.10.0", "1.13.2-rc.0"]), ["1.9.5", "v1.10.0", "1.13.2-rc.0", "v1.13.2"]);
  });

  it("ignores build metadata and the leading v for equality", () => {
    assert.equal(sameVersion("v1.13.2", "1.13.2"), true);
    assert.equal(sameVersion("v1.13.2+a", "1.13.2+b"), true);
    assert.equal(sameVersion("v1.13.2", "v1.13.2-rc.0"), false);
    assert.equal(sameVersion(undefined, "v1.13.2"), false);
    assert.equal(sameVersion("weird", "weird"), true);
    assert.equal(sameVersion("weird", "v1.0.0"), false);
  });

  it("a text parsed again is not parsed anew (a rollout asks for the same few versions per machine and Node event), and the memo stays bounded", () => {
    const a = parseVersion("v1.13.2-beta.1+b.5");
    assert.equal(parseVersion("v1.13.2-beta.1+b.5"), a, "the same (frozen) result");
    assert.ok(Object.isFrozen(a) && Object.isFrozen(a!.prerelease) && Object.isFrozen(a!.build), "callers cannot change what others get");
    assert.equal(parseVersion("not a version"), undefined);
    assert.equal(parseVersion("not a version"), undefined);
    assert.equal(parseVersion(" v1.2.3 ")?.patch, 3, "padded text is parsed as before (trimmed)");
    for (let i = 0; i < 2000; i++) assert.equal(parseVersion(`v1.${i}.0`)?.minor, i);
    assert.ok(parsedVersionsHeld() <= 256, `the memo holds ${parsedVersionsHeld()} texts`);
    assert.deepEqual(parseVersion("v1.13.2-beta.1+b.5"), { major: 1, minor: 13, patch: 2, prerelease: ["beta", 1], build: ["b", "5"] });
  });

  it("atLeast and atLeastMinor", () => {
    assert.equal(atLeast("v1.13.0", "1.13.0"), true);
    assert.equal(atLeast("v1.13.0-beta.0", "1.13.0"), false);
    assert.equal(atLeastMinor("v1.13.0-beta.0", 1, 13), true);
    assert.equal(atLeastMinor("v1.12.9", 1, 13), false);
    assert.equal(atLeastMinor("v2.0.0", 1, 13), true);
    assert.equal(atLeastMinor("v0.14.0", 1, 13), false);
  });

  it("compareVersions is antisymmetric and consistent with sameVersion (property)", () => {
    const ident = fc.oneof(fc.nat({ max: 20 }).map(String), fc.constantFrom("alpha", "beta", "rc", "x-1"));
    const version = fc
      .tuple(fc.nat({ max: 3 }), fc.nat({ max: 15 }), fc.nat({ max: 5 }), fc.array(ident, { maxLength: 3 }), fc.boolean())
      .map(([a, b, c, pre, v]) => `${v ? "v" : ""}${a}.${b}.${c}${pre.length ? "-" + pre.join(".") : ""}`);
    fc.assert(
      fc.property(version, version, (a, b) => {
        assert.equal(compareVersions(a, b), -compareVersions(b, a) || 0);
        assert.equal(compareVersions(a, b) === 0, sameVersion(a, b));
      }),
    );
  });
});
