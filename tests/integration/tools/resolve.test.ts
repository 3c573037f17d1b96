// Where the sim's tools come from: TALOS_GATE_TOOLS, KUBEBUILDER_ASSETS, the user cache, PATH — in that order, each
// binary only at the pinned version unless TALOS_GATE_UNPINNED_TOOLS=1 — and what the user is told when one is missing.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubePins } from "../../../sim/tools/pins";
import { cacheRoot, kubeCacheDir, kubeToolSpec, resolveKubeTools, resolveWith } from "../../../sim/tools/resolve";
import { fakeKubeTools, fakeTool, tempDir } from "./helpers";

const CLI = path.join(__dirname, "..", "..", "..", "..", "bin", "talos-gate");

describe("integration: tools — where the sim's binaries come from", function () {
  this.timeout(60000);
  const pins = kubePins();

  function env(dirs: { tools?: string; assets?: string; cache: string; path?: string }, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return { HOME: dirs.cache, TALOS_GATE_CACHE: dirs.cache, PATH: dirs.path ?? "/nonexistent", TALOS_GATE_TOOLS: dirs.tools, KUBEBUILDER_ASSETS: dirs.assets, ...extra };
  }

  it("takes each tool from the first place that has it at the pinned version: TALOS_GATE_TOOLS, KUBEBUILDER_ASSETS, user cache, PATH", () => {
    const root = tempDir("resolve-order");
    const cache = path.join(root, "cache");
    const e = env({ tools: path.join(root, "tools"), assets: path.join(root, "assets"), cache, path: path.join(root, "path") });
    fakeTool(path.join(root, "tools"), "kube-apiserver", "v1.36.3");
    fakeTool(path.join(root, "assets"), "kube-apiserver", "v1.36.3");
    fakeTool(path.join(root, "assets"), "etcd", "v3.6.4");
    fakeKubeTools(kubeCacheDir(e, pins));
    fakeKubeTools(path.join(root, "path"));
    const where = Object.fromEntries(resolveKubeTools(undefined, e).map((r) => [r.tool, [r.found?.source, r.found?.version]]));
    assert.deepEqual(where, {
      "kube-apiserver": ["TALOS_GATE_TOOLS", "v1.36.3"],
      etcd: ["KUBEBUILDER_ASSETS", "v3.6.4"],
      kubectl: ["user cache", "v1.36.3"],
      "kube-controller-manager": ["user cache", "v1.36.3"],
      "kube-scheduler": ["user cache", "v1.36.3"],
    });
    fs.rmSync(kubeCacheDir(e, pins), { recursive: true });
    assert.deepEqual(resolveKubeTools(["kubectl"], e).map((r) => r.found?.source), ["PATH"]);
  });

  it("passes over a binary at another version, saying which and why, and takes the next one at the pinned version", () => {
    const root = tempDir("resolve-version");
    const e = env({ tools: path.join(root, "tools"), cache: path.join(root, "cache"), path: path.join(root, "path") });
    fakeTool(path.join(root, "tools"), "kube-apiserver", "v1.35.0");
    fakeTool(path.join(root, "path"), "kube-apiserver", "v1.36.3");
    fakeTool(path.join(root, "tools"), "etcd", "v3.5.21");
    const [api, etcd] = resolveKubeTools(["kube-apiserver", "etcd"], e);
    assert.equal(api.found?.path, path.join(root, "path", "kube-apiserver"));
    assert.deepEqual(api.passedOver, [{ path: path.join(root, "tools", "kube-apiserver"), source: "TALOS_GATE_TOOLS", reason: "v1.35.0, not the pinned v1.36.3" }]);
    assert.equal(etcd.found, undefined);
    assert.deepEqual(etcd.passedOver.map((p) => p.reason), ["v3.5.21, not the pinned v3.6.x"]);
  });

  it("accepts any etcd v3.6.x but only the exact Kubernetes patch release", () => {
    const spec = kubeToolSpec("etcd", pins);
    assert.equal(spec.wanted, "v3.6.x");
    assert.ok(spec.matches("v3.6.0") && spec.matches("v3.6.99"));
    assert.ok(!spec.matches("v3.5.21") && !spec.matches("v3.7.0"));
    const api = kubeToolSpec("kube-apiserver", pins);
    assert.ok(api.matches(pins.kubernetes));
    assert.ok(!api.matches("v1.36.2") && !api.matches("v1.36.4"));
  });

  it("with TALOS_GATE_UNPINNED_TOOLS=1 takes the first binary at any version and marks it unpinned", () => {
    const root = tempDir("resolve-unpinned");
    const e = env({ cache: path.join(root, "cache"), path: path.join(root, "path") }, { TALOS_GATE_UNPINNED_TOOLS: "1" });
    fakeTool(path.join(root, "path"), "kubectl", "v1.34.1");
    const [r] = resolveKubeTools(["kubectl"], e);
    assert.deepEqual([r.found?.version, r.found?.source, r.found?.unpinned], ["v1.34.1", "PATH", true]);
  });

  it("passes over a binary that does not answer its version query, and one that prints no version", () => {
    const root = tempDir("resolve-broken");
    const dir = path.join(root, "path");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "kube-scheduler"), "#!/bin/sh\necho 'usage: nothing here' >&2\nexit 3\n", { mode: 0o755 });
    fs.writeFileSync(path.join(dir, "kube-apiserver"), "#!/bin/sh\necho 'no version'\n", { mode: 0o755 });
    const [sched, api] = resolveKubeTools(["kube-scheduler", "kube-apiserver"], env({ cache: path.join(root, "cache"), path: dir }));
    assert.equal(sched.found, undefined);
    assert.match(sched.passedOver[0].reason, /^'--version' failed: Command failed/);
    assert.equal(api.passedOver[0].reason, `'--version' printed no version ("no version")`);
  });

  it("finds the user cache under TALOS_GATE_CACHE, else XDG_CACHE_HOME, else ~/.cache", () => {
    assert.equal(cacheRoot({ TALOS_GATE_CACHE: "/c/tg", XDG_CACHE_HOME: "/x", HOME: "/h" }), "/c/tg");
    assert.equal(cacheRoot({ XDG_CACHE_HOME: "/x", HOME: "/h" }), "/x/talos-gate");
    assert.equal(cacheRoot({ HOME: "/h" }), "/h/.cache/talos-gate");
    assert.equal(kubeCacheDir({ HOME: "/h" }, pins), `/h/.cache/talos-gate/bin/kube-${pins.module.hash}`);
  });

  it("a lone tool at the pinned version is found by the generic resolver (the dev toolchain's pulumi)", () => {
    const root = tempDir("resolve-generic");
    fakeTool(path.join(root, "path"), "pulumi", "v3.274.1");
    const r = resolveWith({ name: "pulumi", versionArgs: ["version"], wanted: "v3.274.1", matches: (v) => v === "v3.274.1" },
      { env: { PATH: path.join(root, "path") }, skip: [] });
    assert.equal(r.found?.source, "PATH");
  });

  it("talos-gate sim up without the tools names each missing one, what was passed over, and the one command that gets them", () => {
    const root = tempDir("resolve-simup");
    const pathDir = path.join(root, "path");
    fakeTool(pathDir, "kubectl", "v1.32.4");
    fakeTool(pathDir, "kube-apiserver", "v1.36.3");
    const r = spawnSync(process.execPath, [CLI, "sim", "up", "--dir", path.join(root, "sim")], {
      encoding: "utf8", timeout: 60000, env: { ...env({ cache: path.join(root, "cache"), path: `${pathDir}:/usr/bin:/bin` }), TALOS_GATE_TOOLS: "", KUBEBUILDER_ASSETS: "" },
    });
    assert.equal(r.status, 1, r.stderr);
    const cacheDir = path.join(root, "cache", "bin", `kube-${pins.module.hash}`);
    assert.equal(r.stderr.split("\n")[0],
      "talos-gate sim: missing etcd v3.6.x, kubectl v1.36.3, kube-controller-manager v1.36.3, kube-scheduler v1.36.3; " +
      `looked in $TALOS_GATE_TOOLS, $KUBEBUILDER_ASSETS, the user cache (${cacheDir}), PATH`);
    assert.ok(r.stderr.includes(`  passed over ${path.join(pathDir, "kubectl")} (PATH): v1.32.4, not the pinned v1.36.3\n`), r.stderr);
    assert.match(r.stderr, /\nget them with: npm run toolchain\n$/);
    assert.ok(!fs.existsSync(path.join(root, "sim", "sim.log")), "no background process was started");
  });
});
