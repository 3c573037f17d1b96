// Which part of the project a build compiles (scripts/build.ts), and who asked for which (scripts/prepare.ts).
import * as fs from "node:fs";
import * as path from "node:path";

/** "all": the package, its tests, benchmarks and scripts (tsconfig.json); "package": what it ships (tsconfig.package.json). */
export type BuildScope = "all" | "package";

/**
 * "package" when npm builds talos-gate for another project, which needs only what the package ships (~23 % less
 * compile): pacote sets _PACOTE_NO_PREPARE_ for the install it runs in a git dependency's clone (npm 11's
 * node_modules/pacote/lib/git.js #prepareDir), and npm sets INIT_CWD to where it was started, which is then another
 * project's folder (pacote's own prepare before packing the clone, `--install-links`). Otherwise "all": should npm stop
 * giving either signal, the build is complete, only slower.
 */
export function prepareScope(env: NodeJS.ProcessEnv, root: string): BuildScope {
  if (env._PACOTE_NO_PREPARE_ !== undefined) return "package";
  const started = env.INIT_CWD;
  if (started && real(started) !== real(root)) return "package";
  return "all";
}

function real(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/** A build stamp's text: when the build started, and its scope. */
export function stampText(started: Date, scope: BuildScope): string {
  return `${started.toISOString()}\n${scope}\n`;
}

/** Whether the build a stamp records covers `wanted` ("all" covers both; a stamp from before scopes is "all"). */
export function stampCovers(stamp: string, wanted: BuildScope): boolean {
  return wanted === "package" || stamp.split("\n")[1] !== "package";
}
