// A rollout at 5, 50 and 1,000 nodes as a user runs it: `pulumi up` of a program with a Cluster, a Healthcheck and a
// TalosUpgrade (worker parallelism 10 at every size), against a simulated cluster started by `talos-gate sim up` in its
// own process. Measured: the rollout's time per wave beyond the simulated node time (checks included), `pulumi up`'s
// total, the peak RSS of the dynamic-provider process `pulumi up` started, and the Kubernetes API requests and bytes
// the rollout's port made and read per node (from the status it mirrors into the cluster). Method in bench/README.md.
// Run alone: `node dist/bench/rollout.js [5 50 1000]` (prints JSON).
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation";
import { coreApi, readMirroredStatus } from "../cli/common";
import { control } from "../sim/control";
import { readRunning } from "../sim/state";
import { packageRoot, toolsBin } from "../sim/tools";
import { cpuSpeedProbe, cpuWindow, machineNote, Metric, percentile, round, type MachineCpu } from "./metrics";
import { cpuSplitNote, processSampler, type ProcessKind } from "./processes";
import { breakdown, overheadSlowest, type StatusMachine, type WaveInputs } from "./waves";

const FROM = "v1.13.0";
const TARGET = "v1.13.2";
const CONTROL_PLANES = 3;
/** The same at every size, so the figures compare. */
const WORKER_PARALLELISM = 10;
/** The simulated node: image pull, install, then down for the reboot (the nodes of a wave run in parallel). */
const NODE = { pullMs: 20, installMs: 20, bootSeconds: 0.2 };
const SIM_NODE_MS = NODE.pullMs + NODE.installMs + NODE.bootSeconds * 1000;
const SIZES = [5, 50, 1000];
const SAMPLE_MS = 500;
/** How often the processes found are read again (the provider's last reading before it ends). */
const READ_MS = 100;

const CLI = path.join(packageRoot, "dist", "cli", "main.js");

export function talosGate(args: string[], timeoutMs = 600_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--no-deprecation", CLI, ...args], { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`talos-gate ${args.join(" ")}: ${(err as Error).message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * The Kubernetes requests of a TALOS_GATE_KUBE_TRACE file (provider/kube/trace.ts) per node, by method and path with
 * names and query values left out ("GET /api/v1/nodes/{name}"), most frequent first.
 */
function traceSummary(file: string, nodes: number): Record<string, number> {
  const counts = new Map<string, number>();
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const [, method, where] = line.split(" ");
    if (!method || !where) continue;
    const [p, q] = where.split("?");
    const parts = p.split("/");
    // /api/v1/<plural>/<name>, /api/v1/namespaces/<ns>/<plural>/<name>[/<sub>], /apis/<group>/<version>/…
    const base = parts[1] === "api" ? 3 : 4;
    const shape = parts.map((x, i) => (i < base ? x : parts[i - 1] === "namespaces" ? "{ns}" : i > base && parts[i - 1] !== "namespaces" && (i - base) % 2 === 1 ? "{name}" : x));
    const keys = q ? "?" + q.split("&").map((kv) => kv.split("=")[0]).sort().join("&") : "";
    const k = `${method} ${shape.join("/")}${keys}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return Object.fromEntries([...counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, round(v / nodes, 2)]));
}

/** A program directory as a user's project has it: Pulumi.yaml, index.js, node_modules linking this checkout. */
export function programDir(dir: string, cluster: string, simDir: string): string {
  fs.mkdirSync(path.join(dir, "node_modules", "@pulumi"), { recursive: true });
  fs.symlinkSync(path.join(packageRoot, "node_modules", "@pulumi", "pulumi"), path.join(dir, "node_modules", "@pulumi", "pulumi"));
  fs.symlinkSync(packageRoot, path.join(dir, "node_modules", "talos-gate"));
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), `name: ${cluster}\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.js\n`);
  fs.writeFileSync(path.join(dir, "index.js"), [
    'const fs = require("fs");',
    'const pulumi = require("@pulumi/pulumi");',
    'const gate = require("talos-gate");',
    `const read = (f) => pulumi.secret(fs.readFileSync(${JSON.stringify(simDir)} + "/" + f, "utf8"));`,
    `const cluster = new gate.Cluster("sim", { clusterName: ${JSON.stringify(cluster)}, kubeconfig: read("kubeconfig"), talosconfig: read("talosconfig") });`,
    "// One passing check gates every wave: a Job whose process exits 0, run through the real Job controller.",
    'const check = new gate.Healthcheck("quick", { cluster, name: "quick", interval: "5s", job: {',
    '  apiVersion: "batch/v1", kind: "Job",',
    '  spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", containers: [{ name: "check", image: "busybox", command: ["sh", "-c", "exit 0"] }] } } },',
    "} });",
    `const upgrade = new gate.TalosUpgrade("talos", { cluster, version: ${JSON.stringify(TARGET)}, healthchecks: [check],`,
    `  strategy: { workerParallelism: ${WORKER_PARALLELISM} }, holdTimeout: "10m", nodeTimeout: "5m" });`,
    "exports.phase = upgrade.status.apply((s) => s.phase);",
    "",
  ].join("\n"));
  return dir;
}

export interface SizeResult {
  nodes: number;
  waves: number;
  simStartMs: number;
  upMs: number;
  /** From the provider's first "upgrading N of M" line to its "done:" line, as they arrived on `pulumi up`'s stdout. */
  rolloutMs: number;
  /** The same span by the provider's own clock (the mirrored status's startedAt → finishedAt), as a cross-check. */
  providerClockMs: number;
  overheadMsPerWave: number;
  /** The figure by the method before 2026-12-03: the span first upgrade call → booted subtracted (talos-gate's drain in it). */
  overheadMsPerWaveOldMethod: number;
  /** The same with each wave's slowest sim node subtracted instead of the p50 (bench/waves.ts). */
  overheadMsPerWaveSlowest?: number;
  /** The sim's own node time per upgrade in this run (pull, install, reboot → booted: SimSpan.ownMs), p50 and max, ms. */
  nodeTimeP50: number;
  nodeTimeMax: number;
  /** The load average (1 min) when `pulumi up` started and when it ended: the machine is shared. */
  load: [number, number];
  /** The cores' busy and steal shares during `pulumi up`, and the CPU probe before the sim started. */
  cpu: MachineCpu;
  /** Peak RSS of each dynamic-provider process seen, by pid. */
  providerPeakRss: Record<number, number>;
  /** CPU time of the dynamic-provider processes during `pulumi up` (their load, the handlers and the rollout). */
  providerCpuMs: number;
  /** CPU ms during `pulumi up` of the provider, Pulumi's processes and each of the sim's (bench/processes.ts). */
  cpuByKind: Partial<Record<ProcessKind, number>>;
  api: { requests: number; watches: number; bytesread: number };
  /** With BENCH_KUBE_TRACE set: the provider's Kubernetes requests per node by method and path shape. */
  trace?: Record<string, number>;
}

export async function benchSize(nodes: number): Promise<SizeResult> {
  const cluster = `bench${nodes}`;
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-bench-rollout-")));
  const simDir = path.join(work, "sim");
  const log = path.join(work, "pulumi-up.log");
  let ok = false;
  // Before the sim starts, while nothing of the bench runs: the probe reads the machine, not the bench's own cluster.
  const speedMs = cpuSpeedProbe();
  const t0 = performance.now();
  await talosGate(["sim", "up", "--dir", simDir, "--control-planes", String(CONTROL_PLANES), "--workers", String(nodes - CONTROL_PLANES),
    "--version", FROM, "--boot-seconds", String(NODE.bootSeconds), "--pull-ms", String(NODE.pullMs), "--install-ms", String(NODE.installMs),
    "--workload-pods", "0"]);
  const simStartMs = performance.now() - t0;
  // Opt-in: BENCH_KUBE_TRACE=1 (into the work dir) or =<file> (kept): the provider traces its Kubernetes requests.
  const asked = process.env.BENCH_KUBE_TRACE;
  const traceFile = !asked ? undefined : asked === "1" ? path.join(work, "kube-trace.log") : path.resolve(`${asked}.${nodes}`);
  try {
    fs.mkdirSync(path.join(work, "state"));
    const envVars = {
      PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`, PULUMI_HOME: path.join(work, "home"),
      PULUMI_CONFIG_PASSPHRASE: "bench", PULUMI_SKIP_UPDATE_CHECK: "true", PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      PULUMI_SUPPRESS_NEO_LINK: "true", PATH: `${toolsBin}:${process.env.PATH ?? ""}`,
      ...(traceFile ? { TALOS_GATE_KUBE_TRACE: traceFile } : {}),
      // Opt-in: BENCH_CPU_PROF=<file> has the provider profile its rollout (provider/handlers/cpuProfile.ts) into
      // <file>.<nodes>.cpuprofile (open in Chrome DevTools or speedscope).
      ...(process.env.BENCH_CPU_PROF ? { TALOS_GATE_CPU_PROFILE: `${path.resolve(process.env.BENCH_CPU_PROF)}.${nodes}.cpuprofile` } : {}),
    };
    const dir = programDir(path.join(work, "program"), cluster, simDir);
    const stack = await LocalWorkspace.createOrSelectStack({ stackName: "bench", workDir: dir }, {
      pulumiCommand: await PulumiCommand.get({ root: path.dirname(toolsBin) }), envVars,
    });
    // Each line of `pulumi up`'s output, with the time it arrived here.
    const lines: { t: number; line: string }[] = [];
    let partial = "";
    const out = fs.openSync(log, "w");
    const onOutput = (chunk: string) => {
      const t = performance.now();
      fs.writeSync(out, chunk);
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) lines.push({ t, line });
    };
    const simPid = readRunning(simDir)?.pid;
    if (!simPid) throw new Error(`no running sim in ${simDir} to sample the processes of`);
    const sampler = processSampler(dir, simPid, { discoverMs: SAMPLE_MS, readMs: READ_MS });
    const cores = cpuWindow();
    const load0 = os.loadavg()[0];
    const up0 = performance.now();
    let res;
    try {
      res = await stack.up({ onOutput });
    } finally {
      fs.closeSync(out);
    }
    const upMs = performance.now() - up0;
    const load1 = os.loadavg()[0];
    const shares = cores();
    const { providerPeaks: peaks, cpuByKind } = sampler.stop();
    if (res.outputs.phase?.value !== "Done") throw new Error(`the rollout of ${nodes} nodes ended ${res.outputs.phase?.value}`);
    const prefix = `[talos-gate/${cluster}] `;
    const started = lines.find((l) => l.line.includes(`${prefix}upgrading `));
    const done = lines.find((l) => l.line.includes(`${prefix}done: `));
    const m = started && / upgrading (\d+) of (\d+) machines to \S+ in (\d+) waves?/.exec(started.line);
    if (!started || !done || !m) throw new Error(`no "upgrading … in N waves" and "done:" lines in the output of pulumi up (${log})`);
    if (Number(m[1]) !== nodes) throw new Error(`expected ${nodes} machines to upgrade: ${started.line}`);
    const waves = Number(m[3]);
    const rolloutMs = done.t - started.t;
    const doc = JSON.parse(await talosGate(["status", "--json", "--cluster", cluster, "--kubeconfig", path.join(simDir, "kubeconfig")]));
    if (!doc.spec.api) throw new Error(`the status of ${cluster} has no api figures`);
    const at = readRunning(simDir)?.control;
    if (!at) throw new Error(`the sim in ${simDir} has no control endpoint to read its node times from`);
    const spans = await control.nodeSpans(at);
    const nodeTimes = spans.map((s) => s.ownMs).sort((a, b) => a - b);
    // The figure as measured before the node time left out talos-gate's drain (first call → booted): for comparison.
    const spanP50 = percentile(spans.map((s) => s.ms).sort((a, b) => a - b), 50);
    if (nodeTimes.length < nodes) throw new Error(`the sim measured ${nodeTimes.length} node upgrades, expected ${nodes}`);
    const nodeTimeP50 = percentile(nodeTimes, 50);
    // The raw status (its machines' waves and phase marks; `status --json` leaves the marks out).
    const mirrored = await readMirroredStatus(coreApi(fs.readFileSync(path.join(simDir, "kubeconfig"), "utf8")), cluster);
    const status = mirrored?.status as { startedAt: string; finishedAt?: string; machines: StatusMachine[] } | undefined;
    if (!status?.startedAt) throw new Error(`no mirrored status of ${cluster} to read the waves from`);
    const inputs: WaveInputs = { startedAt: status.startedAt, finishedAt: status.finishedAt, machines: status.machines, spans };
    process.stderr.write(`bench rollout ${nodes}: where a wave's time goes\n` +
      breakdown({ ...inputs, ...(traceFile ? { trace: fs.readFileSync(traceFile, "utf8").split("\n") } : {}) }));
    if (traceFile && !traceFile.startsWith(work)) fs.writeFileSync(`${traceFile}.waves.json`, JSON.stringify({ ...inputs, traceFile }));
    const slowest = overheadSlowest(rolloutMs, waves, status.machines, spans, status.startedAt);
    ok = true;
    return {
      nodes, waves, simStartMs, upMs, rolloutMs,
      providerClockMs: Date.parse(doc.spec.finishedat) - Date.parse(doc.spec.startedat),
      // The sim's measured node time, not its nominal SIM_NODE_MS: on 2 shared cores a 1,000-node sim is slower.
      overheadMsPerWave: (rolloutMs - waves * nodeTimeP50) / waves,
      overheadMsPerWaveOldMethod: (rolloutMs - waves * spanP50) / waves,
      ...(slowest !== undefined ? { overheadMsPerWaveSlowest: slowest } : {}),
      nodeTimeP50, nodeTimeMax: nodeTimes[nodeTimes.length - 1], load: [round(load0, 2), round(load1, 2)],
      cpu: { ...shares, speedMs: round(speedMs) },
      providerPeakRss: Object.fromEntries(peaks),
      providerCpuMs: cpuByKind.provider ?? 0,
      cpuByKind,
      api: doc.spec.api,
      ...(traceFile ? { trace: traceSummary(traceFile, nodes) } : {}),
    };
  } finally {
    await talosGate(["sim", "down", "--dir", simDir], 120_000).catch(() => undefined);
    // A kept trace keeps pulumi up's output beside it (each line's arrival is in neither: the trace has the times).
    if (traceFile && !traceFile.startsWith(work) && fs.existsSync(log)) fs.copyFileSync(log, `${traceFile}.pulumi-up.log`);
    if (ok) fs.rmSync(work, { recursive: true, force: true });
    else process.stderr.write(`bench rollout ${nodes}: kept ${work} (pulumi up's output in ${log})\n`);
  }
}

const mb = (bytes: number) => bytes / (1024 * 1024);
const withNote = (note: string) => (note ? `; ${note}` : "");
const kb = (bytes: number) => bytes / 1024;

/** For bench/main.ts. */
export async function metrics(sizes: number[] = SIZES): Promise<Metric[]> {
  const results: SizeResult[] = [];
  for (const n of SIZES.filter((s) => sizes.includes(s))) {
    const r = await benchSize(n);
    results.push(r);
    process.stderr.write(`bench rollout ${n}: ${JSON.stringify(r)}\n`);
  }
  const out: Metric[] = [];
  const same = `worker parallelism ${WORKER_PARALLELISM} at every size`;
  for (const r of results) {
    out.push({
      name: `overhead_ms_per_wave_${r.nodes}`, value: round(r.overheadMsPerWave), unit: "ms per wave",
      compared_with: `Omni re-evaluates a wave's gate at its next requeue, every 30 s by default (up to 30,000 ms per wave); ` +
        `${r.nodes} nodes in ${r.waves} waves (${same}), rollout ${round(r.rolloutMs / 1000)} s of a ${round(r.upMs / 1000)} s pulumi up, ` +
        `the sim's measured node time per wave subtracted (p50 ${round(r.nodeTimeP50)} ms, max ${round(r.nodeTimeMax)} ms, ` +
        `pull, install and reboot, talos-gate's drain between them not; nominal ${SIM_NODE_MS} ms), the gate's Job healthcheck not ` +
        `(by the method before, with the drain counted as node time: ${round(r.overheadMsPerWaveOldMethod)} ms); ` +
        machineNote(r.load[0], r.load[1], r.cpu) + withNote(cpuSplitNote(r.cpuByKind, r.upMs, os.cpus().length)),
    });
  }
  for (const r of results) {
    const all = Object.values(r.cpuByKind).reduce((a, b) => a + (b ?? 0), 0);
    out.push({
      name: `provider_cpu_ms_per_wave_${r.nodes}`, value: round(r.providerCpuMs / r.waves), unit: "CPU ms per wave",
      compared_with: `the share of a wave's work talos-gate's own process does (the dynamic provider over the whole pulumi up: its ` +
        `start, the Cluster and the Healthcheck, the rollout), against ${round(all / r.waves)} CPU ms per wave of every process ` +
        `counted (the cluster's, the sim's, Pulumi's and the provider's); the same run as overhead_ms_per_wave_${r.nodes}`,
    });
  }
  for (const r of results) {
    if (r.overheadMsPerWaveSlowest === undefined) continue;
    out.push({
      name: `overhead_ms_per_wave_slowest_${r.nodes}`, value: round(r.overheadMsPerWaveSlowest), unit: "ms per wave",
      compared_with: `the same run as overhead_ms_per_wave_${r.nodes} with each wave's slowest sim node subtracted instead of the ` +
        `p50 (a wave of parallel nodes lasts as long as its slowest one); load average ${r.load[0]} → ${r.load[1]}`,
    });
  }
  const big = results.find((r) => r.nodes === 1000);
  if (big) {
    const peaks = Object.values(big.providerPeakRss);
    if (peaks.length === 0) throw new Error("no dynamic-provider process was seen during the 1,000-node pulumi up");
    out.push({
      name: "provider_rss_mb_1000", value: round(mb(Math.max(...peaks))), unit: "MiB (VmHWM)",
      compared_with: `target < 300 MB (this peak is ${round(Math.max(...peaks) / 1e6)} MB in decimal units); ` +
        `the dynamic-provider process pulumi up started (${peaks.length} seen), its VmHWM read every ${READ_MS} ms ` +
        `during a 1,000-node rollout; the sim runs in its own process`,
    });
  }
  for (const r of results) {
    out.push({
      name: `api_requests_per_node_${r.nodes}`, value: round(r.api.requests / r.nodes), unit: "requests per node",
      compared_with: `flat as the cluster grows (${same}); ${r.api.requests} Kubernetes API requests in all, ${r.api.watches} of them watches`,
    });
  }
  for (const r of results) {
    out.push({
      name: `api_bytes_per_node_${r.nodes}`, value: round(kb(r.api.bytesread / r.nodes)), unit: "KiB read per node",
      compared_with: `flat as the cluster grows (${same}); ${round(mb(r.api.bytesread))} MiB read from the API server in all`,
    });
  }
  return out;
}

if (require.main === module) {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  metrics(sizes.length ? sizes : undefined).then(
    (m) => process.stdout.write(JSON.stringify(m, null, 2) + "\n"),
    (e) => {
      process.stderr.write(String(e?.stack ?? e) + "\n");
      process.exit(1);
    },
  );
}
