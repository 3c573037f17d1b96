// Gate reaction, end to end: from the moment a running healthcheck's pod process exits 0 to the rollout's upgrade call
// for the next node, through the real kubelet-status → pod watch path (the real Job controller runs beside it; a one-pod
// Job's pass no longer waits for its Complete: provider/kube/runnerPod.ts). Method in bench/README.md.
//
// A simulated cluster (1 control plane + `workers` workers on Talos v1.13.0, 0.2 s reboots) is rolled `rounds` times
// (v1.13.0 → v1.13.1 → ...), one node per wave, each wave gated by one healthcheck whose process waits on a file, then
// writes its exit time (`date +%s%N`) and exits 0. For every wave the bench waits until the check's process has
// started, lets it run for CHECK_RUN_MS, opens the file gate, and pairs the exit time with the first Talos
// upgrade call (ImageService.Pull / MachineService.Upgrade, recorded where the simulated node receives it) that
// follows. Omni notices a finished check at its next requeue: every 30 s by default.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { createKubeApi } from "../provider/kube";
import { runRollout } from "../provider/rollout/run";
import { createTalosApi } from "../provider/talos";
import { composeHealthcheck, validateHealthcheck } from "../provider/template";
import { startSimCluster } from "../sim/cluster";
import { Metric, machineNote, percentile, round } from "./metrics";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How long each check runs before its gate file opens. Longer than the Job controller's 1 s pod-update batch period
 * (a pod that finishes within a second of its Running update rides on that update's pending sync and is seen sooner),
 * as most real checks (a few kubectl calls) do.
 */
const CHECK_RUN_MS = 1500;

export interface GateReaction {
  p50: number;
  p95: number;
  max: number;
  n: number;
  /** Kubernetes API requests the rollout's port made per wave (gate + node). */
  requestsPerWave: number;
  /** p50 of the two parts of a sample: exit → the runner's verdict, and that verdict → the upgrade call. */
  toVerdictP50: number;
  verdictToCallP50: number;
}

/** The check: wait for `<dir>/open`, record the exit time in ns, exit 0. `$$$$` is the shell's `$$` after Kubernetes' `$$` escaping. */
function gateScript(dir: string): string {
  // Written to a temporary name, then renamed: the bench never reads a half-written time.
  return `touch ${dir}/started.$$$$; while [ ! -e ${dir}/open ]; do sleep 0.01; done; ` +
    `echo \`date +%s%N\` > ${dir}/t.$$$$; mv ${dir}/t.$$$$ ${dir}/exit.$$$$; exit 0`;
}

function newFile(dir: string, prefix: string, seen: Set<string>): string | undefined {
  const f = fs.readdirSync(dir).find((n) => n.startsWith(prefix) && !seen.has(n));
  if (f) seen.add(f);
  return f;
}

export async function benchGateReactionE2E(opts: { workers?: number; rounds?: number } = {}): Promise<GateReaction> {
  const workers = opts.workers ?? 9;
  const rounds = opts.rounds ?? 3;
  const gateDir = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-bench-gate-"));
  const s = await startSimCluster({ controlPlanes: 1, workers, version: "v1.13.0", workloadPodsPerNode: 0, bootSeconds: 0.2, pullMs: 20, installMs: 20 });
  const kube = createKubeApi(s.kubeconfig);
  const talos = createTalosApi(s.talosconfig);
  // Probe: when each simulated node receives the first call of its upgrade.
  const upgradeCalls: number[] = [];
  for (const node of s.talos.nodes()) {
    const n = node as unknown as Record<"pull" | "legacyUpgrade", (...a: unknown[]) => Promise<unknown>>;
    for (const m of ["pull", "legacyUpgrade"] as const) {
      const orig = n[m].bind(node);
      n[m] = (...a: unknown[]) => {
        upgradeCalls.push(Date.now());
        return orig(...a);
      };
    }
  }
  // Trace: when the runner returned each verdict (splits a sample into the gate's part and the rollout's).
  const verdicts: number[] = [];
  const runCheck = kube.runCheck.bind(kube);
  kube.runCheck = (...a) => runCheck(...a).then((o) => {
    if (o.state === "passed") verdicts.push(Date.now());
    return o;
  });
  const cluster = "bench-gate";
  const job = YAML.stringify({
    apiVersion: "batch/v1", kind: "Job", metadata: { namespace: "default" },
    spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", containers: [{ name: "check", image: "busybox", command: ["sh", "-c", gateScript(gateDir)] }] } } },
  });
  const v = validateHealthcheck({ name: "gate", job, interval: "5s" }, { cluster });
  if (!v.ok) throw new Error(`bench healthcheck invalid: ${JSON.stringify(v.failures)}`);
  const check = composeHealthcheck(v.healthcheck, cluster);
  const exits: number[] = [];
  const samples: number[] = [];
  const toVerdict: number[] = [];
  const verdictToCall: number[] = [];
  const started = new Set<string>();
  const exited = new Set<string>();
  let waves = 0;
  const before = kube.stats().requests;
  try {
    let last = "v1.13.0";
    for (let r = 1; r <= rounds; r++) {
      const target = `v1.13.${r}`;
      let done = false;
      const run = runRollout(kube, talos, {
        cluster, holder: `bench@${process.pid}`, targetVersion: target, lastUpgradeVersion: last,
        installerImage: (_m, ver) => `ghcr.io/siderolabs/installer:${ver}`,
        healthchecks: [check], holdTimeoutMs: 300_000, nodeTimeoutMs: 120_000, readyPollMs: 500,
      }).finally(() => (done = true));
      // Opens the gate once per wave, for a check whose process is already running.
      while (!done) {
        if (!newFile(gateDir, "started.", started)) {
          await sleep(5);
          continue;
        }
        await sleep(CHECK_RUN_MS);
        fs.writeFileSync(path.join(gateDir, "open"), "");
        let exitFile: string | undefined;
        while (!(exitFile = newFile(gateDir, "exit.", exited)) && !done) await sleep(2);
        fs.rmSync(path.join(gateDir, "open"), { force: true });
        if (exitFile) exits.push(Number(fs.readFileSync(path.join(gateDir, exitFile), "utf8").trim()) / 1e6);
      }
      const st = await run;
      if (st.phase !== "Done") throw new Error(`bench rollout to ${target} ended ${st.phase}: ${st.error}`);
      waves += st.waves;
      last = target;
    }
    for (const e of exits) {
      const call = upgradeCalls.find((c) => c >= e);
      if (call === undefined) continue;
      samples.push(call - e);
      const verdict = verdicts.find((t) => t >= e && t <= call);
      if (verdict !== undefined) {
        toVerdict.push(verdict - e);
        verdictToCall.push(call - verdict);
      }
    }
  } finally {
    talos.close();
    await kube.close();
    await s.stop();
    fs.rmSync(gateDir, { recursive: true, force: true });
  }
  samples.sort((a, b) => a - b);
  return {
    p50: round(percentile(samples, 50)), p95: round(percentile(samples, 95)), max: round(samples[samples.length - 1] ?? NaN),
    n: samples.length, requestsPerWave: round((kube.stats().requests - before) / Math.max(1, waves)),
    toVerdictP50: round(percentile(toVerdict.sort((a, b) => a - b), 50)),
    verdictToCallP50: round(percentile(verdictToCall.sort((a, b) => a - b), 50)),
  };
}

/** For bench/main.ts. */
export async function metrics(): Promise<Metric[]> {
  const load0 = os.loadavg()[0];
  const r = await benchGateReactionE2E();
  const load = machineNote(load0, os.loadavg()[0]);
  process.stderr.write(`bench gate-reaction: ${JSON.stringify(r)} ${load}\n`);
  const omni = `Omni: the pass is seen at the next requeue, every 30 s by default (up to 30,000 ms); ${load}; ` +
    `exit → runner verdict p50 ${r.toVerdictP50} ms, verdict → upgrade call p50 ${r.verdictToCallP50} ms`;
  const how = "check process exits 0 → kubelet posts the pod Succeeded → runner's pod watch (a one-pod Job: the pod settles it) → fresh read of the Job → next node's upgrade call";
  return [
    { name: "gate_reaction_e2e_ms_p50", value: r.p50, unit: `ms (n=${r.n})`, compared_with: `${omni}; ${how}` },
    { name: "gate_reaction_e2e_ms_p95", value: r.p95, unit: `ms (n=${r.n}, max ${r.max})`, compared_with: `${omni}; ${how}` },
    { name: "kube_requests_per_wave", value: r.requestsPerWave, unit: "requests per gated wave", compared_with: "the rollout's Kubernetes API requests per wave: gate Job, watch, node reads, cordon/drain, status mirror" },
  ];
}

if (require.main === module) {
  benchGateReactionE2E().then((r) => process.stdout.write(JSON.stringify(r, null, 2) + "\n"), (e) => {
    process.stderr.write(`${(e as Error).stack}\n`);
    process.exitCode = 1;
  });
}
