// Locates the real binaries the sim and the tests run (.tools/bin, filled by scripts/toolchain.sh).
import * as fs from "node:fs";
import * as path from "node:path";

/** The package root (works from the sources and from dist/). */
export const packageRoot: string = (() => {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, "package.json"))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`talos-gate: cannot find package.json above ${__dirname}`);
    dir = up;
  }
  return dir;
})();

export const toolsBin = path.join(packageRoot, ".tools", "bin");

/** Absolute path of a tool in .tools/bin, or a clear error naming the tool and how to get it. */
export function toolPath(name: "kube-apiserver" | "etcd" | "kubectl" | "kube-controller-manager" | "kube-scheduler" | "pulumi" | "node"): string {
  const p = path.join(toolsBin, name);
  if (!fs.existsSync(p)) {
    throw new Error(`${name} is not installed in ${toolsBin}: run 'npm run toolchain' (builds it from Go modules, cached)`);
  }
  return p;
}
