// `npm pack` / `npm publish` guard (package.json "prepack"): the shipped dist/ must be the build of the current
// sources — every shipped .js has its .ts, no source is missing from dist/ or newer than its build — so a package is
// never published without its build, with a stale one, or with output of sources that no longer exist.
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.join(__dirname, "..");
const SHIPPED = ["cli", "provider", "sdk", "sim"];

function files(dir: string, ext: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(ext) && !f.endsWith(".d.ts")).sort();
}

const problems: string[] = [];
for (const top of SHIPPED) {
  const src = path.join(ROOT, top);
  const out = path.join(ROOT, "dist", top);
  const sources = new Set(files(src, ".ts").map((f) => f.replace(/\.ts$/, "")));
  const built = new Set(files(out, ".js").map((f) => f.replace(/\.js$/, "")));
  for (const f of built) if (!sources.has(f)) problems.push(`dist/${top}/${f}.js has no source ${top}/${f}.ts (stale build output)`);
  for (const f of sources) {
    const js = path.join(out, `${f}.js`);
    if (!built.has(f)) problems.push(`${top}/${f}.ts is not built (no dist/${top}/${f}.js)`);
    else if (fs.statSync(path.join(src, `${f}.ts`)).mtimeMs > fs.statSync(js).mtimeMs) problems.push(`${top}/${f}.ts changed after its build`);
  }
}
// The bundle provider/kube/k8s.ts loads (scripts/bundle.ts): without it the provider cannot start.
for (const f of ["client-node.js", "client-node.LICENSE"]) {
  if (!fs.existsSync(path.join(ROOT, "dist", "vendor", f))) problems.push(`dist/vendor/${f} is missing (scripts/bundle.ts writes it)`);
}
if (problems.length > 0) {
  // `npm pack --dry-run` only lists what would be packed: it warns; a real pack or publish stops.
  const dryRun = process.env.npm_config_dry_run === "true";
  process.stderr.write(`prepack: ${dryRun ? "warning: " : ""}dist/ is not the build of the sources; run 'npm run build':\n` +
    problems.slice(0, 20).map((p) => `  ${p}\n`).join("") + (problems.length > 20 ? `  ... and ${problems.length - 20} more\n` : ""));
  if (!dryRun) process.exit(1);
}
