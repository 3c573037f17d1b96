// Shared bits of the rollout integration tests: a simulated cluster registered for cleanup, healthchecks composed by
// provider/template from a real Job manifest (the sim's kubelet runs its command as a local process with kubectl on
// PATH), a ConfigMap gate the check reads, per-node boot records from the Talos sim, and runner leftovers.
import * as assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import * as YAML from "yaml";
import { createKubeApi, KubeClient } from "../../../provider/kube";
import type { HealthcheckJob } from "../../../provider/rollout/ports";
import { RolloutError, type RunOptions } from "../../../provider/rollout/run";
import { createTalosApi, TalosApiImpl } from "../../../provider/talos";
import { composeHealthcheck, validateHealthcheck } from "../../../provider/template";
import { SimCluster, SimClusterOptions, startSimCluster } from "../../../sim/cluster";
import { freshControlPlane } from "../../support/controlPlanes";
import { onFileEnd } from "../../support/fixtures";
import type { ChildConfig } from "../../support/rollout-child";

export const RUNNER_SELECTOR = "app.kubernetes.io/name=talos-gate-healthcheck";
export const FROM = "v1.12.4";
export const TARGET = "v1.13.2";

export const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A small simulated cluster, stopped at the end of the suite (or earlier by the caller). */
export async function sim(opts: SimClusterOptions): Promise<SimCluster> {
  const s = await startSimCluster({ bootSeconds: 1, workloadPodsPerNode: 0, pullMs: 50, installMs: 50, controlPlane: freshControlPlane(), ...opts });
  let stopped = false;
  const stop = s.stop;
  s.stop = async () => {
    if (stopped) return;
    stopped = true;
    await stop();
  };
  onFileEnd(() => s.stop());
  return s;
}

/**
 * Real adapters on the sim; closed at the end of the file. Talos polls fast (the sim reboots in about a second). The
 * Kubernetes port's warnings (what the provider shows on the resource's row) are collected in `kubeLog`.
 */
export function adapters(s: SimCluster): { kube: KubeClient; talos: TalosApiImpl; kubeLog: string[] } {
  const kubeLog: string[] = [];
  const kube = createKubeApi(s.kubeconfig, { statusThrottleMs: 100, log: (l) => kubeLog.push(l) });
  const talos = createTalosApi(s.talosconfig, { pollIntervalMs: 200 });
  onFileEnd(async () => {
    talos.close();
    await kube.close();
  });
  return { kube, talos, kubeLog };
}

/**
 * A healthcheck as a user writes it (validated and composed by provider/template) whose container runs `script`
 * with `sh -c`. Omni's minimum interval is 5 s; the tests shorten the retry interval of the composed Job to
 * `intervalMs` afterwards so a held gate re-checks quickly.
 */
export function shellCheck(cluster: string, name: string, script: string, intervalMs = 1000, serviceAccountName?: string): HealthcheckJob {
  const job = YAML.stringify({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { namespace: "default" },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: "Never",
          ...(serviceAccountName ? { serviceAccountName } : {}),
          containers: [{ name: "check", image: "bitnami/kubectl", command: ["sh", "-c", script] }],
        },
      },
    },
  });
  const v = validateHealthcheck({ name, job, interval: "5s" }, { cluster });
  if (!v.ok) throw new Error(`test healthcheck ${name} is invalid: ${JSON.stringify(v.failures)}`);
  return { ...composeHealthcheck(v.healthcheck, cluster), intervalMs };
}

/** The ServiceAccount the gate checks run as. */
export const GATE_READER = "gate-reader";

/**
 * A check that passes while ConfigMap default/<cm> has data.open == "true", else fails with a message on stderr. It
 * runs as ServiceAccount default/gate-reader, which may only read that ConfigMap once `grantGateRead` applied its RBAC.
 */
export function configMapGateCheck(cluster: string, cm: string, intervalMs = 1000): HealthcheckJob {
  return shellCheck(cluster, "gate", [
    `state=$(kubectl get configmap ${cm} -n default -o jsonpath='{.data.open}')`,
    `if [ "$state" != "true" ]; then echo "gate closed: ${cm}.open=\${state:-unset}, holding upgrade" >&2; exit 1; fi`,
    "echo gate open",
  ].join("\n"), intervalMs, GATE_READER);
}

/**
 * The gate check's RBAC as a user ships it (a Cluster's supporting manifests): ServiceAccount default/gate-reader, a
 * Role that may get the gate ConfigMaps, and its RoleBinding. Applied through the port's `applyManifests`.
 */
export async function grantGateRead(kube: KubeClient, cluster: string, configMaps: readonly string[]): Promise<void> {
  const meta = { name: GATE_READER, namespace: "default" };
  await kube.applyManifests([{
    name: "gate-rbac",
    mode: "full",
    content: [
      { apiVersion: "v1", kind: "ServiceAccount", metadata: meta },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: meta, rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: [...configMaps], verbs: ["get"] }] },
      {
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: meta,
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: GATE_READER },
        subjects: [{ kind: "ServiceAccount", ...meta }],
      },
    ],
  }], { cluster });
}

export function clients(s: SimCluster): { core: k8s.CoreV1Api; batch: k8s.BatchV1Api } {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(s.kubeconfig);
  return { core: kc.makeApiClient(k8s.CoreV1Api), batch: kc.makeApiClient(k8s.BatchV1Api) };
}

/** Creates or replaces ConfigMap default/<name> with data.open = open. */
export async function setGate(core: k8s.CoreV1Api, name: string, open: boolean): Promise<void> {
  const body: k8s.V1ConfigMap = { metadata: { name, namespace: "default" }, data: { open: String(open) } };
  try {
    await core.replaceNamespacedConfigMap({ name, namespace: "default", body });
  } catch {
    await core.createNamespacedConfigMap({ namespace: "default", body });
  }
}

/** Runner Jobs and pods left in any namespace (by the runner label, and by the job-name label of runner Jobs). */
export async function runnerLeftovers(s: SimCluster): Promise<{ jobs: string[]; pods: string[] }> {
  const { core, batch } = clients(s);
  const jobs = (await batch.listJobForAllNamespaces({ labelSelector: RUNNER_SELECTOR })).items;
  const pods = (await core.listPodForAllNamespaces({ labelSelector: RUNNER_SELECTOR })).items;
  const byJobName = (await core.listPodForAllNamespaces({ labelSelector: "batch.kubernetes.io/job-name" })).items
    .filter((p) => (p.metadata?.labels?.["batch.kubernetes.io/job-name"] ?? "").startsWith("talos-gate-"));
  const name = (o: { metadata?: k8s.V1ObjectMeta }) => `${o.metadata?.namespace}/${o.metadata?.name}`;
  return { jobs: jobs.map(name), pods: [...new Set([...pods, ...byJobName].map(name))] };
}

/** Waits until runner Jobs and pods are gone (pods of a deleted Job terminate asynchronously). */
export async function waitNoRunners(s: SimCluster, ms = 20000): Promise<{ jobs: string[]; pods: string[] }> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = await runnerLeftovers(s);
    if ((left.jobs.length === 0 && left.pods.length === 0) || Date.now() > deadline) return left;
    await delay(250);
  }
}

export interface BootRecord {
  node: string;
  /** "upgrade" (legacy MachineService.Upgrade) or "reboot" (LifecycleService path). */
  reason: string;
  at: number;
}

/** Records every down/up of the simulated Talos nodes (in this process), in order. */
export function recordBoots(s: SimCluster): { downs: BootRecord[]; ups: Array<{ node: string; version: string; at: number }>; downsOf(node: string): number } {
  const downs: BootRecord[] = [];
  const ups: Array<{ node: string; version: string; at: number }> = [];
  s.talos.on("down", (n, info) => downs.push({ node: n.name, reason: info.reason, at: Date.now() }));
  s.talos.on("up", (n, info) => ups.push({ node: n.name, version: info.version, at: Date.now() }));
  return { downs, ups, downsOf: (node) => downs.filter((d) => d.node === node).length };
}

/** Talos versions of the sim's nodes, by name. */
export function versions(s: SimCluster): Record<string, string> {
  return Object.fromEntries(s.talos.nodes().map((n) => [n.name, n.version]));
}

/** Run options shared by the tests (fast polling, frequent status mirror writes); override per test. */
export function runOptions(cluster: string, overrides: Partial<RunOptions> = {}): RunOptions {
  return {
    cluster,
    holder: `test:${cluster}@${process.pid}`,
    targetVersion: TARGET,
    installerImage: (_m, v) => `ghcr.io/siderolabs/installer:${v}`,
    healthchecks: [],
    holdTimeoutMs: 120_000,
    nodeTimeoutMs: 60_000,
    readyPollMs: 200,
    statusWriteIntervalMs: 100,
    ...overrides,
  };
}

/** Resolves when `pred` holds (checked every 50 ms), or rejects naming `what` after `ms`. */
export async function until(what: string, pred: () => boolean | Promise<boolean>, ms = 60000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await pred()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await delay(50);
  }
}

/** The RolloutError a run ends with (fails the test if the run succeeds or fails otherwise). */
export async function rejection(p: Promise<unknown>): Promise<RolloutError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof RolloutError, `expected a RolloutError, got ${(err as Error)?.stack ?? err}`);
    return err;
  }
  assert.fail("the run should have failed");
}

/** A rollout in its own process (tests/support/rollout-child.ts), to be killed mid-node; its progress lines. */
export function startChild(cfg: ChildConfig): { child: ChildProcess; lines: string[] } {
  const script = path.join(__dirname, "..", "..", "support", "rollout-child.js");
  const child = spawn(process.execPath, ["--no-deprecation", script, JSON.stringify(cfg)], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  let buf = "";
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split("\n");
    buf = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr!.on("data", () => undefined);
  onFileEnd(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, lines };
}
