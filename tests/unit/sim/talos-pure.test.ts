// Pure rules of the simulated Talos node, checked against the Talos releases they mirror.
import * as assert from "node:assert/strict";
import { parseSimArgs } from "../../../sim/state";
import { preserveSkipsEtcdChecks } from "../../../sim/talos/node";

describe("unit: talos sim rules", () => {
  it("issue 18 point 9: preserve skips Talos' etcd checks from v1.12.9, v1.13.4 and v1.14.0-alpha.2 (talos 89e307e58 and its backports)", () => {
    const table: [string, boolean][] = [
      ["v1.7.6", false], ["v1.11.5", false], ["v1.12.8", false], ["v1.12.9", true], ["v1.12.10", true],
      ["v1.13.0-alpha.2", false], ["v1.13.0", false], ["v1.13.3", false], ["v1.13.4", true], ["v1.13.9", true],
      ["v1.14.0-alpha.0", false], ["v1.14.0-alpha.1", false], ["v1.14.0-alpha.2", true], ["v1.14.0", true], ["v1.15.1", true],
    ];
    assert.deepEqual(table.map(([v]) => [v, preserveSkipsEtcdChecks(v)]), table);
  });
});

describe("unit: sim up options", () => {
  it("issue 24: --kubernetes sets the version the nodes start on (default v1.34.1); anything else is a usage error", () => {
    assert.equal(parseSimArgs([]).kubernetesVersion, "v1.34.1");
    assert.equal(parseSimArgs(["--kubernetes", "1.35.2"]).kubernetesVersion, "v1.35.2");
    assert.equal(parseSimArgs(["--kubernetes=v1.36.0-rc.1"]).kubernetesVersion, "v1.36.0-rc.1");
    assert.throws(() => parseSimArgs(["--kubernetes", "latest"]), /--kubernetes must be a Kubernetes version like v1\.35\.2, got "latest"/);
  });
});
