// The talos-gate package itself: its root directory and the package.json fields the code relies on. Found from this
// file's location, so it works the same from the sources, from dist/ in a clone, and from node_modules/talos-gate.
import * as fs from "node:fs";
import * as path from "node:path";
import { packageJsonMissing } from "./messages";

export interface PackageJson {
  name: string;
  version: string;
  engines: { node: string };
}

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, "package.json");
    // The name check skips any other package.json on the way up (a build output directory, a workspace root).
    if (fs.existsSync(file) && (JSON.parse(fs.readFileSync(file, "utf8")) as { name?: string }).name === "talos-gate") return dir;
    if (path.dirname(dir) === dir) throw new Error(packageJsonMissing(from));
  }
}

/** The package root: the repository in a clone, node_modules/talos-gate when installed. */
export const packageRoot: string = findRoot(__dirname);

export const packageJson: PackageJson = JSON.parse(fs.readFileSync(path.join(packageRoot, "package.json"), "utf8"));
