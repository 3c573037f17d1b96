// The upgrade path at preview (issue 24.1): `check` reads the live nodes' versions and the Kubernetes the cluster runs
// (its control plane as Talos reads it, from the static pods' mirrors, and its kubelets) and refuses what Talos'
// installer would refuse, naming the node, both versions, the rule and a path that works; the plan shows every step.
import * as assert from "node:assert/strict";
import { check } from "../../../provider/handlers";
import { sim } from "../rollout/helpers";
import type { SimCluster } from "../../../sim/cluster";

/** What is written to stderr until `restore()` (warnings outside the engine go there: diagnostics.ts). */
function captureStderr(): { text(): string; restore(): void } {
  const write = process.stderr.write;
  let text = "";
  process.stderr.write = ((chunk: string | Uint8Array) => ((text += String(chunk)), true)) as typeof process.stderr.write;
  return { text: () => text, restore: () => void (process.stderr.write = write) };
}

describe("handlers: the upgrade path checked at preview (sim)", function () {
  this.timeout(120000);
  let s: SimCluster;
  const props = (over: Record<string, unknown>) => ({
    kind: "TalosUpgrade", clusterName: "paths", kubeconfig: s.kubeconfig, talosconfig: s.talosconfig,
    owner: "p/s/talos", version: "v1.13.2", healthchecks: [], ...over,
  });

  before(async () => {
    s = await sim({ controlPlanes: 1, workers: 1, version: "v1.10.8" });
  });
  after(async () => s?.stop());

  it("a skipped minor is refused: the node, both versions, the rule and a path that works", async () => {
    const r = await check({}, props({}));
    assert.deepEqual(r.failures, ["cp-1", "w-1"].map((n) => ({
      property: "version",
      reason: `node ${n}: v1.10.8 cannot be upgraded to v1.13.2 (Talos 1.13 upgrades from ≥ 1.11.0): go through v1.12.x first, e.g. \`path: ["v1.12.11"]\``,
    })));
  });

  it("with that path it previews, and the plan shows every step", async () => {
    const r = await check({}, props({ path: ["v1.12.11"] }));
    assert.equal(r.failures, undefined);
    assert.deepEqual(r.inputs?.plan, [
      "path step 1/2: → v1.12.11 (from the live cluster)",
      "upgrade 2 of 2 machines to v1.12.11 in 2 waves",
      "1. cp-1 (controlplane) v1.10.8 → v1.12.11",
      "2. w-1 (worker) v1.10.8 → v1.12.11",
      "installer ghcr.io/siderolabs/installer:v1.12.11: cp-1, w-1",
      "path step 2/2: → v1.13.2 (from v1.12.11)",
      "path step 2/2: → v1.13.2: every node, planned from the live cluster once the step before it is done",
      "upgrade 2 of 2 machines to v1.13.2 in 2 waves",
      "1. cp-1 (controlplane) v1.12.11 → v1.13.2",
      "2. w-1 (worker) v1.12.11 → v1.13.2",
    ]);
  });

  it("Kubernetes outside the target's range is refused: the control plane as Talos reads it (not the sim's binary), the kubelets", async () => {
    // Talos 1.9 supports Kubernetes 1.27–1.32; the cluster runs 1.34.1 (static pods and kubelets). The sim's real
    // kube-apiserver binary reports its own version (1.36.x), which is not what a Talos cluster runs.
    const r = await check({}, props({ version: "v1.9.6" }));
    assert.deepEqual(r.failures, [{
      property: "version",
      reason: "Kubernetes v1.34.1 (kube-apiserver on cp-1, kube-controller-manager on cp-1, kube-scheduler on cp-1; kubelets of cp-1, w-1) " +
        "is outside Talos 1.9's range 1.27.0 – 1.32.x: pick a Talos release that supports it, or upgrade Talos in steps through releases that do",
    }]);
  });

  it("a release newer than the rules talos-gate knows is allowed, with a warning on the resource", async () => {
    const warnings = captureStderr();
    let r;
    try {
      r = await check({}, props({ version: "v1.16.0" }));
    } finally {
      warnings.restore();
    }
    assert.equal(r.failures, undefined);
    assert.match(warnings.text(), /Talos v1\.16\.0 is newer than the upgrade rules talos-gate knows \(siderolabs\/talos@[0-9a-f]{40} .*\): its upgrade path and Kubernetes range are not checked/);
  });
});
