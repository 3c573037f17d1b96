// The published package as a user meets it: `npm pack`, installed into a fresh Pulumi project (its own package.json,
// tsconfig.json and Pulumi.yaml, a program written like the README's, nothing pointing into this repository), the
// sim started from the installed bin, then `pulumi preview` (plan shown), `pulumi up` (Done) and
// `pulumi preview --expect-no-changes` with the real CLI. The tarball holds what users run and nothing else.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import YAML from "yaml";
import { packageJson, packageRoot } from "../../provider/package";
import { onFileEnd } from "../support/fixtures";
import { pulumiEnv, PulumiEnv } from "../support/pulumi";
import {
  COMPAT_SIM, configure, createUserProject, installInProject, mapSecrets, npmPack, Packed, run, SECRET_PLACEHOLDERS, userStack,
} from "../support/userProject";

interface CompatFixture {
  release: string;
  commit: string;
  sim: typeof COMPAT_SIM;
  program: string;
  deployment: Record<string, unknown>;
}

const { from: FROM, to: TO } = COMPAT_SIM;
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("e2e: the packed package in a fresh Pulumi project", function () {
  this.timeout(900000);
  let work: string;
  let project: string;
  let packed: Packed;
  let env: PulumiEnv;
  let stack: Stack;
  const sim = () => ({ kubeconfig: path.join(project, ".sim", "kubeconfig"), talosconfig: path.join(project, ".sim", "talosconfig") });
  /** `npx talos-gate ...` in the project: the installed bin. */
  const talosGate = (...args: string[]) => run("npx", ["--no", "--", "talos-gate", ...args], project, 240_000);
  const step = (what: string, t0: number) => process.stdout.write(`      ${what} in ${((Date.now() - t0) / 1000).toFixed(1)}s\n`);

  before(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-package-"));
    onFileEnd(async () => fs.rmSync(work, { recursive: true, force: true }));
    project = path.join(work, "infra");
    const t0 = Date.now();
    packed = npmPack(work);
    step(`npm pack: ${packed.files.length} files, ${packed.size} bytes (${packed.unpackedSize} unpacked)`, t0);
    env = await pulumiEnv();
  });

  it("the tarball holds the SDK, provider, CLI, sim, protos and the toolchain's Go module, and no tests, benchmarks or maps", () => {
    const stray = packed.files.filter((f) => !/^(bin\/talos-gate|dist\/(cli|provider|sdk|sim)\/.+\.js|dist\/sdk\/.+\.d\.ts|dist\/vendor\/client-node\.(js|LICENSE)|proto\/[^/]+\.proto|scripts\/go\/kube\/go\.(mod|sum)|README\.md|CHANGELOG\.md|LICENSE|package\.json)$/.test(f));
    assert.deepEqual(stray, [], "only what users run");
    // package.json says Apache-2.0, whose §4 asks that a copy of the license go with the work.
    assert.match(fs.readFileSync(path.join(packageRoot, "LICENSE"), "utf8"), /Apache License\s+Version 2\.0, January 2004/);
    assert.deepEqual(packed.files.filter((f) => /(^|\/)(tests|bench)\//.test(f) || f.endsWith(".map")), []);
    for (const f of ["bin/talos-gate", "dist/sdk/index.js", "dist/sdk/index.d.ts", "dist/provider/handlers/index.js", "dist/cli/main.js",
      "dist/sim/daemon.js", "dist/vendor/client-node.js", "dist/vendor/client-node.LICENSE", "proto/talos-wire-subset.proto", "scripts/go/kube/go.mod", "scripts/go/kube/go.sum", "CHANGELOG.md", "LICENSE"]) {
      assert.ok(packed.files.includes(f), `ships ${f}`);
    }
    // 0.1.0 shipped 478 files, 464 KB packed, most of them compiled tests and benchmarks; now ~215 files, ~730 KB.
    assert.ok(packed.files.length < 260, `${packed.files.length} files`);
    // The client-node bundle is ~370 KB of it; it replaces client-node's installed tree (~57 MB).
    assert.ok(packed.size < 900_000, `${packed.size} bytes packed`);
  });

  it("installs into a fresh project from the npm cache, and its types check under strict TypeScript", () => {
    let t0 = Date.now();
    createUserProject(project, packed.tarball);
    step("npm install", t0);
    const installed = path.join(project, "node_modules", "talos-gate");
    assert.ok(!fs.lstatSync(installed).isSymbolicLink(), "a copy of the tarball, not a link to this checkout");
    assert.equal(JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8")).version, packageJson.version);
    // The provider and the CLI run on the bundled client-node (provider/kube/k8s.ts): the package is not installed.
    assert.ok(!fs.existsSync(path.join(project, "node_modules", "@kubernetes", "client-node")), "client-node comes bundled, not installed");
    assert.ok(!fs.readFileSync(path.join(project, "package.json"), "utf8").includes(packageRoot), "no path into this repository");
    t0 = Date.now();
    const tsc = run(process.execPath, [path.join(project, "node_modules", "typescript", "bin", "tsc"), "--noEmit", "-p", "."], project);
    assert.equal(tsc.code, 0, tsc.out + tsc.err);
    step("tsc --noEmit", t0);
  });

  it("the installed CLI lists its commands; the demo, which runs the repository's quickstart, says it needs a clone", () => {
    const help = talosGate("--help");
    assert.equal(help.code, 0, help.err);
    for (const cmd of ["validate", "plan", "status", "stop", "sim", "toolchain"]) assert.match(help.out, new RegExp(`^  ${cmd} `, "m"));
    const demo = talosGate("demo");
    assert.deepEqual([demo.code, demo.err], [1, "talos-gate demo: the demo runs from a clone of the talos-gate repository (`npm ci && npm run demo` " +
      "there); in your own project, rehearse with `npx talos-gate sim up` and `pulumi up` (README: Install in your project)\n"]);
  });

  it("`talos-gate sim up` from the installed bin starts a cluster with the tools it finds", () => {
    const t0 = Date.now();
    const up = talosGate("sim", "up", ...COMPAT_SIM.args);
    onFileEnd(async () => void talosGate("sim", "down"));
    assert.equal(up.code, 0, up.out + up.err);
    assert.match(up.out, new RegExp(`simulated cluster up in [\\d.]+s \\(pid \\d+\\): 1 control plane, 1 worker, Talos ${esc(FROM)}`));
    assert.ok(fs.existsSync(sim().kubeconfig) && fs.existsSync(sim().talosconfig));
    step("sim up", t0);
  });

  it("`pulumi preview` shows the rollout plan", async () => {
    stack = await userStack(env, project, "dev");
    await configure(stack, sim(), TO);
    const t0 = Date.now();
    const preview = await stack.preview({ diff: true });
    assert.match(preview.stdout, new RegExp(esc(`1. cp-1 (controlplane) ${FROM} → ${TO}, gated by: cluster-prod-apiserver-ready`)));
    assert.match(preview.stdout, new RegExp(esc(`2. w-1 (worker) ${FROM} → ${TO}, gated by: cluster-prod-apiserver-ready`)));
    assert.equal(preview.changeSummary.create, 4, "stack, Cluster, Healthcheck, TalosUpgrade");
    step("pulumi preview", t0);
    // This first run type-checked the program as Pulumi does by default (ts-node), like the `tsc --noEmit` above; each
    // later run would repeat that same check of the same files (~5 CPU-s each), so they only transpile.
    stack.workspace.envVars.PULUMI_NODEJS_TRANSPILE_ONLY = "true";
  });

  it("`pulumi up` upgrades every node behind the healthcheck: Done", async () => {
    const t0 = Date.now();
    const up = await stack.up();
    assert.equal(up.summary.result, "succeeded", up.stdout + up.stderr);
    const status = up.outputs.status.value;
    assert.equal(status.phase, "Done");
    assert.equal(status.lastUpgradeVersion, TO);
    assert.deepEqual(status.machines.map((m: { name: string; to: string; state: string }) => [m.name, m.to, m.state]), [["cp-1", TO, "done"], ["w-1", TO, "done"]]);
    const st = talosGate("sim", "status");
    assert.match(st.out, new RegExp(`cp-1\\s+controlplane\\s+${esc(TO)}\\s+yes`));
    assert.match(st.out, new RegExp(`w-1\\s+worker\\s+${esc(TO)}\\s+yes`));
    step("pulumi up", t0);
  });

  it("`pulumi preview --expect-no-changes` passes right after", async () => {
    const t0 = Date.now();
    const again = await stack.preview({ expectNoChanges: true, diff: true });
    assert.deepEqual(again.changeSummary, { same: 4 });
    step("pulumi preview --expect-no-changes", t0);
  });

  it("installs from a git URL (git+file://) in place of the tarball: npm builds it (prepare), and its `pulumi up` of the same stack on the sim changes nothing", async () => {
    // A git repository of this checkout's files as they are now (committed or not), as a user's tag would hold them.
    const repo = path.join(work, "talos-gate.git");
    fs.mkdirSync(repo);
    const listed = run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], packageRoot);
    for (const f of listed.out.split("\0").filter((x) => x && fs.existsSync(path.join(packageRoot, x)))) {
      fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
      fs.copyFileSync(path.join(packageRoot, f), path.join(repo, f));
    }
    const git = (...args: string[]) => assert.equal(run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], repo).code, 0, `git ${args[0]}`);
    git("init", "-q");
    git("add", "-A");
    git("commit", "-q", "-m", "release");
    // The same project switches its dependency to the git tag, as a user pinning a commit would: npm clones it, installs
    // its devDependencies, runs prepare (the build) and packs it; the project's other dependencies stay.
    let t0 = Date.now();
    installInProject(project, `git+file://${repo}`);
    step("npm install git+file:// (clone, install, prepare: build, pack)", t0);
    const installed = path.join(project, "node_modules", "talos-gate");
    assert.ok(!fs.lstatSync(installed).isSymbolicLink(), "a built copy, not a link");
    assert.match(JSON.parse(fs.readFileSync(path.join(project, "package.json"), "utf8")).dependencies["talos-gate"], /^git\+file:/);
    assert.ok(fs.existsSync(path.join(installed, "dist", "provider", "handlers", "index.js")), "built by prepare");
    assert.ok(!fs.existsSync(path.join(installed, "tests")) && !fs.existsSync(path.join(installed, "dist", "tests")), "only the package's files");
    t0 = Date.now();
    const up = await stack.up();
    assert.equal(up.summary.result, "succeeded", up.stdout + up.stderr);
    assert.deepEqual(up.summary.resourceChanges, { same: 4 });
    assert.equal(up.outputs.status.value.phase, "Done");
    step("pulumi up from the git install", t0);
  });

  // CHANGELOG.md, "Compatibility": upgrading the package shows no diff on existing stacks. Each fixture is the state a
  // release left after the same run as above (scripts/compat-fixture.ts), so this sim is in the state it describes.
  const fixtures = fs.readdirSync(path.join(packageRoot, "tests", "fixtures", "compat")).filter((f) => f.endsWith(".json")).sort();
  it("every release's stack is checked: tests/fixtures/compat/ holds a fixture per release", () => {
    // An empty folder would silently check nothing; 0.1.0 is the first release (CHANGELOG.md).
    assert.ok(fixtures.includes("v0.1.0.json"), `compatibility fixtures: ${fixtures.join(", ") || "none"}`);
  });
  for (const file of fixtures) {
    it(`a stack written by talos-gate ${file.replace(/\.json$/, "")} previews with no changes after upgrading the package`, async () => {
      const fixture = JSON.parse(fs.readFileSync(path.join(packageRoot, "tests", "fixtures", "compat", file), "utf8")) as CompatFixture;
      assert.deepEqual(fixture.sim, COMPAT_SIM, "the fixture was made by the run this test repeats");
      // The release's program, in the same project (name, dependencies: this package) beside the e2e one.
      const dir = path.join(work, `compat-${fixture.release}`);
      fs.mkdirSync(dir);
      for (const f of ["package.json", "tsconfig.json", "Pulumi.yaml"]) fs.copyFileSync(path.join(project, f), path.join(dir, f));
      fs.symlinkSync(path.join(project, "node_modules"), path.join(dir, "node_modules"));
      fs.writeFileSync(path.join(dir, "index.ts"), fixture.program);
      const old = await userStack(env, dir, fixture.sim.stack);
      old.workspace.envVars.PULUMI_NODEJS_TRANSPILE_ONLY = "true"; // type-checked by `tsc --noEmit` above
      await configure(old, sim(), fixture.sim.to);
      const credentials = new Map<unknown, string>([
        [SECRET_PLACEHOLDERS.kubeconfig, fs.readFileSync(sim().kubeconfig, "utf8")],
        [SECRET_PLACEHOLDERS.talosconfig, fs.readFileSync(sim().talosconfig, "utf8")],
      ]);
      // The plaintext secrets are encrypted on import by this stack's own passphrase provider (its config's salt).
      const salt = (YAML.parse(fs.readFileSync(path.join(dir, `Pulumi.${fixture.sim.stack}.yaml`), "utf8")) as { encryptionsalt: string }).encryptionsalt;
      const deployment = { ...(mapSecrets(fixture.deployment, (p) => credentials.get(p)) as object), secrets_providers: { type: "passphrase", state: { salt } } };
      await old.importStack({ version: 3, deployment });
      const t0 = Date.now();
      const preview = await old.preview({ expectNoChanges: true, diff: true });
      assert.deepEqual(preview.changeSummary, { same: 4 });
      step(`pulumi preview --expect-no-changes of the ${fixture.release} stack`, t0);
    });
  }

  it("`talos-gate sim down` stops it", () => {
    const down = talosGate("sim", "down");
    assert.equal(down.code, 0, down.out + down.err);
    assert.match(down.out, /stopped \(pid \d+\); its data is removed/);
  });
});
