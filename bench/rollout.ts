// The rollout loop at 5, 50 and 1,000 nodes on the simulated cluster: orchestration overhead per node, peak memory of
// the rollout process, and Kubernetes API requests per node.
//
// Set-up: the simulated cluster (kube-apiserver + etcd as their own processes, the Talos nodes and the kubelet/Job
// emulator in THIS process) runs in the bench process; the rollout runs in a child process (`--child`) with the real
// adapters configured as the Pulumi handler configures them (readyPollMs 500, the Talos port's default 1 s probe
// interval, the port's 500 ms status throttle), so its peak RSS is the rollout's own. Nodes start on v1.13.0 (the
// LifecycleService path: pull, install, cordon + drain through the Kubernetes port, reboot) and go to v1.13.2; one
// passing healthcheck (a Job whose process exits 0) gates every wave; no workload pods; 0.2 s reboots.
//
// Overhead per node = (run wall time − waves × simulated node time − time spent in healthchecks) / nodes, where the
// simulated node time is the sim's pull + install + down time of one node (the nodes of a wave run in parallel) and
// healthcheck time is the time inside runCheck (Job created → completion observed by watch → Job and pods deleted).
// Run alone: `node dist/bench/rollout.js [5 50 1000]` (prints JSON).
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as YAML from "yaml";
import type { Metric } from "./metrics";
import { round } from "./metrics";

const FROM = "v1.13.0";
const TARGET = "v1.13.2";
const TIMING = { bootSeconds: 0.2, pullMs: 20, installMs: 20 };

interface Size { nodes: number; controlPlanes: number; workerParallelism: number }
const SIZES: Size[] = [
  { nodes: 5, controlPlanes: 3, workerParallelism: 1 },
  { nodes: 50, controlPlanes: 3, workerParallelism: 5 },
  { nodes: 1000, controlPlanes: 3, workerParallelism: 50 },
];

interface ChildConfig {
  kubeconfigPath: string;
  talosconfigPath: string;
  cluster: string;
  workerParallelism: number;
  check: unknown;
}

export interface ChildResult {
  phase: string;
  error: string;
  wallMs: number;
  waves: number;
  nodes: number;
  checkMs: number;
  checks: number;
  requests: number;
  byMethod: Record<string, number>;
  peakRssMB: number;
}

/**
 * This process's peak RSS from /proc/self/status (VmHWM: the high-water mark of this process's own memory). Not
 * `resourceUsage().maxRSS`: Linux keeps that across the spawn's vfork + exec, so a child reports its parent's peak
 * whenever the parent was larger (the bench process holding a 1,000-node sim: ~300 MB where the rollout used ~215 MB).
 */
function highWaterRss(): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

/** The child: one rollout with the real adapters, measured. */
async function child(cfg: ChildConfig): Promise<ChildResult> {
  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
  const { createKubeApi } = require("../provider/kube") as typeof import("../provider/kube");
  const { createTalosApi } = require("../provider/talos") as typeof import("../provider/talos");
  const { runRollout } = require("../provider/rollout/run") as typeof import("../provider/rollout/run");
  const kube = createKubeApi(fs.readFileSync(cfg.kubeconfigPath, "utf8"));
  const talos = createTalosApi(fs.readFileSync(cfg.talosconfigPath, "utf8"));
  let checkMs = 0, checks = 0;
  // A view over the port that times the healthchecks (not another implementation of it).
  const timed = Object.assign(Object.create(kube), {
    runCheck: async (...args: Parameters<typeof kube.runCheck>) => {
      const t0 = performance.now();
      try {
        return await kube.runCheck(...args);
      } finally {
        checkMs += performance.now() - t0;
        checks++;
      }
    },
  });
  const t0 = performance.now();
  let phase = "", error = "", waves = 0, nodes = 0;
  try {
    const st = await runRollout(timed, talos, {
      cluster: cfg.cluster,
      holder: `bench@${process.pid}`,
      targetVersion: TARGET,
      installerImage: (_m, v) => `ghcr.io/siderolabs/installer:${v}`,
      healthchecks: [cfg.check as never],
      strategy: { workerParallelism: cfg.workerParallelism },
      holdTimeoutMs: 600_000,
      nodeTimeoutMs: 300_000,
      readyPollMs: 500,
    });
    phase = st.phase;
    waves = st.waves;
    nodes = st.machines.length;
  } catch (err) {
    phase = "error";
    error = (err as Error).message;
  }
  const wallMs = performance.now() - t0;
  await kube.flush();
  const stats = kube.stats();
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage.rss(), highWaterRss());
  talos.close();
  await kube.close();
  return { phase, error, wallMs, waves, nodes, checkMs, checks, requests: stats.requests, byMethod: stats.byMethod, peakRssMB: peak / (1024 * 1024) };
}

function runChild(cfg: ChildConfig): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    // Asynchronously: the simulated Talos nodes live in this process and must keep answering.
    const c = spawn(process.execPath, ["--no-deprecation", __filename, "--child", JSON.stringify(cfg)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "";
    c.stdout.on("data", (d) => (out += d));
    c.stderr.on("data", (d) => (err += d));
    c.on("error", reject);
    c.on("close", (code) => {
      const last = out.trim().split("\n").pop() ?? "";
      try {
        resolve(JSON.parse(last) as ChildResult);
      } catch {
        reject(new Error(`bench rollout child exited ${code}: ${err.trim().split("\n").slice(-5).join(" | ")}`));
      }
    });
  });
}

export interface SizeResult extends ChildResult {
  size: Size;
  simNodeMs: number;
  overheadMsPerNode: number;
  requestsPerNode: number;
}

export async function benchSize(size: Size): Promise<SizeResult> {
  const { startSimCluster } = require("../sim/cluster") as typeof import("../sim/cluster");
  const { composeHealthcheck, validateHealthcheck } = require("../provider/template") as typeof import("../provider/template");
  const s = await startSimCluster({
    controlPlanes: size.controlPlanes, workers: size.nodes - size.controlPlanes, version: FROM, workloadPodsPerNode: 0, ...TIMING,
  });
  try {
    const cluster = `bench${size.nodes}`;
    const job = YAML.stringify({
      apiVersion: "batch/v1", kind: "Job", metadata: { namespace: "default" },
      spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", containers: [{ name: "check", image: "busybox", command: ["sh", "-c", "exit 0"] }] } } },
    });
    const v = validateHealthcheck({ name: "quick", job, interval: "5s" }, { cluster });
    if (!v.ok) throw new Error(`bench healthcheck invalid: ${JSON.stringify(v.failures)}`);
    const r = await runChild({
      kubeconfigPath: s.kubeconfigPath, talosconfigPath: s.talosconfigPath, cluster,
      workerParallelism: size.workerParallelism, check: composeHealthcheck(v.healthcheck, cluster),
    });
    if (r.phase !== "Done") throw new Error(`bench rollout of ${size.nodes} nodes ended ${r.phase}: ${r.error}`);
    const simNodeMs = TIMING.bootSeconds * 1000 + TIMING.pullMs + TIMING.installMs;
    return {
      ...r, size, simNodeMs,
      overheadMsPerNode: (r.wallMs - r.waves * simNodeMs - r.checkMs) / r.nodes,
      requestsPerNode: r.requests / r.nodes,
    };
  } finally {
    await s.stop();
  }
}

/** For bench/main.ts. */
export async function metrics(sizes: number[] = SIZES.map((s) => s.nodes)): Promise<Metric[]> {
  const out: Metric[] = [];
  const results: SizeResult[] = [];
  for (const size of SIZES.filter((s) => sizes.includes(s.nodes))) {
    const r = await benchSize(size);
    results.push(r);
    process.stderr.write(`bench rollout ${size.nodes}: ${JSON.stringify({ ...r, size: undefined })}\n`);
  }
  for (const r of results) {
    const n = r.size.nodes;
    const how = `${n} nodes, ${r.waves} waves (worker parallelism ${r.size.workerParallelism}), ${round(r.wallMs / 1000)} s run, ${round(r.checkMs / r.checks)} ms per check`;
    out.push({
      name: `overhead_ms_per_node_${n}`, value: round(r.overheadMsPerNode), unit: "ms per node",
      compared_with: `target < 500 ms per node; ${how}; Omni requeues every 30 s per machine step, and one interval per gate`,
    });
  }
  const big = results.find((r) => r.size.nodes === 1000);
  if (big) {
    out.push({
      name: "rollout_peak_rss_mb_1000", value: round(big.peakRssMB), unit: "MB",
      compared_with: "target < 300 MB (peak RSS of the rollout process alone: the rollout runs in a child, the sim in the bench process)",
    });
  }
  for (const r of results) {
    out.push({
      name: `api_requests_per_node_${r.size.nodes}`, value: round(r.requestsPerNode), unit: "requests per node",
      compared_with: `flat as the cluster grows; ${r.requests} Kubernetes API requests in all (${Object.entries(r.byMethod).map(([m, c]) => `${m} ${c}`).join(", ")})`,
    });
  }
  return out;
}

if (require.main === module) {
  const i = process.argv.indexOf("--child");
  if (i >= 0) {
    child(JSON.parse(process.argv[i + 1]) as ChildConfig).then(
      (r) => process.stdout.write(JSON.stringify(r) + "\n"),
      (e) => {
        process.stderr.write(String(e?.stack ?? e) + "\n");
        process.exit(1);
      },
    );
  } else {
    const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
    metrics(sizes.length ? sizes : undefined).then(
      (m) => process.stdout.write(JSON.stringify(m, null, 2) + "\n"),
      (e) => {
        process.stderr.write(String(e?.stack ?? e) + "\n");
        process.exit(1);
      },
    );
  }
}
