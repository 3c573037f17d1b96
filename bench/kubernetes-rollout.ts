// A KubernetesUpgrade's overhead per unit (issue 24.3), beside the Talos rollout's overhead per wave (bench/rollout.ts):
// 1.35 → 1.36 on a sim of 5 and 50 nodes (3 control planes), run in this process through the real adapters with no
// user gate, as the handler runs it (500 ms poll). Measured: the run's time per unit (a control plane's static pods,
// kube-proxy, a kubelet) beyond the sim's own restart time (static pods and kubelets restart in 200 ms). In process,
// without `pulumi up`: the engine's part is the Talos figure's. Run alone: `node dist/bench/kubernetes-rollout.js [5 50]`.
import { createKubeApi } from "../provider/kube";
import { kubernetesPort } from "../provider/handlers/kubernetesPort";
import { runKubernetesUpgrade } from "../provider/rollout/kubernetesRun";
import { createTalosApi } from "../provider/talos";
import { kubernetesRefusal } from "../provider/talos/compat";
import { startSimCluster } from "../sim/cluster";
import { Metric, round } from "./metrics";

const CONTROL_PLANES = 3;
const SIZES = [5, 50];
const FROM = "v1.35.2";
const TARGET = "v1.36.1";

export interface KubernetesSizeResult {
  nodes: number;
  units: number;
  runMs: number;
  /** The sim's own time: each control plane's static pods and each kubelet restart for this long. */
  simMs: number;
  overheadMsPerUnit: number;
}

export async function benchKubernetes(nodes: number): Promise<KubernetesSizeResult> {
  const s = await startSimCluster({
    controlPlanes: CONTROL_PLANES, workers: nodes - CONTROL_PLANES, version: "v1.13.2", kubernetesVersion: FROM, workloadPodsPerNode: 0,
  });
  const kube = createKubeApi(s.kubeconfig);
  const talos = createTalosApi(s.talosconfig);
  try {
    const t0 = performance.now();
    const status = await runKubernetesUpgrade(kube, talos, kubernetesPort(talos, kube), {
      cluster: `bench-k8s${nodes}`, holder: `bench@${process.pid}`, targetVersion: TARGET, healthchecks: [], holdTimeoutMs: 600_000,
      nodeTimeoutMs: 300_000, readyPollMs: 500, talosRange: kubernetesRefusal,
    });
    const runMs = performance.now() - t0;
    if (status.phase !== "Done") throw new Error(`the Kubernetes upgrade of ${nodes} nodes ended ${status.phase}: ${status.error}`);
    const units = status.machines.length;
    const simMs = CONTROL_PLANES * s.talos.timing.staticPodRestartMs + nodes * s.talos.timing.kubeletRestartMs;
    return { nodes, units, runMs, simMs, overheadMsPerUnit: (runMs - simMs) / units };
  } finally {
    talos.close();
    await kube.close();
    await s.stop();
  }
}

/** For bench/main.ts. */
export async function metrics(sizes: number[] = SIZES): Promise<Metric[]> {
  const out: Metric[] = [];
  for (const n of SIZES.filter((x) => sizes.includes(x))) {
    const r = await benchKubernetes(n);
    process.stderr.write(`bench kubernetes-rollout ${n}: ${JSON.stringify(r)}\n`);
    out.push({
      name: `kubernetes_overhead_ms_per_unit_${r.nodes}`, value: round(r.overheadMsPerUnit), unit: "ms per unit",
      compared_with: `beside overhead_ms_per_wave_* (the Talos rollout); ${r.nodes} nodes: ${r.units} units (${CONTROL_PLANES} control planes, ` +
        `kube-proxy, ${r.nodes} kubelets) one at a time in ${round(r.runMs / 1000)} s, the sim's restart time (${round(r.simMs)} ms) ` +
        `subtracted; no user gate; in process, without pulumi up; the static pod wait polls every 500 ms as the handler's`,
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
