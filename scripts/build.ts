// `npm run build` (and every `with-tools.sh --build`): an incremental compile of dist/ that ends exactly as a build
// from scratch would. tsc --incremental re-emits only what changed, so this also:
// - removes outputs whose source is gone (a deleted test would otherwise still run from dist/);
// - compiles from scratch when an output is missing (tsc trusts its .tsbuildinfo and would not re-emit it);
// - marks every output as built now, since tsc skips writing an unchanged file and prepack compares mtimes;
// - does nothing when nothing changed since the last build that passed (dist/.build-stamp): a no-op tsc still costs
//   ~7 CPU-seconds, paid by every `npm test` after `npm ci`, and twice per git install (npm runs prepare in the clone's
//   install, then pacote runs it again before packing).
// Two scopes: "all" (tsconfig.json: the package, its tests, benchmarks and scripts) for this repository, and
// "package" (tsconfig.package.json: only what the package ships) when npm builds talos-gate as another project's
// dependency (scripts/build-scope.ts decides): a git install then type-checks and emits less (tsc 23.8 → 18.4 CPU-s). The stamp
// records its scope, so a "package" build never passes for an "all" one.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { BuildScope, stampCovers, stampText } from "./build-scope";
import { bundleClientNode } from "./bundle";

const ROOT = path.join(__dirname, "..");
const DIST = path.join(ROOT, "dist");
const STAMP = path.join(DIST, ".build-stamp");
/** What else decides the output: compiler options, the installed dependencies' types, this script and the bundler. */
const BUILD_INPUTS = ["tsconfig.json", "tsconfig.package.json", "package.json", "package-lock.json", path.join("node_modules", ".package-lock.json"),
  path.join("scripts", "build.ts"), path.join("scripts", "build-scope.ts"), path.join("scripts", "bundle.ts")].map((f) => path.join(ROOT, f));
const VENDOR = path.join(DIST, "vendor") + path.sep;
const TSC = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
interface ScopeFiles {
  tsconfig: string;
  buildInfo: string;
  /** The folders its tsconfig includes (each `<dir>/**\/*.ts`). */
  sourceDirs: string[];
}

const SHIPPED_DIRS = ["provider", "sdk", "sim", "cli"];
const SCOPES: Record<BuildScope, ScopeFiles> = {
  all: { tsconfig: "tsconfig.json", buildInfo: ".tsbuildinfo", sourceDirs: [...SHIPPED_DIRS, "tests", "bench", "scripts"] },
  package: { tsconfig: "tsconfig.package.json", buildInfo: ".tsbuildinfo-package", sourceDirs: SHIPPED_DIRS },
};
const OUTPUT_EXTS = [".js", ".d.ts"];

function tsc(scope: ScopeFiles): void {
  const args = [TSC, "-p", path.join(ROOT, scope.tsconfig), "--incremental", "--tsBuildInfoFile", path.join(DIST, scope.buildInfo)];
  const r = spawnSync(process.execPath, args, { stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).map((f) => path.join(dir, f));
}

/** Source files (without .ts) by their output stem: provider/x.ts → dist/provider/x. */
function sourceStems(scope: ScopeFiles): Map<string, string> {
  const stems = new Map<string, string>();
  for (const dir of scope.sourceDirs) {
    for (const f of walk(path.join(ROOT, dir))) {
      if (f.endsWith(".ts") && !f.endsWith(".d.ts") && !f.includes(`${path.sep}node_modules${path.sep}`)) {
        stems.set(path.join(DIST, path.relative(ROOT, f)).slice(0, -3), f);
      }
    }
  }
  return stems;
}

function outputStem(f: string): string | undefined {
  const ext = OUTPUT_EXTS.find((e) => f.endsWith(e));
  return ext ? f.slice(0, -ext.length) : undefined;
}

/**
 * True when the last passing build covered `scope` and is newer than every source, every source folder (a deleted or
 * renamed source changes its folder's mtime) and every other build input. A build that failed wrote no stamp, so it
 * runs again.
 */
function upToDate(scope: BuildScope): boolean {
  if (!fs.existsSync(STAMP)) return false;
  if (!stampCovers(fs.readFileSync(STAMP, "utf8"), scope)) return false;
  const built = fs.statSync(STAMP).mtimeMs;
  const newer = (f: string) => fs.existsSync(f) && fs.statSync(f).mtimeMs > built;
  if (BUILD_INPUTS.some(newer)) return false;
  for (const dir of SCOPES[scope].sourceDirs) {
    const top = path.join(ROOT, dir);
    if (newer(top)) return false;
    for (const f of walk(top)) if (!f.includes(`${path.sep}node_modules${path.sep}`) && newer(f)) return false;
  }
  return true;
}

/** Builds `scope` unless the last passing build already covers it. */
export function build(scope: BuildScope = "all"): void {
  if (upToDate(scope)) return;
  const files = SCOPES[scope];
  const started = new Date(); // the stamp's time: a source saved while tsc runs is newer, so the next build takes it
  fs.mkdirSync(DIST, { recursive: true });
  fs.rmSync(STAMP, { force: true });
  tsc(files);
  let sources = sourceStems(files);
  if ([...sources.keys()].some((stem) => !fs.existsSync(`${stem}.js`))) {
    fs.rmSync(path.join(DIST, files.buildInfo), { force: true });
    tsc(files);
    sources = sourceStems(files);
  }
  const now = new Date();
  let removed = 0;
  // "all": the whole of dist/ but the bundles of dependencies (scripts/bundle.ts), which are not outputs of tsc;
  // "package": only its own folders, leaving a checkout's built tests as they are.
  const outputs = scope === "all" ? walk(DIST).filter((f) => !f.startsWith(VENDOR)) : files.sourceDirs.flatMap((dir) => walk(path.join(DIST, dir)));
  for (const f of outputs) {
    const stem = outputStem(f);
    if (stem === undefined || !fs.statSync(f).isFile()) continue;
    if (!sources.has(stem)) {
      fs.rmSync(f);
      removed++;
    } else if (fs.statSync(f).mtimeMs < fs.statSync(sources.get(stem)!).mtimeMs) {
      fs.utimesSync(f, now, now);
    }
  }
  if (removed > 0) process.stdout.write(`build: removed ${removed} stale output file(s) from dist/\n`);
  bundleClientNode();
  fs.writeFileSync(STAMP, stampText(started, scope));
  fs.utimesSync(STAMP, started, started);
}

if (require.main === module) build();
