// `talos-gate sim up|down|status`: a local simulated Talos cluster in the background (real etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, simulated Talos nodes on the real wire protocol, a kubelet emulator).
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { control } from "../sim/control";
import { parseSimArgs, readRunning, SIM_DEFAULTS, SimState, SimUsageError, stateFile } from "../sim/state";
import { requireKubeTools } from "../sim/tools";
import { cliMsg } from "./messages";

const USAGE = `usage:
  talos-gate sim up [--control-planes N] [--workers M] [--version vX.Y.Z] [--kubernetes vX.Y.Z] [--boot-seconds S]
                    [--pull-ms MS] [--install-ms MS] [--workload-pods P] [--dir D]
  talos-gate sim status [--dir D]
  talos-gate sim fault <node> <never-comes-back|rollback|slow-boot=30s|etcd-unhealthy|pull-failure|static-pod-never-ready|
                              kubelet-never-returns|clear> [--dir D]
  talos-gate sim recover <node> [--dir D]
  talos-gate sim down [--dir D]
faults (on the running sim, until cleared): never-comes-back (its current or next reboot never ends; 'sim recover' boots it),
  rollback (its next upgrade comes back on the old version), slow-boot=D (every reboot takes D longer),
  etcd-unhealthy (a control plane's etcd member stays unhealthy), pull-failure (installer images cannot be pulled),
  static-pod-never-ready (a static pod restarted by a Kubernetes upgrade never becomes ready; 'sim recover' ends it),
  kubelet-never-returns (a kubelet restarted by a Kubernetes upgrade never starts again; 'sim recover' ends it),
  clear (removes the node's faults)
--workers 0: the control planes take the workload pods (as Talos' allowSchedulingOnControlPlanes), guarded by a
  PodDisruptionBudget (minAvailable 1); --control-planes 1 --workers 0 is a single node, where a drain has nowhere to go
defaults: ${SIM_DEFAULTS.controlPlanes} control planes, ${SIM_DEFAULTS.workers} workers, Talos ${SIM_DEFAULTS.version}, ` +
  `Kubernetes ${SIM_DEFAULTS.kubernetesVersion}, ` +
  `${SIM_DEFAULTS.bootSeconds}s reboots, ${SIM_DEFAULTS.pullMs} ms image pulls, ${SIM_DEFAULTS.installMs} ms installs, ${SIM_DEFAULTS.workloadPodsPerNode} workload pods per node, dir ${SIM_DEFAULTS.dir}
`;

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

function dirOnly(argv: string[]): string {
  return parseSimArgs(argv.filter((a, i) => a.startsWith("--dir") || argv[i - 1] === "--dir")).dir;
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

async function up(argv: string[]): Promise<number> {
  const opts = parseSimArgs(argv);
  const running = readRunning(opts.dir);
  if (running) {
    throw new SimUsageError(cliMsg.simAlreadyRunning(opts.dir, running.pid, running.startedAt));
  }
  // Missing tools are named here, with the command that gets them, not in the background process's log.
  requireKubeTools();
  fs.mkdirSync(opts.dir, { recursive: true });
  const log = path.join(opts.dir, "sim.log");
  const fd = fs.openSync(log, "w");
  const started = Date.now();
  const child = spawn(process.execPath, [path.join(__dirname, "..", "sim", "daemon.js"), ...argv], {
    detached: true, stdio: ["ignore", fd, fd],
  });
  fs.closeSync(fd);
  let exited: number | null = null;
  child.on("exit", (code) => { exited = code ?? 1; });
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const state = readRunning(opts.dir);
    if (state && state.pid === child.pid) {
      child.unref();
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write([
        cliMsg.simUp(secs, state.pid, count(opts.controlPlanes, "control plane"), count(opts.workers, "worker"), opts.version, opts.kubernetesVersion),
        cliMsg.simUpgradeTimes(opts.pullMs, opts.installMs, opts.bootSeconds),
        `  kubernetes:  ${state.kubernetesServer}`,
        `  talos api:   ${state.talosEndpoint}`,
        `  kubeconfig:  ${state.kubeconfig}`,
        `  talosconfig: ${state.talosconfig}`,
        "",
        "use it:",
        `  export KUBECONFIG=${state.kubeconfig} TALOSCONFIG=${state.talosconfig}`,
        "  kubectl get nodes",
        `  talos-gate plan --kubeconfig ${state.kubeconfig} --talosconfig ${state.talosconfig} --version v1.13.2`,
        "  pulumi up    # your program, with the kubeconfig and talosconfig above as config secrets",
        `  talos-gate sim down${opts.dir === path.resolve(SIM_DEFAULTS.dir) ? "" : ` --dir ${opts.dir}`}`,
        "",
      ].join("\n"));
      return 0;
    }
    if (exited !== null) {
      process.stderr.write(cliMsg.simFailedToStart(exited, log, tail(log)));
      return 1;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill("SIGTERM");
  process.stderr.write(cliMsg.simNotUp(log, tail(log)));
  return 1;
}

async function down(argv: string[]): Promise<number> {
  const dir = dirOnly(argv);
  const state = readRunning(dir);
  if (!state) {
    process.stderr.write(cliMsg.simNothingToStop(dir));
    return 1;
  }
  process.kill(state.pid, "SIGTERM");
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      process.kill(state.pid, 0);
    } catch {
      fs.rmSync(stateFile(dir), { force: true });
      process.stdout.write(cliMsg.simStopped(dir, state.pid));
      return 0;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.kill(state.pid, "SIGKILL");
  fs.rmSync(stateFile(dir), { force: true });
  process.stdout.write(cliMsg.simKilled(dir, state.pid));
  return 0;
}

async function status(argv: string[]): Promise<number> {
  const dir = dirOnly(argv);
  const state = readRunning(dir);
  if (!state) {
    process.stderr.write(`talos-gate sim: ${cliMsg.simNotRunning(dir)}\n`);
    return 1;
  }
  const { createKubeApi } = require("../provider/kube") as typeof import("../provider/kube");
  const kube = createKubeApi(fs.readFileSync(state.kubeconfig, "utf8"));
  const [machines, faults] = await Promise.all([kube.listMachines(), faultsOf(state)]);
  const faultCell = (name: string) => (typeof faults === "string" ? "?" : faults[name]?.join(",") || "-");
  const rows = [["NODE", "ROLE", "TALOS", "READY", "CORDONED", "FAULTS", "ADDRESS"],
    ...machines.map((m) => [m.name, m.role, m.talosVersion ?? "unknown", m.ready ? "yes" : "no", m.cordoned ? "yes" : "no", faultCell(m.name), m.address])];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  process.stdout.write(cliMsg.simStatusHeader(dir, state.pid, state.startedAt) +
    rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd()).join("\n") + "\n" +
    (typeof faults === "string" ? cliMsg.simFaultsUnknown(faults) + "\n" : ""));
  return 0;
}

/** Each node's faults from the daemon, or why they are unknown (a sim without a control endpoint, no answer). */
async function faultsOf(state: SimState): Promise<Record<string, string[]> | string> {
  if (!state.control) return cliMsg.simNoControl(state.dir, state.pid);
  try {
    return await control.faults(state.control);
  } catch (err) {
    return (err as Error).message;
  }
}

/** The running sim's control endpoint, or a usage error saying why there is none. */
function controlOf(dir: string): NonNullable<SimState["control"]> {
  const state = readRunning(dir);
  if (!state) throw new SimUsageError(cliMsg.simNotRunning(dir));
  if (!state.control) throw new SimUsageError(cliMsg.simNoControl(dir, state.pid));
  return state.control;
}

/** Positional arguments (node, fault) apart from `--dir D`. */
function positional(argv: string[]): string[] {
  return argv.filter((a, i) => !a.startsWith("--dir") && argv[i - 1] !== "--dir");
}

async function fault(argv: string[]): Promise<number> {
  const args = positional(argv);
  if (args.length !== 2) throw new SimUsageError(cliMsg.simFaultArgs());
  const r = await control.setFault(controlOf(dirOnly(argv)), args[0], args[1]);
  process.stdout.write(cliMsg.simFaults(r.node, r.faults) + "\n");
  return 0;
}

async function recover(argv: string[]): Promise<number> {
  const args = positional(argv);
  if (args.length !== 1) throw new SimUsageError(cliMsg.simRecoverArgs());
  const r = await control.recover(controlOf(dirOnly(argv)), args[0]);
  process.stdout.write(cliMsg.simRecovered(r.node, r.faults) + "\n");
  return 0;
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "up": return up(rest);
    case "down": return down(rest);
    case "status": return status(rest);
    case "fault": return fault(rest);
    case "recover": return recover(rest);
    default:
      process.stderr.write(USAGE);
      return 2;
  }
}
