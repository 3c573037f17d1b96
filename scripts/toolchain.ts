// The development toolchain of a clone, after scripts/toolchain.sh has provided Node.js. Links into .tools/bin:
// - the kube tools the sim runs, found or built by sim/tools (the code behind `talos-gate toolchain`), so a
//   developer's shell under scripts/with-tools.sh has kubectl at the pinned version;
// - the Pulumi CLI at the version scripts/go/pulumi pins: from the user cache or PATH at that version, else built;
// - the Node.js language host (scripts/langhost: the upstream Go host is not served by the module proxy) and the
//   dynamic-provider plugin shipped in node_modules/@pulumi/pulumi.
// Strict by default: a tool from PATH is used only at the pinned version (TALOS_GATE_UNPINNED_TOOLS=1 accepts any).
// Prints each tool's version and where it came from (nothing when TOOLCHAIN_QUIET is set and nothing was missing).
import * as fs from "node:fs";
import * as path from "node:path";
import { sameVersion } from "../provider/version";
import { packageRoot, toolsBin } from "../sim/tools";
import { BuildError, goBuild, goReady, withBuildLock } from "../sim/tools/build";
import { toolMsg } from "../sim/tools/messages";
import { kubePins, pulumiPins } from "../sim/tools/pins";
import { packageJson } from "../provider/package";
import { cacheRoot, kubeToolSpec, resolveWith, ToolSpec } from "../sim/tools/resolve";
import { kubeToolchain, ToolRow, toolRows } from "../sim/tools/toolchain";

const quiet = !!process.env.TOOLCHAIN_QUIET;
const say = (line: string) => process.stdout.write(`${line}\n`);
const t0 = Date.now();

function link(target: string, name: string): void {
  const at = path.join(toolsBin, name);
  fs.rmSync(at, { force: true });
  fs.symlinkSync(target, at);
}

/** The Pulumi CLI: a hard link (or copy), not a symlink, because it looks for bundled plugins beside its own path. */
async function ensurePulumi(): Promise<{ row: ToolRow; built: boolean }> {
  const pins = pulumiPins();
  const spec: ToolSpec = { name: "pulumi", versionArgs: ["version"], wanted: pins.pulumi, matches: (v) => sameVersion(v, pins.pulumi) };
  const cacheDir = path.join(cacheRoot(), "bin", `pulumi-${pins.module.hash}`);
  const resolve = () => resolveWith(spec, { cacheDir, skip: [toolsBin] });
  let r = resolve();
  const built = !r.found;
  if (!r.found) {
    for (const line of toolMsg.table(toolRows([r]))) say(line);
    const { go, problem } = goReady(pins.go);
    if (!go) throw new BuildError(toolMsg.needsPulumi(pins.go, problem ?? "", pins.pulumi));
    await withBuildLock(cacheDir, say, async () => {
      if (resolve().found) return;
      say(toolMsg.buildStart(1, cacheDir, go.version, go.proxy));
      await goBuild([{
        tool: "pulumi", pkg: "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi", version: pins.pulumi, tags: "osusergo,grpcnotrace",
        ldflags: `-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=${pins.pulumi}`, moduleDir: pins.module.dir,
      }], cacheDir, { say, logsDir: path.join(cacheRoot(), "logs") });
    });
    r = resolve();
  }
  if (!r.found) throw new BuildError(toolMsg.table(toolRows([r])).join("\n"));
  const at = path.join(toolsBin, "pulumi");
  if (!fs.existsSync(at) || fs.lstatSync(at).isSymbolicLink() || !sameFile(at, r.found.path)) {
    fs.rmSync(at, { force: true });
    try {
      fs.linkSync(r.found.path, at);
    } catch {
      fs.copyFileSync(r.found.path, at);
      fs.chmodSync(at, 0o755);
    }
  }
  return { row: toolRows([r])[0], built };
}

function sameFile(a: string, b: string): boolean {
  const sa = fs.statSync(a), sb = fs.statSync(b);
  return (sa.ino === sb.ino && sa.dev === sb.dev) || (sa.size === sb.size && fs.readFileSync(a).equals(fs.readFileSync(b)));
}

/** The language host and the dynamic-provider plugin, both at the version of the installed @pulumi/pulumi. */
function ensurePlugins(): ToolRow[] {
  const sdk = path.join(packageRoot, "node_modules", "@pulumi", "pulumi");
  const dyn = path.join(sdk, "pulumi-resource-pulumi-nodejs");
  if (!fs.existsSync(dyn)) throw new BuildError("node_modules/@pulumi/pulumi is missing: run 'npm ci' first");
  const version = `v${(JSON.parse(fs.readFileSync(path.join(sdk, "package.json"), "utf8")) as { version: string }).version}`;
  const host = path.join(packageRoot, "scripts", "langhost", "pulumi-language-nodejs");
  link(host, "pulumi-language-nodejs");
  link(dyn, "pulumi-resource-pulumi-nodejs");
  return [
    { cells: ["pulumi-language-nodejs", version, "scripts/langhost", host] },
    { cells: ["pulumi-resource-pulumi-nodejs", version, "@pulumi/pulumi", dyn] },
  ];
}

async function main(): Promise<number> {
  fs.mkdirSync(toolsBin, { recursive: true });
  const kube = await kubeToolchain({ say, command: "npm run toolchain", quietWhenReady: quiet, noFinalTable: true });
  if (kube.some((r) => !r.found)) return 1;
  for (const r of kube) link(r.found!.path, r.tool);
  const pulumi = await ensurePulumi();
  const plugins = ensurePlugins();
  if (quiet && !pulumi.built) return 0;
  const kp = kubePins();
  say(`toolchain: pinned Kubernetes ${kp.kubernetes} and etcd ${kubeToolSpec("etcd", kp).wanted} (scripts/go/kube/go.mod), ` +
    `Pulumi ${pulumiPins().pulumi} (scripts/go/pulumi/go.mod), Node.js ${packageJson.engines.node} (package.json engines)`);
  const node: ToolRow = { cells: ["node", process.version, process.env.TALOS_GATE_NODE_SOURCE ?? "PATH", process.execPath] };
  for (const line of toolMsg.table([node, ...toolRows(kube), pulumi.row, ...plugins])) say(line);
  say(`toolchain: ready in ${toolMsg.duration(Date.now() - t0)} (${toolsBin})`);
  return 0;
}

main().then((code) => process.exit(code), (err: Error & { userFacing?: boolean }) => {
  process.stderr.write(`toolchain: FAILED: ${err.userFacing ? err.message : err.stack ?? err}\n`);
  process.exit(1);
});
