// Builds tools from a Go wrapper module into the user cache: one `go build` per tool, each into a temporary file
// renamed into place when it is complete (a half-built binary is never found), with progress lines (step, elapsed
// time, a heartbeat while Go works) and the log's last lines on failure. A lock file keeps two toolchain runs from
// building into the same directory at once: the second waits and then uses what the first built.
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { atLeast, isValidVersion } from "../../provider/version";
import { toolMsg } from "./messages";
import type { KubePins } from "./pins";
import { processAlive } from "../pids";

export interface BuildStep {
  tool: string;
  /** The Go package of the command ("k8s.io/kubernetes/cmd/kube-apiserver"). */
  pkg: string;
  version: string;
  tags?: string;
  ldflags: string;
  /** The wrapper module directory `go build` runs in. */
  moduleDir: string;
}

/** The same flags the upstream release builds use for the version a binary reports (`--version`). */
function kubeLdflags(version: string): string {
  const minor = version.replace(/^v1\./, "").split(".")[0];
  const flags = ["-s", "-w"];
  for (const pkg of ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"]) {
    flags.push(`-X ${pkg}.gitVersion=${version}`, `-X ${pkg}.gitMajor=1`, `-X ${pkg}.gitMinor=${minor}`, `-X ${pkg}.gitTreeState=clean`);
  }
  return flags.join(" ");
}

export function kubeBuildStep(tool: string, pins: KubePins): BuildStep {
  const moduleDir = pins.module.dir;
  if (tool === "etcd") return { tool, pkg: "go.etcd.io/etcd/server/v3", version: pins.etcd, ldflags: "-s -w", moduleDir };
  const tags = tool === "kubectl" ? undefined : "notest";
  return { tool, pkg: `k8s.io/kubernetes/cmd/${tool}`, version: pins.kubernetes, tags, ldflags: kubeLdflags(pins.kubernetes), moduleDir };
}

/** The environment every build runs with: the local Go only, no workspace, static binaries, go.sum as it is. */
export function goEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, GOTOOLCHAIN: "local", GOWORK: "off", CGO_ENABLED: "0", GOFLAGS: "-mod=readonly" };
}

export interface GoInfo {
  version: string;
  proxy: string;
}

/** The Go that would build, or why it cannot (missing, too old, no module proxy). */
export function goReady(wanted: string, env: NodeJS.ProcessEnv = process.env): { go?: GoInfo; problem?: string } {
  let out: string;
  try {
    out = execFileSync("go", ["env", "GOVERSION", "GOPROXY"], { encoding: "utf8", env: goEnv(env), timeout: 30_000, stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { problem: e.code === "ENOENT" ? toolMsg.goMissing : toolMsg.goUnusable(e.message.split("\n")[0]) };
  }
  const [goVersion = "", proxy = ""] = out.trim().split("\n");
  const have = goVersion.replace(/^go/, "").replace(/^(\d+\.\d+)$/, "$1.0");
  const need = wanted.replace(/^(\d+\.\d+)$/, "$1.0");
  if (isValidVersion(have) && isValidVersion(need) && !atLeast(have, need)) return { problem: toolMsg.goTooOld(goVersion, wanted) };
  if (proxy.trim() === "off") return { problem: toolMsg.goProxyOff };
  return { go: { version: goVersion, proxy } };
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

export class BuildError extends Error {
  readonly userFacing = true;
}

export interface BuildOptions {
  say: (line: string) => void;
  logsDir: string;
  env?: NodeJS.ProcessEnv;
  /** How often a running step says it is still building. */
  heartbeatMs?: number;
}

/** Runs `go build` for each step into `outDir/<tool>`, one after the other (each is CPU-bound). */
export async function goBuild(steps: readonly BuildStep[], outDir: string, o: BuildOptions): Promise<void> {
  fs.mkdirSync(outDir, { recursive: true });
  fs.mkdirSync(o.logsDir, { recursive: true });
  for (const [i, step] of steps.entries()) {
    const n = steps.length;
    const out = path.join(outDir, step.tool);
    const tmp = `${out}.tmp-${process.pid}`;
    const log = path.join(o.logsDir, `${step.tool}.log`);
    const args = ["build", "-trimpath", ...(step.tags ? [`-tags=${step.tags}`] : []), `-ldflags=${step.ldflags}`, "-o", tmp, step.pkg];
    o.say(toolMsg.stepStart(i + 1, n, step.tool, step.pkg, step.version));
    const t0 = Date.now();
    const fd = fs.openSync(log, "w");
    const exit = await new Promise<string | undefined>((resolve) => {
      const child = spawn("go", args, { cwd: step.moduleDir, env: goEnv(o.env), stdio: ["ignore", fd, fd] });
      const beat = setInterval(() => o.say(toolMsg.stepRunning(i + 1, n, step.tool, Date.now() - t0)), o.heartbeatMs ?? 30_000);
      const done = (why: string | undefined) => {
        clearInterval(beat);
        resolve(why);
      };
      child.on("error", (err) => done(err.message));
      child.on("exit", (code, signal) => done(code === 0 ? undefined : signal ? `killed by ${signal}` : `exit ${code}`));
    });
    fs.closeSync(fd);
    if (exit !== undefined) {
      fs.rmSync(tmp, { force: true });
      throw new BuildError(toolMsg.stepFailed(i + 1, n, step.tool, Date.now() - t0, `go ${args.join(" ")}`, exit, log, tail(log)));
    }
    fs.renameSync(tmp, out);
    o.say(toolMsg.stepDone(i + 1, n, step.tool, Date.now() - t0));
  }
}

/** Runs `body` holding `<dir>.lock`; waits (bounded) while another live process holds it, takes over a stale one. */
export async function withBuildLock<T>(dir: string, say: (line: string) => void, body: () => Promise<T>, timeoutMs = 90 * 60_000): Promise<T> {
  const lock = `${dir}.lock`;
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const t0 = Date.now();
  let told = false;
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    let holder: number;
    try {
      holder = Number(fs.readFileSync(lock, "utf8").trim());
    } catch {
      continue; // released between our attempt and this read
    }
    if (!Number.isInteger(holder) || holder <= 0 || !processAlive(holder)) {
      fs.rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() - t0 > timeoutMs) throw new BuildError(toolMsg.lockTimedOut(holder, dir, timeoutMs));
    if (!told) say(toolMsg.waitingForLock(holder, dir));
    told = true;
    await new Promise((r) => setTimeout(r, 1000));
  }
  try {
    return await body();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}
