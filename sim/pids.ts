// Whether a process still lives, for the lock files the sim takes across processes (build lock, port reservations).

/** True while process `pid` exists (EPERM: it exists but belongs to someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
