// Loopback TCP ports for the servers the sim starts as other processes (etcd, kube-apiserver, the controllers), which
// bind the port themselves some time after it was chosen.
//
// Asking the kernel for a free port (listen on 0, then close) leaves a gap in which anything else may take it: the
// kernel hands the same ephemeral ports to outgoing connections and to other processes doing the same, so two test
// halves or two sims starting at once collide now and then ("address already in use"). Instead a port is taken from
// below the kernel's ephemeral range (which it never hands out by itself) and reserved across processes with a lock
// file named after it, holding the reserving process's pid; a lock whose process is gone is taken over. It is then
// checked to be bindable (something outside the sim may use it).
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { processAlive } from "./pids";
import { simMsg } from "./messages";

const FIRST = 20_000;
const COUNT = 12_000;
export const PORT_LOCKS = path.join(os.tmpdir(), "talos-gate-ports");

function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (lo! > 0 && hi! >= lo!) return [lo!, hi!];
  } catch {
    // not Linux: the usual default
  }
  return [32_768, 60_999];
}

/**
 * Takes the lock file of `port` for this process: created exclusively, or, when its process is gone, removed and
 * created again. (Two processes taking over the same stale lock in the same millisecond could both win; the later
 * server would then fail to bind, as every server did now and then before the locks.)
 */
export function reservePort(port: number, retry = true): boolean {
  const file = path.join(PORT_LOCKS, String(port));
  try {
    fs.writeFileSync(file, String(process.pid), { flag: "wx" });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  let owner = 0;
  try {
    owner = Number(fs.readFileSync(file, "utf8")) || 0;
  } catch {
    // removed meanwhile: try again below
  }
  // An empty lock is one being written right now.
  if (!retry || owner === 0 || owner === process.pid || processAlive(owner)) return false;
  fs.rmSync(file, { force: true });
  return reservePort(port, false);
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** A loopback port no other sim or test process will be given while this process lives. */
export async function freePort(): Promise<number> {
  fs.mkdirSync(PORT_LOCKS, { recursive: true });
  const [lo, hi] = ephemeralRange();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = FIRST + Math.floor(Math.random() * COUNT);
    if (port >= lo && port <= hi) continue;
    if (reservePort(port) && (await bindable(port))) return port;
  }
  throw new Error(simMsg.noFreePort(FIRST, FIRST + COUNT, PORT_LOCKS));
}
