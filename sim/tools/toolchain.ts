// `talos-gate toolchain` (and the kube part of `npm run toolchain`): finds each kube tool the sim runs, links
// prebuilt ones from a directory into the user cache on request, builds the missing ones with Go into the user cache,
// and prints each tool's version and where it came from.
import * as fs from "node:fs";
import * as path from "node:path";
import { BuildError, goBuild, goReady, kubeBuildStep, withBuildLock } from "./build";
import { toolMsg } from "./messages";
import { kubePins } from "./pins";
import {
  cacheRoot, KUBE_TOOLS, kubeCacheDir, kubeToolSpec, probeVersion, resolveKubeTools, ToolResolution, UNPINNED_ENV,
} from "./resolve";

export interface ToolchainOptions {
  say: (line: string) => void;
  /** The command that gets the tools, as the user should type it. */
  command: string;
  /** Only report: never build. */
  check?: boolean;
  /** Link the pinned-version binaries found in this directory into the user cache first. */
  from?: string;
  /** Print the table only when something was missing (a warm `npm run` stays quiet). */
  quietWhenReady?: boolean;
  /** Leave the final table to the caller (scripts/toolchain.ts prints one table with its own tools). */
  noFinalTable?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface ToolRow {
  cells: [tool: string, version: string, source: string, where: string];
  notes?: string[];
}

/** One table row per tool: its version and where it came from, or what was wanted and what was passed over. */
export function toolRows(resolutions: readonly ToolResolution[]): ToolRow[] {
  return resolutions.map((r) => r.found
    ? { cells: [r.tool, r.found.version, r.found.source, `${r.found.path}${r.found.unpinned ? ` ${toolMsg.unpinnedNote}` : ""}`] }
    : { cells: [r.tool, "missing", "", `wanted ${r.wanted}`], notes: r.passedOver.map(toolMsg.passedOver) });
}

function linkFrom(dir: string, cacheDir: string, say: (line: string) => void, env: NodeJS.ProcessEnv): void {
  const pins = kubePins();
  const unpinned = env[UNPINNED_ENV] === "1" || env[UNPINNED_ENV] === "true";
  fs.mkdirSync(cacheDir, { recursive: true });
  for (const tool of KUBE_TOOLS) {
    const spec = kubeToolSpec(tool, pins);
    const from = path.resolve(dir, tool);
    if (!fs.existsSync(from)) {
      say(toolMsg.fromNotFound(tool, dir, "not there"));
      continue;
    }
    const { version, error } = probeVersion(from, spec.versionArgs);
    if (!version || (!spec.matches(version) && !unpinned)) {
      say(toolMsg.fromNotFound(tool, dir, version ? toolMsg.wrongVersion(version, spec.wanted) : error ?? ""));
      continue;
    }
    const to = path.join(cacheDir, tool);
    fs.rmSync(to, { force: true });
    fs.symlinkSync(from, to);
    say(toolMsg.linked(tool, from, to));
  }
}

/** Finds (and unless `check`, builds) every kube tool; the resolutions, each found or not. */
export async function kubeToolchain(o: ToolchainOptions): Promise<ToolResolution[]> {
  const t0 = Date.now();
  const env = o.env ?? process.env;
  const pins = kubePins();
  const cacheDir = kubeCacheDir(env, pins);
  const header = toolMsg.header(pins.kubernetes, kubeToolSpec("etcd", pins).wanted);
  if (o.from) {
    o.say(header);
    linkFrom(o.from, cacheDir, o.say, env);
  }
  let resolutions = resolveKubeTools(KUBE_TOOLS, env);
  const missing = () => resolutions.filter((r) => !r.found).map((r) => r.tool);
  const report = () => {
    if (!o.from) o.say(header);
    for (const line of toolMsg.table(toolRows(resolutions))) o.say(line);
  };
  if (missing().length === 0) {
    if ((!o.quietWhenReady || o.from) && !o.noFinalTable) {
      report();
      o.say(toolMsg.allFound(Date.now() - t0));
    }
    return resolutions;
  }
  report();
  if (o.check) {
    o.say(toolMsg.checkMissing(missing().length, o.command));
    return resolutions;
  }
  const { go, problem } = goReady(pins.go, env);
  if (!go) throw new BuildError(toolMsg.needs(pins.go, problem ?? "", missing(), cacheDir, o.command));
  await withBuildLock(cacheDir, o.say, async () => {
    // Another run may have built them while this one waited for the lock.
    resolutions = resolveKubeTools(KUBE_TOOLS, env);
    if (missing().length === 0) return;
    o.say(toolMsg.buildStart(missing().length, cacheDir, go.version, go.proxy));
    await goBuild(missing().map((t) => kubeBuildStep(t, pins)), cacheDir, { say: o.say, logsDir: path.join(cacheRoot(env), "logs"), env });
    resolutions = resolveKubeTools(KUBE_TOOLS, env);
  });
  if (!o.noFinalTable) {
    for (const line of toolMsg.table(toolRows(resolutions))) o.say(line);
    o.say(toolMsg.ready(Date.now() - t0));
  }
  return resolutions;
}
