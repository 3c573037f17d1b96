// Gate reaction latency: from a runner Job being marked Complete (the /status write leaving the client) to runCheck
// resolving `passed` (which includes deleting the Job and its pods), over many checks, on its own real control plane.
// Omni notices a pass at the next requeue, i.e. up to one interval (30 s by default) later.
import * as k8s from "@kubernetes/client-node";
import { createKubeApi } from "../provider/kube";
import type { HealthcheckJob } from "../provider/rollout/ports";
import { startControlPlane } from "../sim/controlplane";
import { Metric, percentile, round } from "./metrics";

const wholeSecond = (ms = Date.now()) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

function check(namespace: string, i: number): HealthcheckJob {
  const jobName = `talos-gate-cluster-bench-check-${i}`;
  const labels = { "app.kubernetes.io/name": "talos-gate-healthcheck" };
  const configHash = "0".repeat(63) + (i % 10);
  return {
    id: `cluster-bench-check-${i}`, jobName, namespace, configHash, intervalMs: 30000,
    job: {
      apiVersion: "batch/v1", kind: "Job",
      metadata: { name: jobName, namespace, labels, annotations: { "talos-gate.dev/config-hash": configHash } },
      spec: {
        backoffLimit: 0,
        template: { metadata: { labels }, spec: { restartPolicy: "Never", containers: [{ name: "check", image: "busybox", command: ["true"] }] } },
      },
    },
  };
}

async function waitForJob(batch: k8s.BatchV1Api, namespace: string, name: string): Promise<void> {
  for (const deadline = Date.now() + 30000; Date.now() < deadline; ) {
    try {
      await batch.readNamespacedJob({ name, namespace });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error(`bench: Job ${namespace}/${name} was not created within 30 s`);
}

export interface GateReaction {
  /** Median reaction in ms. */
  p50: number;
  p95: number;
  n: number;
  /** Kubernetes API requests the port made per check (list, watch, create, delete Job, delete pods, event). */
  requestsPerCheck?: number;
}

export async function benchGateReaction(opts: { n?: number } = {}): Promise<GateReaction> {
  const n = opts.n ?? 60;
  const cp = await startControlPlane();
  const kube = createKubeApi(cp.kubeconfig);
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(cp.kubeconfig);
    const batch = kc.makeApiClient(k8s.BatchV1Api);
    const namespace = "bench";
    await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
    const samples: number[] = [];
    const before = kube.stats().requests;
    for (let i = 0; i < n; i++) {
      const c = check(namespace, i);
      const outcome = kube.runCheck(c);
      await waitForJob(batch, namespace, c.jobName);
      await new Promise((r) => setTimeout(r, 100)); // the runner is waiting on its watch, as during a real hold
      const now = wholeSecond();
      const status = {
        startTime: now, completionTime: now, active: 0, ready: 0, terminating: 0, succeeded: 1, uncountedTerminatedPods: {},
        conditions: ["SuccessCriteriaMet", "Complete"].map((type) => ({
          type, status: "True", reason: "CompletionsReached", message: "Reached expected number of succeeded pods", lastTransitionTime: now,
        })),
      };
      const t0 = performance.now();
      await batch.patchNamespacedJobStatus({ name: c.jobName, namespace, body: [{ op: "add", path: "/status", value: status }] });
      const result = await outcome;
      const t1 = performance.now();
      if (result.state !== "passed") throw new Error(`bench: check ${i} ended ${result.state}, expected passed`);
      samples.push(t1 - t0);
    }
    await kube.flush(); // the runner's HealthcheckPassed events
    const requestsPerCheck = (kube.stats().requests - before) / n;
    samples.sort((a, b) => a - b);
    return { p50: round(percentile(samples, 50)), p95: round(percentile(samples, 95)), n, requestsPerCheck: round(requestsPerCheck) };
  } finally {
    await kube.close();
    await cp.stop();
  }
}

/** For bench/main.ts. */
export async function metrics(): Promise<Metric[]> {
  const r = await benchGateReaction();
  const omni = "Omni: the next requeue, up to one interval (30 s default) after the Job completes";
  return [
    { name: "gate_reaction_ms_p50", value: r.p50, unit: `ms (n=${r.n})`, compared_with: omni },
    { name: "gate_reaction_ms_p95", value: r.p95, unit: `ms (n=${r.n})`, compared_with: omni },
    { name: "kube_requests_per_check", value: r.requestsPerCheck ?? NaN, unit: "requests per passing check", compared_with: "Omni: GET + CREATE, then GET + DELETE Job + DELETE pods (≥ 5, one interval apart)" },
  ];
}
