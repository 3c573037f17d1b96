// Upgrade paths (`path` + `version`): the input's check, and which step a cluster is in, read from its nodes' versions.
import * as assert from "node:assert/strict";
import { aheadOfStep, currentStep, pathSteps, stepLabel } from "../../../provider/rollout/path";
import { checkTalosUpgrade, parseTalosUpgrade, rolloutKey } from "../../../provider/resources/talosUpgrade";
import { UNKNOWN } from "../../../provider/handlers/common";

const upgrade = (over: Record<string, unknown>) => ({
  clusterName: "prod", kubeconfig: "k", talosconfig: "t", version: "v1.13.2", holdTimeout: "60m", nodeTimeout: "15m",
  machineNames: [], healthchecks: [], ...over,
});

describe("rollout: upgrade paths", () => {
  it("path is checked: versions, in the order they are rolled, each older than version", () => {
    assert.deepEqual(checkTalosUpgrade(upgrade({ path: ["v1.11.6", "1.12.11"] })), []);
    assert.deepEqual(checkTalosUpgrade(upgrade({ path: [UNKNOWN] })), [], "an unknown step waits for apply");
    assert.deepEqual(checkTalosUpgrade(upgrade({ path: "v1.12.11" })).map((f) => f.reason), [
      'path must be a list of Talos versions rolled before version, e.g. ["v1.12.11"], got "v1.12.11"',
    ]);
    assert.deepEqual(checkTalosUpgrade(upgrade({ path: ["v1.12", "v1.12.11", "v1.11.0"] })), [
      { property: "path", reason: 'path[0] must be a Talos version like "v1.12.11", got "v1.12"' },
      { property: "path", reason: "path[2] v1.11.0 is not newer than the step before it (v1.12.11); list the versions in the order they are rolled" },
    ]);
    assert.deepEqual(checkTalosUpgrade(upgrade({ path: ["v1.13.2"] })), [
      { property: "path", reason: "path[0] v1.13.2 is not older than version v1.13.2; path lists the versions rolled before version" },
    ]);
  });

  it("the spec holds the path normalised; omitted, the rollout key is what it was before the input existed", () => {
    assert.deepEqual(parseTalosUpgrade(upgrade({ path: ["1.12.11"] })).path, ["v1.12.11"]);
    const none = parseTalosUpgrade(upgrade({}));
    assert.deepEqual(none.path, []);
    assert.equal(rolloutKey(none), rolloutKey(parseTalosUpgrade(upgrade({ path: [] }))));
    assert.ok(!rolloutKey(none).includes("path"));
  });

  it("the step a cluster is in: the first step some node is below; done steps never again", () => {
    const steps = pathSteps(["1.12.11"], "v1.13.2");
    assert.deepEqual(steps, ["v1.12.11", "v1.13.2"]);
    assert.equal(currentStep(steps, ["v1.11.3", "v1.11.3"]), 0);
    assert.equal(currentStep(steps, ["v1.12.11", "v1.11.3"]), 0, "a node still below step 1");
    assert.equal(currentStep(steps, ["v1.11.3", undefined]), 0);
    assert.equal(currentStep(steps, ["v1.13.2", undefined, "v1.12.11"]), 1, "an unknown version never sends the cluster back to step 1");
    assert.equal(currentStep(steps, ["v1.12.11", "v1.12.11"]), 1);
    assert.equal(currentStep(steps, ["v1.13.2", "v1.12.11"]), 1, "killed in step 2: resumes in step 2");
    assert.equal(currentStep(steps, ["v1.13.2", "v1.13.2"]), 1, "all done: the last step (its run finds the cluster done)");
    assert.equal(currentStep(["v1.12.4"], ["v1.13.2"]), 0, "a revert is the last (only) step");
    assert.equal(stepLabel(["v1.11.6", "v1.12.11", "v1.13.2"], 1), "2/3: → v1.12.11");
    assert.deepEqual(aheadOfStep(steps, 0, [{ name: "w-1", talosVersion: "v1.11.3" }, { name: "w-2", talosVersion: "v1.13.0" }]), { name: "w-2", version: "v1.13.0" });
    assert.equal(aheadOfStep(steps, 1, [{ name: "w-2", talosVersion: "v1.13.5" }]), undefined, "the last step may go either way (a revert)");
  });
});
