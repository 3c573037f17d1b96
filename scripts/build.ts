// `npm run build` (and every `with-tools.sh --build`): an incremental compile of dist/ that ends exactly as a build
// from scratch would. tsc --incremental re-emits only what changed, so this also:
// - removes outputs whose source is gone (a deleted test would otherwise still run from dist/);
// - compiles from scratch when an output is missing (tsc trusts its .tsbuildinfo and would not re-emit it);
// - marks every output as built now, since tsc skips writing an unchanged file and prepack compares mtimes;
// - does nothing when nothing changed since the last build that passed (dist/.build-stamp): a no-op tsc still costs
//   ~7 CPU-seconds, paid by every `npm test` after `npm ci`, and twice per git install (npm runs prepare in the clone's
//   install, then pacote runs it again before packing).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { bundleClientNode } from "./bundle";

const ROOT = path.join(__dirname, "..");
const DIST = path.join(ROOT, "dist");
const BUILD_INFO = path.join(DIST, ".tsbuildinfo");
const STAMP = path.join(DIST, ".build-stamp");
/** What else decides the output: compiler options, the installed dependencies' types, this script and the bundler. */
const BUILD_INPUTS = ["tsconfig.json", "package.json", "package-lock.json", path.join("node_modules", ".package-lock.json"),
  path.join("scripts", "build.ts"), path.join("scripts", "bundle.ts")].map((f) => path.join(ROOT, f));
const VENDOR = path.join(DIST, "vendor") + path.sep;
const TSC = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
/** The folders tsconfig.json includes (each `<dir>/**\/*.ts`). */
const SOURCE_DIRS = ["provider", "sdk", "sim", "cli", "tests", "bench", "scripts"];
const OUTPUT_EXTS = [".js", ".d.ts"];

function tsc(): void {
  const r = spawnSync(process.execPath, [TSC, "-p", path.join(ROOT, "tsconfig.json"), "--incremental", "--tsBuildInfoFile", BUILD_INFO], { stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).map((f) => path.join(dir, f));
}

/** Source files (without .ts) by their output stem: provider/x.ts → dist/provider/x. */
function sourceStems(): Map<string, string> {
  const stems = new Map<string, string>();
  for (const dir of SOURCE_DIRS) {
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
 * True when the last passing build is newer than every source, every source folder (a deleted or renamed source
 * changes its folder's mtime) and every other build input. A build that failed wrote no stamp, so it runs again.
 */
function upToDate(): boolean {
  if (!fs.existsSync(STAMP)) return false;
  const built = fs.statSync(STAMP).mtimeMs;
  const newer = (f: string) => fs.existsSync(f) && fs.statSync(f).mtimeMs > built;
  if (BUILD_INPUTS.some(newer)) return false;
  for (const dir of SOURCE_DIRS) {
    const top = path.join(ROOT, dir);
    if (newer(top)) return false;
    for (const f of walk(top)) if (!f.includes(`${path.sep}node_modules${path.sep}`) && newer(f)) return false;
  }
  return true;
}

function main(): void {
  if (upToDate()) return;
  const started = new Date(); // the stamp's time: a source saved while tsc runs is newer, so the next build takes it
  fs.mkdirSync(DIST, { recursive: true });
  fs.rmSync(STAMP, { force: true });
  tsc();
  let sources = sourceStems();
  if ([...sources.keys()].some((stem) => !fs.existsSync(`${stem}.js`))) {
    fs.rmSync(BUILD_INFO, { force: true });
    tsc();
    sources = sourceStems();
  }
  const now = new Date();
  let removed = 0;
  for (const f of walk(DIST)) {
    if (f.startsWith(VENDOR)) continue; // bundles of dependencies (scripts/bundle.ts), not outputs of tsc
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
  fs.writeFileSync(STAMP, `${started.toISOString()}\n`);
  fs.utimesSync(STAMP, started, started);
}

main();
