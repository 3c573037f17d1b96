// A benchmark figure as bench/results.json stores it, and where it was measured.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";

/** A figure as bench/results.json stores it. */
export interface Metric {
  name: string;
  value: number;
  unit: string;
  /** The peer or limit the figure is compared with, in words. */
  compared_with: string;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function round(v: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/**
 * Where a figure was measured: the load average at its start and end, and the machine (core count and CPU model), so
 * figures from two machines are not read as a change in the code (the same commit, 22e7d61, measured a median of 377 ms
 * per wave at 1,000 nodes on one 2-core machine, six runs of 258–544, and 524 on another, seven runs of 492–680).
 */
export function machineNote(load0: number, load1: number, cpu?: MachineCpu): string {
  const cpus = os.cpus();
  const note = `load average ${round(load0, 2)} → ${round(load1, 2)} (${cpus.length} shared cores, ${cpus[0]?.model.trim() ?? "unknown CPU"})`;
  return cpu ? `${note}; ${cpuNote(cpu)}` : note;
}

/**
 * What the machine's processors did while a figure was measured. The 1,000-node figures are bound by CPU (the
 * simulated cluster fills both cores), and the same code measured minutes apart on an otherwise idle machine has
 * differed by 40 % (session 17: 424 and 606 ms per wave): `busy` says whether the cores were full, `steal` whether
 * the hypervisor took time from them, and `speedMs` how long a fixed piece of work took the processor before the
 * bench's cluster started.
 */
export interface MachineCpu {
  /** Share of the cores' time spent running anything (user, system, interrupts), 0–1. */
  busy?: number;
  /** Share taken by the hypervisor for other guests, 0–1. */
  steal?: number;
  /** CPU milliseconds of `cpuSpeedProbe`'s fixed work (lower is faster; on the bench machine when quiet 83–94 ms as
   * best of 3, 77–97 ms since the untimed pass before them). */
  speedMs?: number;
}

export function cpuNote(c: MachineCpu): string {
  const parts: string[] = [];
  if (c.busy !== undefined) parts.push(`cores ${Math.round(c.busy * 100)} % busy`);
  if (c.steal !== undefined) parts.push(`steal ${round(c.steal * 100)} %`);
  if (c.speedMs !== undefined) parts.push(`CPU probe ${Math.round(c.speedMs)} ms`);
  return parts.join(", ");
}

/** The cumulative times of /proc/stat's "cpu" line (user nice system idle iowait irq softirq steal …), in ticks. */
export type CpuTicks = readonly number[];

/** The first line of /proc/stat as numbers; undefined where there is no /proc (not Linux). */
export function readCpuTicks(stat = "/proc/stat"): CpuTicks | undefined {
  try {
    const line = fs.readFileSync(stat, "utf8").split("\n", 1)[0];
    if (!/^cpu\s/.test(line)) return undefined;
    return line.trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return undefined;
  }
}

/** Busy and steal shares between two readings of /proc/stat (guest time is already counted in user). */
export function cpuShares(before: CpuTicks, after: CpuTicks): { busy: number; steal: number } | undefined {
  const d = after.slice(0, 8).map((v, i) => v - (before[i] ?? 0));
  if (d.length < 8 || d.some((v) => !Number.isFinite(v) || v < 0)) return undefined;
  const total = d.reduce((a, b) => a + b, 0);
  if (total <= 0) return undefined;
  const [, , , idle, iowait, , , steal] = d;
  return { busy: (total - idle - iowait - steal) / total, steal: steal / total };
}

/** Starts a window on /proc/stat; the function it returns gives the busy and steal shares since (undefined off Linux). */
export function cpuWindow(): () => { busy: number; steal: number } | undefined {
  const before = readCpuTicks();
  return () => {
    const after = readCpuTicks();
    return before && after ? cpuShares(before, after) : undefined;
  };
}

/**
 * The processor's speed at this moment: CPU time (not wall time, so waiting for a core does not count) of a fixed
 * mix like the provider's own work — JSON of small objects, hashing, short-lived allocations —, the best of three
 * after one untimed pass (the first pass in a process runs code V8 has not optimised yet: it read 81–112 ms in five
 * fresh processes where the passes after it read 77–97).
 */
export function cpuSpeedProbe(): number {
  const objects = Array.from({ length: 20_000 }, (_, i) => ({ name: `node-${i}`, labels: { role: i % 3 ? "worker" : "controlplane" }, n: i }));
  const bytes = Buffer.alloc(24 * 1024 * 1024, 7);
  let best = Infinity;
  for (let r = 0; r < 4; r++) {
    const t0 = process.cpuUsage();
    for (let k = 0; k < 8; k++) JSON.parse(JSON.stringify(objects));
    createHash("sha256").update(bytes).digest();
    const u = process.cpuUsage(t0);
    if (r > 0) best = Math.min(best, (u.user + u.system) / 1000);
  }
  return best;
}
