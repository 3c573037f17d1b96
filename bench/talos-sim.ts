// Simulated Talos nodes at scale: start time and memory of the sim with 5 (3 control planes + 2 workers) and 1,000
// nodes (each measured in a fresh child process with --expose-gc; one apid listener per control plane), Version over
// all nodes through the endpoints, failover when the client's endpoint node reboots, and reboot timing seen by the
// real client.
// Run alone: `node dist/bench/talos-sim.js` (prints JSON metrics); `metrics()` plugs into bench/main.ts.
import { execFileSync } from "node:child_process";
import { createTalosApi } from "../provider/talos";
import { TalosNodeSim } from "../sim/talos";
import { Metric, percentile, round } from "./metrics";

const MB = 1024 * 1024;
const gc = () => (globalThis as { gc?: () => void }).gc?.();

interface ChildResult {
  nodes: number;
  startMs: number;
  listeners: number;
  /** The client's endpoint (cp-1) rebooted: the first call after its apid stopped (refused there, answered by cp-2). */
  failoverMs: number;
  /** With one control plane: from its boot until the client's first answered call (reconnect backoff included). */
  soleEndpointBackMs: number;
  heapMB: number;
  rssMB: number;
  versionAllMs: number;
  heapAfterCallsMB: number;
  rebootP50Ms: number;
  rebootMaxMs: number;
  rebootAllMs: number;
  downMs: number;
}

async function child(n: number): Promise<ChildResult> {
  const downMs = 500;
  // baseline with every module loaded and the wire contract parsed
  require("../provider/talos/proto").wire();
  gc();
  const base = process.memoryUsage();
  let t = performance.now();
  const sim = await TalosNodeSim.start({ nodes: n, controlPlanes: Math.min(3, n), timing: { downMs, pullMs: 10, installMs: 10 } });
  const startMs = performance.now() - t;
  gc();
  const started = process.memoryUsage();
  const api = createTalosApi(sim.talosconfig(), { pollIntervalMs: 25 });
  const addrs = sim.nodes().map((x) => x.address);
  t = Date.now();
  await Promise.all(addrs.map((a) => api.version(a)));
  const versionAllMs = Date.now() - t;
  gc();
  const afterCalls = process.memoryUsage();
  const failoverMs = await failover(sim, addrs[addrs.length - 1]);
  const soleEndpointBackMs = await soleEndpointBack(downMs);

  // reboot every worker at once (the endpoints, the control planes, stay up: failover is measured above); per node:
  // Reboot call → client sees a new boot id
  const rebootOne = async (a: string) => {
    const before = await api.bootId(a);
    const t0 = Date.now();
    await api.client.reboot(a);
    for (;;) {
      try {
        if ((await api.client.bootId(a, { timeoutMs: 2000 })) !== before) return Date.now() - t0;
      } catch { /* down */ }
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  t = Date.now();
  const workers = sim.nodes().filter((x) => x.role === "worker").map((x) => x.address);
  const times = (await Promise.all(workers.map(rebootOne))).sort((x, y) => x - y);
  const rebootAllMs = Date.now() - t;
  api.close();
  await sim.stop();
  return {
    nodes: n,
    startMs,
    listeners: sim.endpoints.length,
    failoverMs,
    soleEndpointBackMs,
    heapMB: (started.heapUsed - base.heapUsed) / MB,
    rssMB: (started.rss - base.rss) / MB,
    heapAfterCallsMB: (afterCalls.heapUsed - base.heapUsed) / MB,
    versionAllMs,
    rebootP50Ms: percentile(times, 50),
    rebootMaxMs: times[times.length - 1],
    rebootAllMs,
    downMs,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client on cp-1's endpoint; cp-1 reboots; how long the first call takes once cp-1's apid has stopped. */
async function failover(sim: TalosNodeSim, worker: string): Promise<number> {
  const api = createTalosApi(sim.talosconfig(), { pollIntervalMs: 25 });
  try {
    await api.version(worker);
    const cp1 = sim.nodes()[0];
    cp1.reboot();
    while (sim.endpointOf(cp1.name)!.listening) await sleep(2);
    const t = performance.now();
    await api.version(worker);
    const ms = performance.now() - t;
    while (!cp1.up) await sleep(10);
    return ms;
  } finally {
    api.close();
  }
}

/** One control plane, the only endpoint, reboots; from its boot until a call (polled every 25 ms) is answered. */
async function soleEndpointBack(downMs: number): Promise<number> {
  const sim = await TalosNodeSim.start({ nodes: 2, controlPlanes: 1, timing: { downMs, pullMs: 10, installMs: 10 } });
  const api = createTalosApi(sim.talosconfig(), { pollIntervalMs: 25 });
  try {
    const cp = sim.nodes()[0];
    await api.version(cp.address);
    let upAt = 0;
    sim.once("up", () => (upAt = performance.now()));
    cp.reboot();
    while (sim.endpointOf(cp.name)!.listening) await sleep(2);
    for (;;) {
      try {
        await api.client.version(sim.nodes()[1].address, { timeoutMs: 1000 });
        if (upAt) return performance.now() - upAt;
      } catch { /* the only endpoint is down */ }
      await sleep(25);
    }
  } finally {
    api.close();
    await sim.stop();
  }
}

function runChild(n: number): ChildResult {
  const out = execFileSync(process.execPath, ["--expose-gc", "--no-deprecation", __filename, "--child", String(n)], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").pop()!);
}

export async function metrics(): Promise<Metric[]> {
  const out: Metric[] = [];
  for (const n of [5, 1000]) {
    const r = runChild(n);
    out.push(
      { name: `talos_sim_start_${n}_nodes`, value: round(r.startMs, 1), unit: "ms", compared_with: `TalosNodeSim.start: PKI, etcd, ${r.listeners} apid listeners (one per control plane)` },
      { name: `talos_sim_heap_${n}_nodes`, value: round(r.heapMB, 2), unit: "MB", compared_with: `sim heap over baseline after start (${r.listeners} mTLS listeners, one per control plane)` },
      { name: `talos_sim_heap_after_calls_${n}_nodes`, value: round(r.heapAfterCallsMB, 2), unit: "MB", compared_with: "heap incl. a client after one Version per node" },
      { name: `talos_sim_rss_${n}_nodes`, value: round(r.rssMB, 1), unit: "MB", compared_with: "process RSS growth after start" },
      { name: `talos_sim_version_all_${n}_nodes`, value: r.versionAllMs, unit: "ms", compared_with: "Version of every node, concurrently, one endpoint" },
      { name: `talos_sim_reboot_p50_${n}_nodes`, value: r.rebootP50Ms, unit: "ms", compared_with: `worker Reboot → new boot id seen (down time ${r.downMs} ms, 25 ms polling)` },
      { name: `talos_sim_reboot_max_${n}_nodes`, value: r.rebootMaxMs, unit: "ms", compared_with: `slowest of the ${n - Math.min(3, n)} workers rebooted at once` },
      { name: `talos_failover_first_call_${n}_nodes`, value: round(r.failoverMs, 1), unit: "ms", compared_with: "first call after the client's endpoint node went down: refused there, answered by the next endpoint" },
    );
    if (n === 5) {
      out.push({ name: "talos_sole_endpoint_back_ms", value: round(r.soleEndpointBackMs, 1), unit: "ms",
        compared_with: "one control plane: its boot → first answered call (grpc-js reconnect backoff 250 ms … 5 s, polled every 25 ms)" });
    }
  }
  return out;
}

if (require.main === module) {
  const i = process.argv.indexOf("--child");
  if (i >= 0) {
    child(Number(process.argv[i + 1])).then((r) => process.stdout.write(JSON.stringify(r) + "\n"), (e) => {
      process.stderr.write(String(e?.stack ?? e) + "\n");
      process.exit(1);
    });
  } else {
    metrics().then((m) => process.stdout.write(JSON.stringify(m, null, 2) + "\n"));
  }
}
