// Where the machine's CPU went while the rollout bench's `pulumi up` ran: the provider (peak RSS and CPU, as before),
// Pulumi's own processes, and each process of the simulated cluster (the sim's daemon and everything it started: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, its API endpoint proxy, the pods' processes). The 1,000-node
// figure is bound by the CPU all of them share (session 18: the cores 95–96 % busy, 83–86 % of the CPU the cluster's
// and the sim's), so the split is recorded beside it: what talos-gate's own process takes, and what the cluster takes.
import * as fs from "node:fs";
import * as path from "node:path";
import { round } from "./metrics";

/** What a process seen during `pulumi up` is, by its command line. */
export type ProcessKind =
  | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler" | "etcd"
  | "sim" | "sim API proxy" | "provider" | "Pulumi";

/** The words each kind is reported with (most CPU first in the note). */
const KIND_TEXT: Record<ProcessKind, string> = {
  "kube-apiserver": "kube-apiserver",
  "kube-controller-manager": "kube-controller-manager",
  "kube-scheduler": "kube-scheduler",
  etcd: "etcd",
  sim: "the sim's kubelets and Talos nodes",
  "sim API proxy": "the sim's API endpoint proxy",
  provider: "talos-gate's provider",
  Pulumi: "Pulumi's CLI, language host and program",
};

const KUBE_BINARIES = new Set<ProcessKind>(["kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"]);

/**
 * The kind of a process from its arguments (`/proc/<pid>/cmdline`), or undefined for one the bench does not count.
 * `underSim`: the process descends from the sim's daemon; the provider and Pulumi's processes run in the program's
 * directory, which the caller checks.
 */
export function processKind(args: readonly string[], underSim: boolean): ProcessKind | undefined {
  const exe = path.basename(args[0] ?? "");
  if (underSim) {
    if (KUBE_BINARIES.has(exe as ProcessKind)) return exe as ProcessKind;
    if (args.some((a) => /\/sim\/daemon\.js$/.test(a))) return "sim";
    if (args.some((a) => /\/sim\/apiproxyProcess\.js$/.test(a))) return "sim API proxy";
    return undefined; // a pod's process: counted with the sim's daemon once it has reaped it (REAPED_KINDS)
  }
  // `node …/@pulumi/pulumi/cmd/dynamic-provider/index.js <engine>`, not the plugin script's `node -e` that resolves it.
  if (args.some((a) => /\/cmd\/dynamic-provider(\/index\.js)?$/.test(a))) return "provider";
  // The CLI, the language host (a binary, or `node …/pulumi-language-nodejs.js` as scripts/langhost has it) and the
  // program (`node …/@pulumi/pulumi/cmd/run/index.js`).
  if (exe === "pulumi" || args.some((a) => /^pulumi-language-nodejs(\.js)?$/.test(path.basename(a)))) return "Pulumi";
  if (args.some((a) => /@pulumi\/pulumi\/cmd\/run(\/index\.js)?$/.test(a))) return "Pulumi";
  return undefined;
}

/**
 * Kinds whose reaped children count with them: the sim's daemon runs the pods' processes (a check's `sh -c`, a
 * DaemonSet pod's command), which live too briefly to be sampled; the kernel adds a child's time to its parent's
 * `cutime`/`cstime` when the parent waits for it.
 */
const REAPED_KINDS = new Set<ProcessKind>(["sim"]);

/**
 * CPU time (user + system) a process has used so far, in ms, with its reaped children's when asked; undefined once it
 * is gone.
 */
export function cpuMs(pid: number, withReaped = false): number | undefined {
  try {
    // The fields after the command name (which may hold spaces): utime, stime, cutime and cstime are the 12th to 15th.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]) + (withReaped ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/** USER_HZ: 100 on every Linux the bench runs on (`getconf CLK_TCK`). */
const CLOCK_TICKS = 100;

/** VmHWM (peak resident set) of a process in bytes; undefined once it is gone. */
export function highWaterMark(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** Every live process with its arguments, whether it descends from `root`, and its working directory. */
function processes(root: number | undefined): { pid: number; args: string[]; underRoot: boolean; cwd: string }[] {
  const pids = fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).map(Number);
  const parents = new Map(pids.map((p) => [p, parentOf(p)]));
  const descends = (pid: number) => {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 64; p = parents.get(p), hops++) {
      if (p === root) return true;
    }
    return false;
  };
  const out: { pid: number; args: string[]; underRoot: boolean; cwd: string }[] = [];
  for (const pid of pids) {
    const args = readOrUndefined(() => fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0"));
    // The working directory only matters outside the sim (the program's processes), and may be unreadable.
    if (args) out.push({ pid, args, underRoot: root !== undefined && descends(pid), cwd: readOrUndefined(() => fs.readlinkSync(`/proc/${pid}/cwd`)) ?? "" });
  }
  return out;
}

/** A /proc read of a process that may be gone by now (or not ours to read). */
function readOrUndefined<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** One process's CPU readings during the window: the first (0 for a process started during it) and the last. */
interface Reading { kind: ProcessKind; first: number; last: number }

export interface ProcessSample {
  /** Peak RSS of each dynamic-provider process seen, by pid. */
  providerPeaks: Map<number, number>;
  /** CPU ms of each kind during the window (a process that ended between two samples loses its last interval). */
  cpuByKind: Partial<Record<ProcessKind, number>>;
}

/** How often the sampler looks for new processes, and how often it reads the ones it knows (a process that ends
 * between two readings loses what it did after the last one: ~100 ms at most for the provider and Pulumi's). */
export interface SampleEvery { discoverMs: number; readMs: number }

/**
 * Samples from now until `stop()`: the dynamic-provider's peak RSS, and the CPU time of the provider, Pulumi's
 * processes (both found in `programDir`) and the sim's processes (descendants of `simPid`). A process already running
 * at the start counts from its reading then; one started later counts from its start.
 */
export function processSampler(programDir: string, simPid: number, every: SampleEvery): { stop(): ProcessSample } {
  const readings = new Map<number, Reading>();
  const peaks = new Map<number, number>();
  /** Reads a process's CPU (and the provider's peak) into `r`; false once it is gone. */
  const read = (pid: number, r: Reading): boolean => {
    const used = cpuMs(pid, REAPED_KINDS.has(r.kind));
    if (used === undefined) return false;
    r.last = used;
    if (r.kind === "provider") {
      const hwm = highWaterMark(pid);
      if (hwm !== undefined) peaks.set(pid, hwm);
    }
    return true;
  };
  let atStart = true;
  const discover = () => {
    for (const p of processes(simPid)) {
      if (readings.has(p.pid)) continue;
      const kind = processKind(p.args, p.underRoot);
      if (!kind || (!p.underRoot && !p.cwd.startsWith(programDir))) continue;
      const r: Reading = { kind, first: 0, last: 0 };
      if (!read(p.pid, r)) continue;
      if (atStart) r.first = r.last; // running already: only what it does from now on counts
      readings.set(p.pid, r);
    }
    atStart = false;
  };
  const readAll = () => {
    for (const [pid, r] of readings) read(pid, r);
  };
  discover();
  const timers = [setInterval(discover, every.discoverMs), setInterval(readAll, every.readMs)];
  return {
    stop() {
      for (const t of timers) clearInterval(t);
      readAll();
      discover();
      return { providerPeaks: peaks, cpuByKind: cpuTotals([...readings.values()]) };
    },
  };
}

/** CPU ms by kind from each process's first and last reading. */
export function cpuTotals(readings: readonly Reading[]): Partial<Record<ProcessKind, number>> {
  const out: Partial<Record<ProcessKind, number>> = {};
  for (const r of readings) out[r.kind] = (out[r.kind] ?? 0) + Math.max(0, r.last - r.first);
  return out;
}

/**
 * The split in words: "CPU during pulumi up 171 s (1.91 of 2 cores): kube-apiserver 37 %, …", most first; kinds under
 * 1 % are left out. `wallMs` and `cores` give how full the cores were with these processes alone.
 */
export function cpuSplitNote(cpuByKind: Partial<Record<ProcessKind, number>>, wallMs: number, cores: number): string {
  const entries = (Object.entries(cpuByKind) as [ProcessKind, number][]).filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]);
  const total = entries.reduce((a, [, ms]) => a + ms, 0);
  if (total <= 0 || wallMs <= 0) return "";
  const shares = entries.filter(([, ms]) => ms / total >= 0.01).map(([k, ms]) => `${KIND_TEXT[k]} ${Math.round((ms / total) * 100)} %`);
  return `CPU during pulumi up ${round(total / 1000)} s (${round(total / wallMs, 2)} of ${cores} cores): ${shares.join(", ")}`;
}
