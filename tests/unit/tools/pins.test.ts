// The pins come from the wrapper modules' go.mod files (one place), parsed without Go.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { packageJson, packageRoot } from "../../../provider/package";
import { minimumNode, nodeProblem } from "../../../provider/nodeSupport";
import { kubePins, parseGoMod, pulumiPins } from "../../../sim/tools/pins";

describe("tools: pins from the wrapper modules", () => {
  it("parses the go directive and require lines in block and single-line form, ignoring replace and comments", () => {
    const mod = parseGoMod([
      "module local.invalid/x", "", "go 1.26.0", "",
      "replace k8s.io/api => k8s.io/api v0.36.3", "",
      "require k8s.io/kubernetes v1.36.3", "",
      "require (", "\tgo.etcd.io/etcd/server/v3 v3.6.8 // indirect", "\t// a comment", "\tgithub.com/a/b v0.1.0", ")", "",
      "tool (", "\tk8s.io/kubernetes/cmd/kubectl", ")",
    ].join("\n"));
    assert.equal(mod.go, "1.26.0");
    assert.deepEqual([...mod.requires], [
      ["k8s.io/kubernetes", "v1.36.3"], ["go.etcd.io/etcd/server/v3", "v3.6.8"], ["github.com/a/b", "v0.1.0"],
    ]);
  });

  it("reads Kubernetes, etcd and Go from scripts/go/kube/go.mod, hashed like the cache directory names", () => {
    const pins = kubePins();
    assert.match(pins.kubernetes, /^v1\.\d+\.\d+$/);
    assert.match(pins.etcd, /^v3\.\d+\.\d+$/);
    assert.match(pins.go, /^1\.\d+(\.\d+)?$/);
    const dir = path.join(packageRoot, "scripts", "go", "kube");
    const expected = createHash("sha256").update(fs.readFileSync(path.join(dir, "go.mod"))).update(fs.readFileSync(path.join(dir, "go.sum"))).digest("hex").slice(0, 16);
    assert.equal(pins.module.hash, expected);
    assert.match(pulumiPins().pulumi, /^v3\.\d+\.\d+$/);
  });
});

describe("engine: the Node.js versions talos-gate runs on", () => {
  it("reads the minimum from package.json engines", () => {
    assert.equal(packageJson.engines.node, ">=22.12.0");
    assert.equal(minimumNode(packageJson.engines.node), "22.12.0");
    assert.throws(() => minimumNode("^22"), /engines\.node must read ">=X\.Y\.Z", got "\^22"/);
  });

  it("accepts 22.12 and newer, refuses older ones naming the version needed and the executable", () => {
    for (const ok of ["22.12.0", "22.23.3", "24.1.0", "v25.0.0"]) assert.equal(nodeProblem(ok, ">=22.12.0", "/x/node"), undefined, ok);
    assert.equal(nodeProblem("20.20.2", ">=22.12.0", "/usr/bin/node"),
      "talos-gate needs Node.js 22.12.0 or newer, but /usr/bin/node is Node.js v20.20.2: install Node.js 22 LTS (or newer) " +
      "and put it first on PATH (Pulumi runs your program and the talos-gate provider with the `node` found on PATH)");
    assert.match(nodeProblem("22.11.0", ">=22.12.0", "/x/node")!, /needs Node\.js 22\.12\.0 or newer, but \/x\/node is Node\.js v22\.11\.0/);
  });
});
