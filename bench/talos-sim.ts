// Simulated Talos nodes at scale: memory of the sim with 5 and 1,000 nodes (each measured in a fresh child process
// with --expose-gc), Version over all nodes through the one endpoint, and reboot timing seen by the real client.
// Run alone: `node dist/bench/talos-sim.js` (prints JSON metrics); `metrics()` plugs into bench/main.ts.
import { execFileSync } from "node:child_process";
import { createTalosApi } from "../provider/talos";
import { TalosNodeSim } from "../sim/talos";
import { Metric, percentile, round } from "./metrics";

const MB = 1024 * 1024;
const gc = () => (globalThis as { gc?: () => void }).gc?.();

interface ChildResult {
  nodes: number;
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
  const sim = await TalosNodeSim.start({ nodes: n, controlPlanes: Math.min(3, n), timing: { downMs, pullMs: 10, installMs: 10 } });
  gc();
  const started = process.memoryUsage();
  const api = createTalosApi(sim.talosconfig(), { pollIntervalMs: 25 });
  const addrs = sim.nodes().map((x) => x.address);
  let t = Date.now();
  await Promise.all(addrs.map((a) => api.version(a)));
  const versionAllMs = Date.now() - t;
  gc();
  const afterCalls = process.memoryUsage();

  // reboot every node at once; per node: Reboot call → client sees a new boot id
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
  const times = (await Promise.all(addrs.map(rebootOne))).sort((x, y) => x - y);
  const rebootAllMs = Date.now() - t;
  api.close();
  await sim.stop();
  return {
    nodes: n,
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

function runChild(n: number): ChildResult {
  const out = execFileSync(process.execPath, ["--expose-gc", "--no-deprecation", __filename, "--child", String(n)], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").pop()!);
}

export async function metrics(): Promise<Metric[]> {
  const out: Metric[] = [];
  for (const n of [5, 1000]) {
    const r = runChild(n);
    out.push(
      { name: `talos_sim_heap_${n}_nodes`, value: round(r.heapMB, 2), unit: "MB", compared_with: "sim heap over baseline after start (one shared mTLS listener)" },
      { name: `talos_sim_heap_after_calls_${n}_nodes`, value: round(r.heapAfterCallsMB, 2), unit: "MB", compared_with: "heap incl. a client after one Version per node" },
      { name: `talos_sim_rss_${n}_nodes`, value: round(r.rssMB, 1), unit: "MB", compared_with: "process RSS growth after start" },
      { name: `talos_sim_version_all_${n}_nodes`, value: r.versionAllMs, unit: "ms", compared_with: "Version of every node, concurrently, one endpoint" },
      { name: `talos_sim_reboot_p50_${n}_nodes`, value: r.rebootP50Ms, unit: "ms", compared_with: `Reboot → new boot id seen (down time ${r.downMs} ms, 25 ms polling)` },
      { name: `talos_sim_reboot_max_${n}_nodes`, value: r.rebootMaxMs, unit: "ms", compared_with: `slowest node of ${n} rebooted at once` },
    );
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
