// Condition gates (issue 14):
//  - gate reaction: from the write that makes the condition true to the next node's upgrade call (the Talos port's
//    upgradeNode), on the sim with the real adapters, one sample per node; beside it the Job gate measured the same way
//    (a ConfigMap the check's Job reads with kubectl, interval 5 s, Omni's minimum; 30 s is its default);
//  - a label-selector gate over 1,000 objects: heap held by the watch cache (after GC) and the evaluation time of
//    `objects.all(...)` per watch event, with the event-to-verdict latency.
// Run alone (with GC for the memory figure): `node --expose-gc dist/bench/conditions.js`.
import * as k8s from "@kubernetes/client-node";
import { compileCondition, evaluateCondition, type KubeObject } from "../provider/conditions";
import { createKubeApi } from "../provider/kube";
import type { ConditionGate } from "../provider/rollout/conditions";
import { ETCD_CHECK_ID } from "../provider/rollout/messages";
import type { HealthcheckJob, TalosApi } from "../provider/rollout/ports";
import { runRollout } from "../provider/rollout/run";
import type { UpgradeStatus } from "../provider/rollout/status";
import { createTalosApi } from "../provider/talos";
import { composeHealthcheck, validateHealthcheck } from "../provider/template";
import { startSimCluster } from "../sim/cluster";
import { startControlPlane } from "../sim/controlplane";
import { Metric, percentile, round } from "./metrics";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, pred: () => boolean, ms = 120000): Promise<void> {
  for (const deadline = Date.now() + ms; !pred(); await sleep(5)) if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
}

async function setOpen(core: k8s.CoreV1Api, open: boolean): Promise<void> {
  const body: k8s.V1ConfigMap = { metadata: { name: "gate", namespace: "default" }, data: { open: String(open) } };
  try {
    await core.replaceNamespacedConfigMap({ name: "gate", namespace: "default", body });
  } catch {
    await core.createNamespacedConfigMap({ namespace: "default", body });
  }
}

function jobGate(cluster: string): HealthcheckJob {
  const job = {
    apiVersion: "batch/v1", kind: "Job", metadata: { namespace: "default" },
    spec: {
      backoffLimit: 0,
      template: { spec: { restartPolicy: "Never", serviceAccountName: "gate-reader", containers: [{ name: "check", image: "bitnami/kubectl", command: ["sh", "-c",
        '[ "$(kubectl get configmap gate -n default -o jsonpath=\'{.data.open}\')" = "true" ] || { echo "gate closed" >&2; exit 1; }'] }] } },
    },
  };
  const v = validateHealthcheck({ name: "gate", job, interval: "5s" }, { cluster });
  if (!v.ok) throw new Error("bench: invalid Job gate");
  return composeHealthcheck(v.healthcheck, cluster);
}

/**
 * One sample per node: the gate holds (closed), the bench opens it at t0, the node's upgrade call comes at t1; as soon
 * as the node is called the gate is closed again for the next one.
 */
async function reaction(kind: "condition" | "job", nodes: number): Promise<number[]> {
  const cluster = `bench-${kind}`;
  const s = await startSimCluster({ controlPlanes: 1, workers: nodes - 1, bootSeconds: 0.3, workloadPodsPerNode: 0, pullMs: 20, installMs: 20 });
  const kube = createKubeApi(s.kubeconfig, { statusThrottleMs: 100 });
  const talos = createTalosApi(s.talosconfig, { pollIntervalMs: 100 });
  const kc = new k8s.KubeConfig();
  kc.loadFromString(s.kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const samples: number[] = [];
  let openedAt: number | undefined;
  // A view of the real Talos port that timestamps each upgrade call.
  const timed: TalosApi = Object.assign(Object.create(talos) as TalosApi, {
    upgradeNode: (node: string, o: Parameters<TalosApi["upgradeNode"]>[1]) => {
      if (openedAt !== undefined) {
        samples.push(performance.now() - openedAt);
        process.stderr.write(`bench: ${kind} gate reaction ${samples.length}/${nodes}: ${round(samples[samples.length - 1])} ms\n`);
      }
      openedAt = undefined;
      void setOpen(core, false);
      return talos.upgradeNode(node, o);
    },
  });
  try {
    await setOpen(core, false);
    // The Job gate's RBAC, as a user ships it: get on the gate ConfigMap.
    const meta = { name: "gate-reader", namespace: "default" };
    await kube.applyManifests([{ name: "gate-rbac", content: [
      { apiVersion: "v1", kind: "ServiceAccount", metadata: meta },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: meta, rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: ["gate"], verbs: ["get"] }] },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: meta, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "gate-reader" }, subjects: [{ kind: "ServiceAccount", ...meta }] },
    ] }], { cluster });
    const cond = compileCondition({
      target: { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "gate" }, expression: "object.data.open == 'true'",
    }).compiled!;
    let status: UpgradeStatus | undefined;
    const run = runRollout(kube, timed, {
      cluster, holder: `bench:${process.pid}`, targetVersion: "v1.13.2",
      installerImage: (_m, v) => `ghcr.io/siderolabs/installer:${v}`,
      healthchecks: kind === "job" ? [jobGate(cluster)] : [],
      conditions: kind === "condition" ? [{ id: `cluster-${cluster}-gate`, compiled: cond } satisfies ConditionGate] : [],
      holdTimeoutMs: 600_000, nodeTimeoutMs: 120_000, readyPollMs: 100, statusWriteIntervalMs: 1000,
      onStatus: (st) => { status = st; },
    });
    run.catch(() => undefined);
    for (let i = 0; i < nodes; i++) {
      // The user's gate holds (talos-gate's own etcd check before a control plane passes beside it).
      await waitFor(`the gate to hold before node ${i + 1}`, () => status?.gate === "held" &&
        status.healthchecks.filter((h) => h.id !== ETCD_CHECK_ID).every((h) => h.state === "FAILED"));
      if (kind === "job") await sleep(500 + Math.random() * 4000); // open at a random point of the retry interval
      openedAt = performance.now();
      await setOpen(core, true);
      await waitFor(`the upgrade call of node ${i + 1}`, () => openedAt === undefined);
    }
    await run;
    return samples;
  } finally {
    talos.close();
    await kube.close();
    await s.stop();
  }
}

/** Heap used after full GCs (the process must run with --expose-gc), once it no longer drops. */
async function settledHeapMiB(): Promise<number> {
  let last = Infinity;
  for (let i = 0; i < 5; i++) {
    global.gc?.();
    await sleep(50);
    const h = process.memoryUsage().heapUsed / 2 ** 20;
    if (h >= last - 0.01) return h;
    last = h;
  }
  return last;
}

async function selection(count: number, events: number): Promise<{ heapMiB: number; jsonKiB: number; evalP50: number; evalP95: number; latencyP50: number; latencyP95: number }> {
  const cp = await startControlPlane();
  const kube = createKubeApi(cp.kubeconfig);
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(cp.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "vols" } } });
    const labels = { app: "longhorn", "longhorn.io/managed": "true" };
    for (let i = 0; i < count; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => core.createNamespacedConfigMap({
        namespace: "vols",
        body: { metadata: { name: `pvc-${i + j}`, labels }, data: { robustness: "healthy", size: "10Gi", replicas: "3", node: `w-${(i + j) % 50}` } },
      })));
    }
    const cond = compileCondition({
      target: { apiVersion: "v1", kind: "ConfigMap", namespace: "vols", labelSelector: { matchLabels: labels } },
      expression: "objects.all(v, v.data.robustness == 'healthy')",
      message: "objects.filter(v, v.data.robustness != 'healthy').map(v, v.metadata.name).join(', ') + ' not healthy'",
    }).compiled!;
    // The cache's heap: after GC, before the watch and with its 1,000 objects held.
    await sleep(500);
    const before = await settledHeapMiB();
    const probe = kube.watchObjects({ apiVersion: "v1", kind: "ConfigMap", namespace: "vols", labelSelector: "app=longhorn,longhorn.io/managed=true" });
    let probed = await probe.next();
    while (probed && (!("objects" in probed) || probed.objects.length < count)) probed = await probe.next();
    await sleep(500);
    const held = (await settledHeapMiB()) - before;
    const jsonKiB = JSON.stringify("objects" in probed! ? probed.objects : []).length / 1024;
    probe.stop();
    const w = kube.watchObjects({ apiVersion: "v1", kind: "ConfigMap", namespace: "vols", labelSelector: "app=longhorn,longhorn.io/managed=true" });
    let state = await w.next();
    while (state && (!("objects" in state) || state.objects.length < count)) state = await w.next();
    const evalMs: number[] = [];
    const latency: number[] = [];
    for (let e = 0; e < events; e++) {
      const robustness = e % 2 === 0 ? "degraded" : "healthy";
      const t0 = performance.now();
      // Degrade one volume, then heal the same one (a patch that changes nothing sends no event).
      await core.patchNamespacedConfigMap({ name: `pvc-${(Math.floor(e / 2) * 37) % count}`, namespace: "vols", body: { data: { robustness } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
      for (;;) {
        const s = await w.next();
        if (!s || !("objects" in s)) throw new Error("bench: the selection watch stopped");
        const e0 = performance.now();
        const v = evaluateCondition(cond, s.objects as KubeObject[]);
        evalMs.push(performance.now() - e0);
        if ((v.state === "passed") === (robustness === "healthy")) {
          latency.push(performance.now() - t0);
          break;
        }
      }
    }
    w.stop();
    evalMs.sort((a, b) => a - b);
    latency.sort((a, b) => a - b);
    return {
      heapMiB: round(held, 2), jsonKiB: round(jsonKiB), evalP50: round(percentile(evalMs, 50), 2), evalP95: round(percentile(evalMs, 95), 2),
      latencyP50: round(percentile(latency, 50)), latencyP95: round(percentile(latency, 95)),
    };
  } finally {
    await kube.close();
    await cp.stop();
  }
}

/** For bench/main.ts. */
export async function metrics(): Promise<Metric[]> {
  const cond = (await reaction("condition", 20)).sort((a, b) => a - b);
  const job = (await reaction("job", 8)).sort((a, b) => a - b);
  const sel = await selection(1000, 100);
  const vsJob = `Job gate measured the same way (interval 5s, Omni's minimum): p50 ${round(percentile(job, 50))} ms, p95 ${round(percentile(job, 95))} ms (n=${job.length}); target p95 < 1,000 ms`;
  return [
    { name: "gate_reaction_condition_ms_p50", value: round(percentile(cond, 50)), unit: `ms write → next upgrade call (n=${cond.length})`, compared_with: vsJob },
    { name: "gate_reaction_condition_ms_p95", value: round(percentile(cond, 95)), unit: `ms write → next upgrade call (n=${cond.length})`, compared_with: vsJob },
    { name: "gate_reaction_job_ms_p50", value: round(percentile(job, 50)), unit: `ms write → next upgrade call (n=${job.length})`, compared_with: "Omni: up to one interval (30 s default) plus the Job's run" },
    { name: "gate_reaction_job_ms_p95", value: round(percentile(job, 95)), unit: `ms write → next upgrade call (n=${job.length})`, compared_with: "Omni: up to one interval (30 s default) plus the Job's run" },
    { name: "selection_1000_watch_cache_heap", value: sel.heapMiB, unit: global.gc ? "MiB heap after GC" : "MiB heap (run with --expose-gc for a GC'd figure)", compared_with: `the 1,000 objects are ${sel.jsonKiB} KiB as JSON (managedFields dropped)` },
    { name: "selection_1000_eval_ms_p50", value: sel.evalP50, unit: "ms per watch event (objects.all over 1,000)", compared_with: "tuppr: re-lists and evaluates every requeue (1 m)" },
    { name: "selection_1000_eval_ms_p95", value: sel.evalP95, unit: "ms per watch event (objects.all over 1,000)", compared_with: "tuppr: re-lists and evaluates every requeue (1 m)" },
    { name: "selection_1000_event_to_verdict_ms_p50", value: sel.latencyP50, unit: "ms write → verdict", compared_with: "one object of the 1,000 changes: watch event, then objects.all over all of them" },
    { name: "selection_1000_event_to_verdict_ms_p95", value: sel.latencyP95, unit: "ms write → verdict", compared_with: "one object of the 1,000 changes: watch event, then objects.all over all of them" },
  ];
}

if (require.main === module && process.argv[2] === "reaction") {
  void reaction(process.argv[3] as "condition" | "job", Number(process.argv[4] ?? 3)).then((r) => process.stdout.write(`${JSON.stringify(r)}\n`));
} else if (require.main === module && process.argv[2] === "selection") {
  void selection(Number(process.argv[3] ?? 100), Number(process.argv[4] ?? 10)).then((r) => process.stdout.write(`${JSON.stringify(r)}\n`), (e) => process.stderr.write(`${(e as Error).stack}\n`));
} else if (require.main === module) {
  void metrics().then((m) => process.stdout.write(JSON.stringify(m, null, 2) + "\n"), (e) => {
    process.stderr.write(`${(e as Error).stack}\n`);
    process.exitCode = 1;
  });
}
