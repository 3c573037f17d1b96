// Process trees from /proc (Linux): what a process started, recorded by pid and start time, so that a pid the kernel
// has since given to another process is not taken for the one recorded.
import * as fs from "node:fs";

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
