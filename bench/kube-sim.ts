// Kube sim cost: time for startKubeSim (Nodes registered, the real ReplicaSet/DaemonSet controllers' pods placed by
// the real scheduler and Running) with 5 and 1,000 nodes, the sim's memory (RSS of this process), the control plane's
// (kube-apiserver, kube-controller-manager, kube-scheduler), and one Job's create → Complete latency through the real
// Job controller at that size. Each size gets a fresh control plane. Run alone: `node dist/bench/kube-sim.js [sizes...]`.
import { execFileSync } from "node:child_process";
import { startControlPlane } from "../sim/controlplane";
import { MachineSpec, startKubeSim } from "../sim/kube";
import { Rest, sleep } from "../sim/kube/rest";
import { Metric, round } from "./metrics";

function machinesFor(n: number): MachineSpec[] {
  const cps = n >= 100 ? 3 : 1;
  return Array.from({ length: n }, (_, i) => ({
    name: i < cps ? `cp-${i + 1}` : `w-${i - cps + 1}`,
    role: i < cps ? ("controlplane" as const) : ("worker" as const),
    address: `10.7.${Math.floor(i / 250)}.${(i % 250) + 2}`,
    talosVersion: "v1.12.4",
  }));
}

function rssMiB(pid: number): number {
  try {
    return Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim()) / 1024;
  } catch {
    return NaN;
  }
}

async function jobLatency(kubeconfig: string): Promise<number> {
  const rest = await Rest.fromKubeconfig(kubeconfig);
  try {
    const name = `bench-${Date.now().toString(36)}`;
    const t0 = Date.now();
    await rest.post("/apis/batch/v1/namespaces/default/jobs", {
      apiVersion: "batch/v1", kind: "Job", metadata: { name },
      spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox", command: ["true"] }] } } },
    });
    for (;;) {
      const j = await rest.get(`/apis/batch/v1/namespaces/default/jobs/${name}`);
      if ((j.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === "Complete" && c.status === "True")) return Date.now() - t0;
      await sleep(20);
    }
  } finally {
    rest.close();
  }
}

export async function measure(n: number): Promise<Metric[]> {
  const cp = await startControlPlane();
  try {
    global.gc?.();
    const rss0 = process.memoryUsage().rss / 2 ** 20;
    const t0 = Date.now();
    const sim = await startKubeSim({ kubeconfig: cp.kubeconfig, machines: machinesFor(n), workloadPodsPerNode: 2 });
    const startMs = Date.now() - t0;
    await sleep(1000);
    global.gc?.();
    const rss1 = process.memoryUsage().rss / 2 ** 20;
    const stats = sim.stats();
    const jobMs = await jobLatency(cp.kubeconfig);
    const rssOf = (name: "kube-apiserver" | "kube-controller-manager" | "kube-scheduler") => {
      const pid = cp.pidOf(name);
      return pid ? rssMiB(pid) : NaN;
    };
    const apiRss = rssOf("kube-apiserver");
    const kcmRss = rssOf("kube-controller-manager");
    const schedRss = rssOf("kube-scheduler");
    await sim.stop();
    process.stderr.write(`kube-sim ${n} nodes: start ${startMs} ms, ${stats.pods} pods, ${stats.apiRequests} API requests, RSS ${round(rss0)} → ${round(rss1)} MiB, ` +
      `job ${jobMs} ms, RSS kube-apiserver ${round(apiRss)} MiB, kube-controller-manager ${round(kcmRss)} MiB, kube-scheduler ${round(schedRss)} MiB\n`);
    return [
      { name: `kube_sim_start_ms_${n}`, value: startMs, unit: "ms", compared_with: `Nodes + ${stats.pods} pods Running (${stats.apiRequests} API requests)` },
      { name: `kube_sim_rss_mib_${n}`, value: round(rss1), unit: "MiB", compared_with: `whole bench process; ${round(rss1 - rss0)} MiB more than before start` },
      { name: `kube_sim_job_ms_${n}`, value: jobMs, unit: "ms", compared_with: "create Job `true` → Complete by the real Job controller (pod scheduled, run by the kubelet emulator), seen by GET polling (20 ms)" },
      { name: `kube_apiserver_rss_mib_${n}`, value: round(apiRss), unit: "MiB", compared_with: "the real API server holding them" },
      { name: `kube_controller_manager_rss_mib_${n}`, value: round(kcmRss), unit: "MiB", compared_with: "the real kube-controller-manager (12 controllers)" },
      { name: `kube_scheduler_rss_mib_${n}`, value: round(schedRss), unit: "MiB", compared_with: "the real kube-scheduler" },
    ];
  } finally {
    await cp.stop();
  }
}

export async function metrics(sizes = [5, 1000]): Promise<Metric[]> {
  const out: Metric[] = [];
  for (const n of sizes) out.push(...(await measure(n)));
  return out;
}

if (require.main === module) {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  metrics(sizes.length ? sizes : undefined).then(
    (m) => process.stdout.write(JSON.stringify(m, null, 2) + "\n"),
    (err) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}
