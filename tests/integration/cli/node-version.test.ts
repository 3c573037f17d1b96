// An older Node.js stops at each way into the package — the SDK a program imports, the CLI, and the handlers the
// provider process loads through the shim — with one message naming the version needed. The older Node is this one
// with process.versions.node changed by a preload (the check reads nothing else), so the test runs anywhere.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { tempDir } from "../tools/helpers";

const ROOT = path.join(__dirname, "..", "..", "..", "..");

describe("integration: cli — an unsupported Node.js is named at every entry", function () {
  this.timeout(60000);
  const preload = path.join(tempDir("old-node"), "node20.js");
  fs.writeFileSync(preload, `Object.defineProperty(process.versions, "node", { value: "20.11.1" });\n`);
  const message = `talos-gate needs Node.js 22.12.0 or newer, but ${process.execPath} is Node.js v20.11.1: install Node.js 22 LTS ` +
    "(or newer) and put it first on PATH (Pulumi runs your program and the talos-gate provider with the `node` found on PATH)";

  function node(old: boolean, ...args: string[]) {
    const r = spawnSync(process.execPath, [...(old ? ["-r", preload] : []), ...args], { encoding: "utf8", timeout: 30000, cwd: ROOT });
    return { code: r.status, out: r.stdout, err: r.stderr };
  }

  it("the CLI prints the one line and exits 1", () => {
    const r = node(true, path.join(ROOT, "bin", "talos-gate"), "--help");
    assert.deepEqual([r.code, r.err, r.out], [1, `${message}\n`, ""]);
    assert.equal(node(false, path.join(ROOT, "bin", "talos-gate"), "--help").code, 0, "the same command on this Node works");
  });

  for (const [entry, module] of [["the SDK (import \"talos-gate\")", "dist/sdk"], ["the provider handlers the shim requires", "dist/provider/handlers"]]) {
    it(`${entry} throws UnsupportedNodeError with the message`, () => {
      const load = `require(${JSON.stringify(path.join(ROOT, module))})`;
      const r = node(true, "-e", `try { ${load}; } catch (e) { console.log(JSON.stringify([e.name, e.message])); process.exit(3); }`);
      assert.equal(r.code, 3, r.err);
      assert.deepEqual(JSON.parse(r.out), ["UnsupportedNodeError", message]);
      assert.equal(node(false, "-e", load).code, 0, "loads on this Node");
    });
  }
});
