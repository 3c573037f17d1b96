// Options and the state file of a background simulated cluster (`talos-gate sim`).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { simMsg } from "./messages";
import { SIM_DEFAULT_KUBERNETES_VERSION } from "./talos/kubernetes";

export interface SimOptions {
  dir: string;
  controlPlanes: number;
  workers: number;
  version: string;
  /** The Kubernetes version the nodes start on (machine config images, static pods, kubelets). */
  kubernetesVersion: string;
  bootSeconds: number;
  workloadPodsPerNode: number;
  /** How long a node's installer image pull and its install take (LifecycleService path and legacy upgrade). */
  pullMs: number;
  installMs: number;
}

export const SIM_DEFAULTS: SimOptions = {
  dir: ".sim", controlPlanes: 3, workers: 2, version: "v1.12.4", kubernetesVersion: SIM_DEFAULT_KUBERNETES_VERSION, bootSeconds: 3, workloadPodsPerNode: 2, pullMs: 200, installMs: 300,
};

export interface SimState {
  pid: number;
  dir: string;
  startedAt: string;
  kubeconfig: string;
  talosconfig: string;
  kubernetesServer: string;
  talosEndpoint: string;
  machines: { name: string; role: string; address: string; version: string }[];
  bootSeconds: number;
  pullMs: number;
  installMs: number;
  /** The daemon's control endpoint (`sim fault`, `sim recover`); absent in a sim started by an earlier release. */
  control?: { url: string; token: string };
}

export const stateFile = (dir: string) => path.join(dir, "state.json");

export class SimUsageError extends Error {
  readonly userFacing = true;
}

const FLAGS: Record<string, keyof SimOptions> = {
  "--dir": "dir", "--control-planes": "controlPlanes", "--workers": "workers", "--version": "version", "--kubernetes": "kubernetesVersion",
  "--boot-seconds": "bootSeconds", "--workload-pods": "workloadPodsPerNode", "--pull-ms": "pullMs", "--install-ms": "installMs",
};

/** Parses `--flag value` pairs into options; unknown flags and bad numbers are usage errors. */
export function parseSimArgs(argv: string[]): SimOptions {
  const o: SimOptions = { ...SIM_DEFAULTS };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split("=", 2);
    const key = Object.hasOwn(FLAGS, flag) ? FLAGS[flag] : undefined;
    if (!key) throw new SimUsageError(simMsg.unknownOption(argv[i], Object.keys(FLAGS)));
    const value = inline ?? argv[++i];
    if (value === undefined) throw new SimUsageError(simMsg.needsValue(flag));
    if (key === "dir" || key === "version" || key === "kubernetesVersion") {
      (o as unknown as Record<string, string>)[key] = value;
    } else {
      const n = Number(value);
      const min = key === "controlPlanes" ? 1 : 0;
      if (!Number.isFinite(n) || n < min || (key !== "bootSeconds" && !Number.isInteger(n))) {
        throw new SimUsageError(simMsg.badNumber(flag, key === "bootSeconds", min, value));
      }
      (o as unknown as Record<string, number>)[key] = n;
    }
  }
  if (!/^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(o.version)) {
    throw new SimUsageError(simMsg.badVersion(String(o.version)));
  }
  if (!o.version.startsWith("v")) o.version = `v${o.version}`;
  if (!/^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(o.kubernetesVersion)) {
    throw new SimUsageError(simMsg.badKubernetesVersion(String(o.kubernetesVersion)));
  }
  if (!o.kubernetesVersion.startsWith("v")) o.kubernetesVersion = `v${o.kubernetesVersion}`;
  o.dir = path.resolve(o.dir);
  return o;
}

/**
 * Whether `pid` is a sim daemon (`node …/sim/daemon.js`): a state file outlives its daemon, and its pid can be reused
 * by any process, which `sim down` must never signal. Read from /proc where there is one, else from `ps`.
 */
export function isSimDaemon(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    const r = spawnSync("ps", ["-o", "command=", "-p", String(pid)], { encoding: "utf8", timeout: 5000 });
    if (r.status !== 0) return false;
    cmdline = r.stdout;
  }
  return /(^|[\s/])sim[/\\]daemon\.(js|ts)(\s|$)/.test(cmdline);
}

/**
 * The state of the sim running in `dir`, or undefined when none runs: a state file whose pid is gone, or is now
 * another program, is stale and removed.
 */
export function readRunning(dir: string): SimState | undefined {
  let state: SimState;
  try {
    state = JSON.parse(fs.readFileSync(stateFile(dir), "utf8"));
  } catch {
    return undefined;
  }
  try {
    process.kill(state.pid, 0);
    if (isSimDaemon(state.pid)) return state;
  } catch {
    // gone
  }
  fs.rmSync(stateFile(dir), { force: true });
  return undefined;
}
