// Finds the binaries the sim runs, in this order: $TALOS_GATE_TOOLS, $KUBEBUILDER_ASSETS (the envtest convention), the
// user cache (where `talos-gate toolchain` builds them), PATH. A binary counts only at the version this release pins
// (scripts/go/kube/go.mod), unless TALOS_GATE_UNPINNED_TOOLS=1 says any version will do; what was passed over is kept
// to tell the user why.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseVersion, sameVersion } from "../../provider/version";
import { KubePins, kubePins } from "./pins";
import { toolMsg } from "./messages";

export const KUBE_TOOLS = ["kube-apiserver", "etcd", "kubectl", "kube-controller-manager", "kube-scheduler"] as const;
export type KubeTool = (typeof KUBE_TOOLS)[number];

export type ToolSource = "TALOS_GATE_TOOLS" | "KUBEBUILDER_ASSETS" | "user cache" | "PATH";

/** The environment variable that accepts tools at any version (strict by default: only the pinned one). */
export const UNPINNED_ENV = "TALOS_GATE_UNPINNED_TOOLS";

export interface FoundTool {
  tool: string;
  path: string;
  /** As the binary reports it, with a leading "v" ("v1.36.3"). */
  version: string;
  source: ToolSource;
  /** Accepted at a version other than the pinned one, because of TALOS_GATE_UNPINNED_TOOLS. */
  unpinned: boolean;
}

export interface PassedOver {
  path: string;
  source: ToolSource;
  /** Why it was not used (wrong version, no answer to --version). */
  reason: string;
}

export interface ToolResolution {
  tool: string;
  /** What this release pins ("v1.36.3", or "v3.6.x" for etcd). */
  wanted: string;
  found?: FoundTool;
  passedOver: PassedOver[];
}

/** How a tool reports its version and which versions are the pinned one. */
export interface ToolSpec {
  name: string;
  versionArgs: string[];
  /** The pinned version as shown to users. */
  wanted: string;
  matches(version: string): boolean;
}

export function kubeToolSpec(tool: KubeTool, pins: KubePins = kubePins()): ToolSpec {
  if (tool === "etcd") {
    const pinned = parseVersion(pins.etcd)!;
    return {
      name: tool, versionArgs: ["--version"], wanted: `v${pinned.major}.${pinned.minor}.x`,
      matches: (v) => {
        const p = parseVersion(v);
        return !!p && p.major === pinned.major && p.minor === pinned.minor;
      },
    };
  }
  return {
    name: tool,
    versionArgs: tool === "kubectl" ? ["version", "--client"] : ["--version"],
    wanted: pins.kubernetes,
    matches: (v) => sameVersion(v, pins.kubernetes),
  };
}

/** The user cache root: $TALOS_GATE_CACHE, else $XDG_CACHE_HOME/talos-gate, else ~/.cache/talos-gate. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TALOS_GATE_CACHE) return path.resolve(env.TALOS_GATE_CACHE);
  return path.join(env.XDG_CACHE_HOME ? path.resolve(env.XDG_CACHE_HOME) : path.join(env.HOME || os.homedir(), ".cache"), "talos-gate");
}

/** Where `talos-gate toolchain` puts the kube tools of this release (named by the wrapper module's hash). */
export function kubeCacheDir(env: NodeJS.ProcessEnv = process.env, pins: KubePins = kubePins()): string {
  return path.join(cacheRoot(env), "bin", `kube-${pins.module.hash}`);
}

/** The places looked in, in order. `skip` leaves out directories (e.g. the links of a development checkout). */
export function searchDirs(env: NodeJS.ProcessEnv, cacheDir: string | undefined, skip: readonly string[] = []): { dir: string; source: ToolSource }[] {
  const list = (v: string | undefined) => (v ?? "").split(path.delimiter).filter((d) => d !== "");
  const dirs: { dir: string; source: ToolSource }[] = [
    ...list(env.TALOS_GATE_TOOLS).map((dir) => ({ dir, source: "TALOS_GATE_TOOLS" as const })),
    ...list(env.KUBEBUILDER_ASSETS).map((dir) => ({ dir, source: "KUBEBUILDER_ASSETS" as const })),
    ...(cacheDir ? [{ dir: cacheDir, source: "user cache" as const }] : []),
    ...list(env.PATH).map((dir) => ({ dir, source: "PATH" as const })),
  ];
  const skipped = new Set(skip.map((d) => path.resolve(d)));
  return dirs.filter((d) => !skipped.has(path.resolve(d.dir)));
}

const PROBE_TIMEOUT_MS = 20_000;
const probed = new Map<string, { version?: string; error?: string }>();

/** The version a binary reports (first semantic version in its output), memoised per file identity. */
export function probeVersion(file: string, args: readonly string[]): { version?: string; error?: string } {
  let key: string;
  try {
    const st = fs.statSync(file);
    key = `${fs.realpathSync(file)}\0${st.size}\0${st.mtimeMs}\0${args.join(" ")}`;
  } catch (err) {
    return { error: (err as Error).message };
  }
  const known = probed.get(key);
  if (known) return known;
  let result: { version?: string; error?: string };
  try {
    const out = execFileSync(file, [...args], { encoding: "utf8", timeout: PROBE_TIMEOUT_MS, stdio: ["ignore", "pipe", "pipe"] });
    const m = /\bv?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(out);
    result = m ? { version: `v${m[1]}` } : { error: toolMsg.noVersionInOutput(args, out) };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { signal?: string };
    result = { error: e.code === "ETIMEDOUT" || e.signal === "SIGTERM" ? toolMsg.probeTimedOut(args, PROBE_TIMEOUT_MS) : toolMsg.probeFailed(args, e.message.split("\n")[0]) };
  }
  probed.set(key, result);
  return result;
}

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  /** The user-cache directory for this tool (the kube one by default). */
  cacheDir?: string;
  /** Directories never to take the tool from. */
  skip?: readonly string[];
}

/** Looks for one tool in the search order; the first binary at the pinned version (or any, when opted in) wins. */
export function resolveWith(spec: ToolSpec, opts: ResolveOptions = {}): ToolResolution {
  const env = opts.env ?? process.env;
  const unpinned = env[UNPINNED_ENV] === "1" || env[UNPINNED_ENV] === "true";
  const passedOver: PassedOver[] = [];
  const seen = new Set<string>();
  for (const { dir, source } of searchDirs(env, opts.cacheDir, opts.skip)) {
    const file = path.resolve(dir, spec.name);
    if (!isExecutableFile(file)) continue;
    const real = fs.realpathSync(file);
    if (seen.has(real)) continue; // the same binary twice on PATH (/bin -> /usr/bin)
    seen.add(real);
    const { version, error } = probeVersion(file, spec.versionArgs);
    if (!version) {
      passedOver.push({ path: file, source, reason: error ?? "" });
      continue;
    }
    const matches = spec.matches(version);
    if (matches || unpinned) {
      return { tool: spec.name, wanted: spec.wanted, found: { tool: spec.name, path: file, version, source, unpinned: !matches }, passedOver };
    }
    passedOver.push({ path: file, source, reason: toolMsg.wrongVersion(version, spec.wanted) });
  }
  return { tool: spec.name, wanted: spec.wanted, passedOver };
}

/** Resolves kube tools for the sim (the kube user-cache directory of this release). */
export function resolveKubeTools(tools: readonly KubeTool[] = KUBE_TOOLS, env: NodeJS.ProcessEnv = process.env): ToolResolution[] {
  const pins = kubePins();
  const cacheDir = kubeCacheDir(env, pins);
  return tools.map((t) => resolveWith(kubeToolSpec(t, pins), { env, cacheDir }));
}
