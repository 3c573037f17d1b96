// Writes dist/vendor/client-node.js: @kubernetes/client-node (the exact devDependency) and what it imports, as one
// CommonJS file (provider/kube/k8s.ts says why), with its license beside it. Only what talos-gate uses: the values
// provider/kube/k8s.ts takes from the bundle (`lib.<name>`) are the bundle's exports, and esbuild leaves out the rest
// of the library (the other ~60 API groups): 2.4 MB instead of 5.5, ~0.2 CPU-s to load instead of ~0.3, in every
// provider process and `talos-gate` command. Rebuilt only when the installed client-node, k8s.ts or this script is
// newer than the bundle, so an incremental build stays fast.
import * as fs from "node:fs";
import * as path from "node:path";
import { buildSync } from "esbuild";
import { packageRoot } from "../provider/package";

// The checkout's root from scripts/ (the build runs this file with ts-node) and from dist/scripts/ (a test imports it).
const ROOT = packageRoot;
const LIB = path.join(ROOT, "node_modules", "@kubernetes", "client-node");
const OUT_DIR = path.join(ROOT, "dist", "vendor");
const OUT = path.join(OUT_DIR, "client-node.js");
const USES = path.join(ROOT, "provider", "kube", "k8s.ts");

/** The runtime values provider/kube/k8s.ts takes from the bundle. */
export function bundledNames(k8sSource = fs.readFileSync(USES, "utf8")): string[] {
  return [...new Set([...k8sSource.matchAll(/\blib\.(\w+)/g)].map((m) => m[1]!))].sort();
}

function newerThanBundle(...files: string[]): boolean {
  if (!fs.existsSync(OUT)) return true;
  const built = fs.statSync(OUT).mtimeMs;
  return files.some((f) => fs.statSync(f).mtimeMs > built);
}

export function bundleClientNode(): void {
  const pkg = path.join(LIB, "package.json");
  if (!newerThanBundle(pkg, USES, __filename)) return;
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const names = bundledNames();
  if (names.length === 0) throw new Error(`bundle: ${path.relative(ROOT, USES)} takes nothing from the bundle (no lib.<name>)`);
  buildSync({
    stdin: { contents: `export { ${names.join(", ")} } from "@kubernetes/client-node";\n`, resolveDir: ROOT, sourcefile: "client-node-entry.js", loader: "js" },
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
