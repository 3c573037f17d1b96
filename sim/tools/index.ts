// The real binaries the sim runs (kube-apiserver, etcd, kubectl, kube-controller-manager, kube-scheduler), found
// wherever the user has them (resolve.ts), and the development tools of a clone (.tools/bin, scripts/toolchain.sh).
import * as fs from "node:fs";
import * as path from "node:path";
import { packageRoot } from "../../provider/package";
import { toolMsg, ToolsMissingError } from "./messages";
import { KUBE_TOOLS, KubeTool, kubeCacheDir, resolveKubeTools } from "./resolve";

export { packageRoot } from "../../provider/package";
export { KUBE_TOOLS, KubeTool, resolveKubeTools } from "./resolve";
export { ToolsMissingError } from "./messages";

/** The one command that gets the tools: `npm run toolchain` in a clone of the repository, else the package's CLI. */
export function toolchainCommand(): string {
  return fs.existsSync(path.join(packageRoot, "scripts", "with-tools.sh")) ? "npm run toolchain" : "npx talos-gate toolchain";
}

/** Absolute paths of the tools, or a ToolsMissingError naming every missing one and the command that gets them. */
export function requireKubeTools(tools: readonly KubeTool[] = KUBE_TOOLS): Record<string, string> {
  const resolutions = resolveKubeTools(tools);
  const missing = resolutions.filter((r) => !r.found);
  if (missing.length > 0) {
    throw new ToolsMissingError(toolMsg.missing(missing, toolMsg.lookedIn(kubeCacheDir()), toolchainCommand()), missing.map((r) => r.tool));
  }
  return Object.fromEntries(resolutions.map((r) => [r.tool, r.found!.path]));
}

/** Absolute path of one tool, or a ToolsMissingError naming it and the command that gets it. */
export function toolPath(name: KubeTool): string {
  return requireKubeTools([name])[name];
}

/** A development checkout's own tools (node, pulumi, the language host), linked by scripts/toolchain.sh. */
export const toolsBin = path.join(packageRoot, ".tools", "bin");

export function devToolPath(name: "pulumi" | "node"): string {
  const p = path.join(toolsBin, name);
  if (!fs.existsSync(p)) throw new Error(toolMsg.devToolMissing(name, toolsBin));
  return p;
}
