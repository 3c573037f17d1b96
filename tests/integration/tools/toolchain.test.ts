// `talos-gate toolchain`: builds only what is missing into the user cache with progress, says exactly what it needs
// when it cannot build, links prebuilt binaries on request, and never lets two runs build into one directory at once.
// A stand-in `go` (helpers.ts) keeps these tests to seconds; the real build is what `npm run toolchain` runs.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { BuildError, goBuild, goReady, kubeBuildStep, withBuildLock } from "../../../sim/tools/build";
import { kubePins } from "../../../sim/tools/pins";
import { kubeCacheDir } from "../../../sim/tools/resolve";
import { kubeToolchain } from "../../../sim/tools/toolchain";
import { fakeGo, fakeKubeTools, fakeTool, tempDir } from "./helpers";

const CLI = path.join(__dirname, "..", "..", "..", "..", "bin", "talos-gate");

function cli(args: string[], env: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60000, env: { TALOS_GATE_TOOLS: "", KUBEBUILDER_ASSETS: "", ...env } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("integration: tools — talos-gate toolchain", function () {
  this.timeout(120000);
  const pins = kubePins();

  it("builds only the missing tools into the user cache, step by step, with the pinned version stamped in", async () => {
    const root = tempDir("toolchain-build");
    const env: NodeJS.ProcessEnv = { HOME: root, TALOS_GATE_CACHE: path.join(root, "cache"), PATH: `${fakeGo(path.join(root, "go"))}:/usr/bin:/bin`, FAKE_GO_CALLS: path.join(root, "calls") };
    fakeTool(path.join(root, "assets"), "kube-apiserver", "v1.36.3");
    fakeTool(path.join(root, "assets"), "etcd", "v3.6.4");
    fakeTool(path.join(root, "assets"), "kubectl", "v1.36.3");
    env.KUBEBUILDER_ASSETS = path.join(root, "assets");
    const lines: string[] = [];
    const res = await kubeToolchain({ say: (l) => lines.push(l), command: "npx talos-gate toolchain", env });
    const cacheDir = kubeCacheDir(env, pins);
    assert.deepEqual(res.map((r) => [r.tool, r.found?.source]), [
      ["kube-apiserver", "KUBEBUILDER_ASSETS"], ["etcd", "KUBEBUILDER_ASSETS"], ["kubectl", "KUBEBUILDER_ASSETS"],
      ["kube-controller-manager", "user cache"], ["kube-scheduler", "user cache"],
    ]);
    const text = lines.join("\n");
    assert.match(text, /kube-controller-manager\s+missing\s+wanted v1\.36\.3/);
    assert.ok(text.includes(`building 2 tools into ${cacheDir} with go1.26.8 (GOPROXY=https://proxy.golang.org,direct)`), text);
    assert.ok(text.includes(`[1/2] kube-controller-manager: go build k8s.io/kubernetes/cmd/kube-controller-manager (${pins.kubernetes})`), text);
    assert.match(text, /\[1\/2\] kube-controller-manager: built in \d+s/);
    assert.match(text, /\[2\/2\] kube-scheduler: built in \d+s/);
    assert.match(text, /kube-scheduler\s+v1\.36\.3\s+user cache\s+\S+kube-scheduler/);
    assert.match(text, /talos-gate toolchain: ready in \d+s/);
    const builds = fs.readFileSync(env.FAKE_GO_CALLS!, "utf8").split("\n").filter((l) => l.startsWith("build"));
    assert.equal(builds.length, 2, "only the two missing tools were built");
    assert.ok(builds.every((b) => b.includes(`-X k8s.io/component-base/version.gitVersion=${pins.kubernetes}`) && b.includes("-tags=notest")), builds.join("\n"));
    assert.deepEqual(fs.readdirSync(cacheDir).sort(), ["kube-controller-manager", "kube-scheduler"], "no temporary files left");

    // Warm: nothing to build, nothing printed beyond the table.
    const again: string[] = [];
    await kubeToolchain({ say: (l) => again.push(l), command: "npx talos-gate toolchain", env });
    assert.equal(fs.readFileSync(env.FAKE_GO_CALLS!, "utf8").split("\n").filter((l) => l.startsWith("build")).length, 2);
    assert.match(again.at(-1)!, /every tool found/);
  });

  it("a failed build names the step, the command and the log's last lines, and keeps what was built before it", async () => {
    const root = tempDir("toolchain-fail");
    const env: NodeJS.ProcessEnv = { HOME: root, TALOS_GATE_CACHE: path.join(root, "cache"), PATH: `${fakeGo(path.join(root, "go"))}:/usr/bin:/bin`, FAKE_GO_FAIL: "kubectl" };
    const lines: string[] = [];
    const err = await kubeToolchain({ say: (l) => lines.push(l), command: "npx talos-gate toolchain", env }).then(() => undefined, (e: Error) => e);
    assert.ok(err instanceof BuildError, String(err));
    const log = path.join(root, "cache", "logs", "kubectl.log");
    assert.match(err.message, new RegExp(`^\\[3/5\\] kubectl: FAILED after \\d+s: go build -trimpath -ldflags=.* -o \\S+ k8s\\.io/kubernetes/cmd/kubectl \\(exit 2\\); last lines of ${log.replace(/[.]/g, "\\.")}:\n`));
    assert.ok(err.message.endsWith("compile error line 40"), err.message);
    assert.ok(err.message.includes("compile error line 11\n") && !err.message.includes("compile error line 10\n"), "the last 30 lines");
    const cacheDir = kubeCacheDir(env, pins);
    assert.deepEqual(fs.readdirSync(cacheDir).sort(), ["etcd", "kube-apiserver"], "steps 1-2 kept, no half-built kubectl");
  });

  it("without Go says what it needs: Go >= the go.mod version with a module proxy, or where to put prebuilt binaries", () => {
    const root = tempDir("toolchain-nogo");
    const r = cli(["toolchain"], { HOME: root, TALOS_GATE_CACHE: path.join(root, "cache"), PATH: "/nonexistent" });
    assert.equal(r.code, 1);
    const cacheDir = path.join(root, "cache", "bin", `kube-${pins.module.hash}`);
    assert.equal(r.err, [
      "talos-gate toolchain: cannot build kube-apiserver, etcd, kubectl, kube-controller-manager, kube-scheduler: Go is not installed (no `go` on PATH). Either:",
      `  - install Go ${pins.go} or newer (https://go.dev/dl/) with a Go module proxy reachable (GOPROXY, default`,
      "    https://proxy.golang.org), then run: npm run toolchain   (a cold build takes 10-25 minutes on 2 cores), or",
      "  - put prebuilt binaries at the pinned versions in a directory and set TALOS_GATE_TOOLS=<dir>, or link them",
      `    into the user cache with \`talos-gate toolchain --from <dir>\`, or copy them into ${cacheDir}`,
      "    (setup-envtest's KUBEBUILDER_ASSETS works for kube-apiserver, etcd and kubectl).",
      "",
    ].join("\n"));
  });

  it("refuses a Go older than the wrapper module needs, and a Go whose module proxy is off", () => {
    const root = tempDir("toolchain-oldgo");
    assert.equal(goReady("1.26.0", { PATH: fakeGo(path.join(root, "old"), { version: "go1.25.3" }) }).problem,
      "go1.25.3 is older than the Go 1.26.0 the wrapper module needs");
    assert.equal(goReady("1.26.0", { PATH: fakeGo(path.join(root, "off"), { proxy: "off" }) }).problem,
      "GOPROXY is 'off', so the Go modules cannot be downloaded");
    assert.deepEqual(goReady("1.26.0", { PATH: fakeGo(path.join(root, "ok"), { version: "go1.26.8" }) }).go,
      { version: "go1.26.8", proxy: "https://proxy.golang.org,direct" });
  });

  it("--check only reports (exit 1 when a tool is missing); --from links pinned-version binaries into the user cache", () => {
    const root = tempDir("toolchain-from");
    const env = { HOME: root, TALOS_GATE_CACHE: path.join(root, "cache"), PATH: "/nonexistent" };
    const check = cli(["toolchain", "--check"], env);
    assert.equal(check.code, 1);
    assert.match(check.out, /talos-gate toolchain: 5 missing; get them with: npm run toolchain\n$/);

    const prebuilt = fakeKubeTools(path.join(root, "prebuilt"));
    fakeTool(prebuilt, "kube-scheduler", "v1.30.0");
    const from = cli(["toolchain", "--from", prebuilt], env);
    assert.equal(from.code, 1, "kube-scheduler is still missing");
    const cacheDir = path.join(root, "cache", "bin", `kube-${pins.module.hash}`);
    assert.ok(from.out.includes(`  linked kube-apiserver: ${cacheDir}/kube-apiserver -> ${prebuilt}/kube-apiserver\n`), from.out);
    assert.ok(from.out.includes(`  kube-scheduler: not taken from ${prebuilt}: v1.30.0, not the pinned v1.36.3\n`), from.out);
    assert.equal(fs.readlinkSync(path.join(cacheDir, "etcd")), path.join(prebuilt, "etcd"));

    fakeTool(prebuilt, "kube-scheduler", "v1.36.3");
    assert.equal(cli(["toolchain", "--from", prebuilt], env).code, 0);
    const ok = cli(["toolchain", "--check"], env);
    assert.equal(ok.code, 0, ok.out + ok.err);
    assert.match(ok.out, /kube-scheduler\s+v1\.36\.3\s+user cache/);
  });

  it("prints a heartbeat while a step runs", async () => {
    const root = tempDir("toolchain-beat");
    const lines: string[] = [];
    await goBuild([kubeBuildStep("kube-scheduler", pins)], path.join(root, "out"), {
      say: (l) => lines.push(l), logsDir: path.join(root, "logs"), heartbeatMs: 50,
      env: { PATH: `${fakeGo(path.join(root, "go"))}:/usr/bin:/bin`, FAKE_GO_SLEEP: "1" },
    });
    assert.ok(lines.some((l) => /^\[1\/1\] kube-scheduler: building, \d+s so far$/.test(l)), lines.join("\n"));
  });

  it("a second run waits for the lock a live run holds, takes over a stale one, and gives up after its bound", async () => {
    const root = tempDir("toolchain-lock");
    const dir = path.join(root, "bin", "kube-x");
    const holder = spawn("sleep", ["30"]);
    try {
      fs.mkdirSync(path.dirname(dir), { recursive: true });
      fs.writeFileSync(`${dir}.lock`, String(holder.pid));
      const said: string[] = [];
      let ran = false;
      const waiting = withBuildLock(dir, (l) => said.push(l), async () => { ran = true; });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(ran, false, "waits while the holder lives");
      assert.deepEqual(said, [`talos-gate toolchain: another toolchain run (pid ${holder.pid}) is building into ${dir}; waiting for it`]);
      holder.kill();
      await waiting;
      assert.equal(ran, true);
      assert.ok(!fs.existsSync(`${dir}.lock`), "released");

      fs.writeFileSync(`${dir}.lock`, "999999999");
      assert.equal(await withBuildLock(dir, () => undefined, async () => "took over"), "took over");

      const live = spawn("sleep", ["30"]);
      fs.writeFileSync(`${dir}.lock`, String(live.pid));
      const late = await withBuildLock(dir, () => undefined, async () => "ran", 100).then(() => undefined, (e: Error) => e);
      live.kill();
      assert.match(String(late), new RegExp(`another toolchain run \\(pid ${live.pid}\\) still holds ${dir} after 0s; stop it or remove ${dir}\\.lock`));
    } finally {
      holder.kill();
    }
  });
});
