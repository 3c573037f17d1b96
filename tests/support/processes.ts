// Process trees from /proc (Linux): what a process started, recorded by pid and start time, so that a pid the kernel
// has since given to another process is not taken for the one recorded.
import * as fs from "node:fs";
import * as path from "node:path";

export interface Proc {
  pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat field 22). */
  start: number;
  /** The command line, for messages only. */
  cmd: string;
}

interface Stat {
  ppid: number;
  start: number;
}

function stat(pid: number): Stat | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" "); // fields 3.. (the command may hold spaces)
    if (f[0] === "Z" || f[0] === "X") return undefined; // exited, not yet reaped: gone
    return { ppid: Number(f[1]), start: Number(f[19]) };
  } catch {
    return undefined;
  }
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/** `root` and every process below it, as they are now. */
export function processTree(root: number): Proc[] {
  const children = new Map<number, number[]>();
  const stats = new Map<number, Stat>();
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).map(Number)) {
    const s = stat(pid);
    if (!s) continue;
    stats.set(pid, s);
    children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  }
  const out: Proc[] = [];
  const visit = (pid: number) => {
    const s = stats.get(pid);
    if (!s) return;
    out.push({ pid, start: s.start, cmd: cmdline(pid) });
    for (const c of children.get(pid) ?? []) visit(c);
  };
  visit(root);
  return out;
}

/** The recorded processes still running (same pid, same start time). */
export function stillRunning(procs: Proc[]): Proc[] {
  return procs.filter((p) => stat(p.pid)?.start === p.start);
}

/** Waits until none of `procs` runs, up to `timeoutMs`; returns those left. */
export async function waitGone(procs: Proc[], timeoutMs: number): Promise<Proc[]> {
  const deadline = Date.now() + timeoutMs;
  let left = stillRunning(procs);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = stillRunning(procs);
  }
  return left;
}

/** SIGKILLs what is left of `procs` (a failed test's cleanup). */
export function killAll(procs: Proc[]): void {
  for (const p of stillRunning(procs)) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/** Processes whose working directory is under `dir` and whose command line matches `match`. */
export function processesUnder(dir: string, match: (cmd: string) => boolean): number[] {
  const pids: number[] = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      if (match(cmd) && cwd.startsWith(path.resolve(dir))) pids.push(Number(pid));
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}

/**
 * SIGKILLs the pulumi CLI running `up` in `dir` (what a runner's timeout does), having recorded it and every process
 * below it first: what the update started, by pid and start time.
 */
export function killCli(dir: string): { at: number; procs: Proc[] } {
  const clis = processesUnder(dir, (cmd) => /(^|\/)pulumi up /.test(cmd));
  const procs = clis.flatMap((pid) => processTree(pid));
  for (const pid of clis) process.kill(pid, "SIGKILL");
  return { at: Date.now(), procs };
}
