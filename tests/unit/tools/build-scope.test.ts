// Which part of the project npm's prepare builds (scripts/build-scope.ts): only what the package ships when another
// project installs it (a git dependency, --install-links), everything in this repository; and a stamp of a
// package-only build never passes for a whole one.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { prepareScope, stampCovers, stampText } from "../../../scripts/build-scope";

describe("unit: the build's scope", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-scope-"));
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-user-"));
  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(project, { recursive: true, force: true });
  });

  it("prepare builds only the package for another project: pacote's git dependency install, or npm started elsewhere", () => {
    assert.equal(prepareScope({ _PACOTE_NO_PREPARE_: "git+file:///x", INIT_CWD: root }, root), "package");
    assert.equal(prepareScope({ INIT_CWD: project }, root), "package");
  });

  it("prepare builds everything in this repository (npm ci here), and when npm says nothing of where it started", () => {
    assert.equal(prepareScope({ INIT_CWD: root }, root), "all");
    assert.equal(prepareScope({ INIT_CWD: path.join(root, ".") + path.sep }, path.join(root, "..", path.basename(root))), "all");
    assert.equal(prepareScope({}, root), "all");
  });

  it("a package-only build's stamp does not stand for a whole build; a whole one, and one from before scopes, stands for both", () => {
    const at = new Date("2026-12-02T00:00:00Z");
    assert.equal(stampCovers(stampText(at, "package"), "package"), true);
    assert.equal(stampCovers(stampText(at, "package"), "all"), false);
    assert.equal(stampCovers(stampText(at, "all"), "all"), true);
    assert.equal(stampCovers(stampText(at, "all"), "package"), true);
    assert.equal(stampCovers(`${at.toISOString()}\n`, "all"), true);
  });
});
