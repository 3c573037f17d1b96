// The Node.js versions talos-gate runs on: package.json "engines" (the one place they are written), checked when the
// package is entered — the SDK, the CLI and the provider handlers import this module first. An older Node then stops
// with the version it needs instead of failing further in (require() of the ESM-only @kubernetes/client-node needs
// Node 22.12, Pulumi's SDK needs 22). Written to load on any Node that can parse ES2022.
import { enginesRangeUnsupported, nodeTooOld } from "./messages";
import { packageJson } from "./package";
import { atLeast } from "./version";

/** The lowest Node.js version of an engines range of the form ">=X.Y.Z" (the only form this package uses). */
export function minimumNode(range: string): string {
  const m = /^>=\s*v?(\d+\.\d+\.\d+)$/.exec(range.trim());
  if (!m) throw new Error(enginesRangeUnsupported(range));
  return m[1];
}

/** Why Node.js `version` cannot run talos-gate, or undefined when it can. */
export function nodeProblem(version: string, range: string, executable: string): string | undefined {
  const minimum = minimumNode(range);
  return atLeast(version, minimum) ? undefined : nodeTooOld(minimum, `v${version.replace(/^v/, "")}`, executable);
}

/** A failure meant for the user as it is (the CLI prints it without a stack trace). */
export class UnsupportedNodeError extends Error {
  readonly userFacing = true;
  constructor(message: string) {
    super(message);
    this.name = "UnsupportedNodeError";
  }
}

const problem = nodeProblem(process.versions.node, packageJson.engines.node, process.execPath);
if (problem) throw new UnsupportedNodeError(problem);
