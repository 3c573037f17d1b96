// Writes dist/vendor/client-node.js: @kubernetes/client-node (the exact devDependency) and what it imports, as one
// CommonJS file (provider/kube/k8s.ts says why), with its license beside it. Rebuilt only when the installed
// client-node or this script is newer than the bundle, so an incremental build stays fast.
import * as fs from "node:fs";
import * as path from "node:path";
import { buildSync } from "esbuild";

const ROOT = path.join(__dirname, "..");
const LIB = path.join(ROOT, "node_modules", "@kubernetes", "client-node");
const OUT_DIR = path.join(ROOT, "dist", "vendor");
const OUT = path.join(OUT_DIR, "client-node.js");

function newerThanBundle(...files: string[]): boolean {
  if (!fs.existsSync(OUT)) return true;
  const built = fs.statSync(OUT).mtimeMs;
  return files.some((f) => fs.statSync(f).mtimeMs > built);
}

export function bundleClientNode(): void {
  const pkg = path.join(LIB, "package.json");
  if (!newerThanBundle(pkg, __filename)) return;
  fs.mkdirSync(OUT_DIR, { recursive: true });
  buildSync({
    entryPoints: [path.join(LIB, JSON.parse(fs.readFileSync(pkg, "utf8")).main ?? "dist/index.js")],
    bundle: true,
    platform: "node",
    target: "node22",
    format: "cjs",
    outfile: OUT,
    // Whitespace and syntax only: names stay, so stack traces and error classes read as in the library.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    legalComments: "eof",
    logLevel: "warning",
  });
  fs.copyFileSync(path.join(LIB, "LICENSE"), path.join(OUT_DIR, "client-node.LICENSE"));
}

if (require.main === module) bundleClientNode();
