// Talos' upgrade paths and Kubernetes ranges (provider/talos/compat.ts) on the table generated from siderolabs/talos'
// compatibility package: what its installer refuses, which path works, which Kubernetes a release supports.
import * as assert from "node:assert/strict";
import {
  checkUpgradePath, kubernetesRefusal, releaseRule, suggestPath, TALOS_COMPAT_SOURCE, TALOS_RELEASES, upgradeRefusal,
} from "../../../provider/talos/compat";

describe("talos: upgrade paths and Kubernetes ranges (Talos' compatibility package)", () => {
  it("the table is Talos' own, cited to the commit it came from", () => {
    assert.match(TALOS_COMPAT_SOURCE, /^siderolabs\/talos@[0-9a-f]{40} \(/);
    assert.deepEqual(releaseRule("v1.13.2"), {
      release: "1.13", minHostUpgrade: "1.11.0", maxHostDowngrade: "1.15.0", deniedHostUpgrade: [],
      minKubernetes: "1.31.0", maxKubernetes: "1.36.99", latestPatch: "v1.13.9",
    });
    assert.deepEqual(TALOS_RELEASES.map((r) => r.release).slice(0, 2), ["1.2", "1.3"], "every release the package has, in order");
  });

  it("can a node go from X to Y directly: as Talos' installer decides (core version only, pre-release ignored)", () => {
    assert.equal(upgradeRefusal("v1.11.0", "v1.13.2"), undefined);
    assert.equal(upgradeRefusal("v1.11.0-beta.0", "v1.13.0"), undefined, "Talos compares major.minor.patch only");
    assert.equal(upgradeRefusal("v1.12.4", "v1.12.11"), undefined, "a patch within a release");
    assert.equal(upgradeRefusal("v1.13.2", "v1.12.11"), undefined, "one release down");
    assert.deepEqual(upgradeRefusal("v1.10.8", "v1.13.2"), { kind: "tooOld", rule: "Talos 1.13 upgrades from ≥ 1.11.0", downgrade: false });
    assert.deepEqual(upgradeRefusal("v1.15.0", "v1.13.2"), { kind: "tooNew", rule: "Talos 1.13 can be installed over versions < 1.15.0 only", downgrade: true });
    assert.equal(upgradeRefusal("v1.15.1", "v1.16.0"), undefined, "a release the table does not know is not checked");
  });

  it("which path works: the newest release that accepts the node at each step", () => {
    assert.deepEqual(suggestPath("v1.10.8", "v1.13.2"), ["v1.12.11"]);
    assert.deepEqual(suggestPath("v1.9.0", "v1.13.2"), ["v1.11.6"], "1.12 does not take 1.9; 1.11 does, and 1.13 takes 1.11");
    assert.deepEqual(suggestPath("v1.8.0", "v1.13.2"), ["v1.10.9", "v1.12.11"]);
    assert.deepEqual(suggestPath("v1.12.4", "v1.13.2"), []);
    // Kubernetes 1.35 is too new for 1.11 (≤ 1.34.x): from 1.9 no stop supports it.
    assert.equal(suggestPath("v1.9.0", "v1.13.2", ["v1.35.0"]), undefined);
  });

  it("Kubernetes range of a release: min inclusive, max as Talos compares it", () => {
    assert.equal(kubernetesRefusal("v1.36.3", "v1.13.2"), undefined);
    assert.equal(kubernetesRefusal("v1.31.0", "v1.13.2"), undefined);
    assert.deepEqual(kubernetesRefusal("v1.36.3", "v1.12.11"), { tooNew: true, release: "1.12", min: "1.30.0", max: "1.35.99" });
    assert.deepEqual(kubernetesRefusal("v1.30.5", "v1.13.2"), { tooNew: false, release: "1.13", min: "1.31.0", max: "1.36.99" });
  });

  it("a cluster's path: the node, both versions, the rule and a path that works; Kubernetes out of range; an unknown release warned", () => {
    const k8s = [{ where: "the API server", version: "v1.34.1" }];
    assert.deepEqual(checkUpgradePath({ nodes: [{ name: "cp-1", version: "v1.10.8" }, { name: "w-1", version: "v1.12.4" }], kubernetes: k8s, steps: ["v1.13.2"] }), {
      failures: ["node cp-1: v1.10.8 cannot be upgraded to v1.13.2 (Talos 1.13 upgrades from ≥ 1.11.0): go through v1.12.x first, e.g. `path: [\"v1.12.11\"]`"],
      warnings: [],
    });
    assert.deepEqual(checkUpgradePath({ nodes: [{ name: "cp-1", version: "v1.10.8" }], kubernetes: k8s, steps: ["v1.12.11", "v1.13.2"] }), { failures: [], warnings: [] });
    assert.deepEqual(checkUpgradePath({ nodes: [{ name: "cp-1", version: "v1.12.4" }], kubernetes: [{ where: "the API server", version: "v1.30.2" }], steps: ["v1.13.2"] }).failures, [
      "Kubernetes v1.30.2 (the API server) is outside Talos 1.13's range 1.31.0 – 1.36.x: upgrade Kubernetes first (talosctl upgrade-k8s), then Talos",
    ]);
    assert.deepEqual(checkUpgradePath({ nodes: [{ name: "w-1", version: "v1.11.2" }], kubernetes: [{ where: "kubelets of w-1", version: "v1.36.0" }], steps: ["v1.12.11", "v1.13.2"] }).failures, [
      "Kubernetes v1.36.0 (kubelets of w-1) is outside Talos 1.12's range 1.30.0 – 1.35.x: pick a Talos release that supports it, or upgrade Talos in steps through releases that do",
    ]);
    assert.deepEqual(checkUpgradePath({ nodes: [{ name: "w-2", version: "v1.13.0" }], kubernetes: [], steps: ["v1.12.11", "v1.13.2"] }).failures, [
      "node w-2 runs v1.13.0, newer than the path step v1.12.11; a rollout never takes a node back: drop v1.12.11 from path",
    ]);
    const unknown = checkUpgradePath({ nodes: [{ name: "w-1", version: "v1.15.1" }], kubernetes: k8s, steps: ["v1.16.0"] });
    assert.deepEqual(unknown.failures, []);
    assert.equal(unknown.warnings.length, 1);
    assert.match(unknown.warnings[0], /^Talos v1\.16\.0 is newer than the upgrade rules talos-gate knows \(siderolabs\/talos@[0-9a-f]{40} .*not checked$/);
  });
});
