// A real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) for the adapter tests, with
// two worker Nodes whose kubelet the sim emulates (so Jobs really run: the real Job controller creates the pods, the
// real scheduler binds them, the kubelet emulator runs their command). Started on a file's first use and handed back
// at its end to the same pool the sims take theirs from (tests/support/controlPlanes.ts: reset to the state it
// started in, then the next sim or adapter file of the process takes it): a group of the run holds one control plane
// at a time instead of this one idling beside the sims' until the run ends (~2.6 CPU-s a minute, idle).
import * as k8s from "@kubernetes/client-node";
import * as YAML from "yaml";
import type { ControlPlane } from "../../sim/controlplane";
import { KubeSim, startKubeSim } from "../../sim/kube";
import { freshControlPlane } from "./controlPlanes";
import { onFileEnd } from "./fixtures";

export const TEST_NODES = ["kubelet-1", "kubelet-2"];

let shared: Promise<{ cp: ControlPlane; kubelets: KubeSim }> | undefined;

function sharedCluster(): Promise<{ cp: ControlPlane; kubelets: KubeSim }> {
  if (!shared) {
    const started = (async () => {
      const cp = await freshControlPlane();
      onFileEnd(async () => {
        if (shared === started) shared = undefined;
        await cp.stop(); // hands it back to the pool (after the kubelets below stopped: last registered, first stopped)
      });
      const kubelets = await startKubeSim({
        kubeconfig: cp.kubeconfig,
        machines: TEST_NODES.map((name, i) => ({ name, role: "worker" as const, address: `10.4.0.${i + 2}`, talosVersion: "v1.12.4" })),
        workloadPodsPerNode: 0,
        daemonSetPods: false,
      });
      onFileEnd(() => kubelets.stop());
      return { cp, kubelets };
    })();
    shared = started;
    started.catch(() => { if (shared === started) shared = undefined; });
  }
  return shared;
}

/** This file's control plane; its Jobs run on the nodes of TEST_NODES. */
export async function testControlPlane(): Promise<ControlPlane> {
  return (await sharedCluster()).cp;
}

export function kubeConfigOf(cp: { kubeconfig: string }): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(cp.kubeconfig);
  return kc;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the ServiceAccount controller created `default` in `ns` (pods cannot be admitted before). */
export async function waitForDefaultServiceAccount(kc: k8s.KubeConfig, ns: string, timeoutMs = 30000): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  for (const deadline = Date.now() + timeoutMs; ; await sleep(50)) {
    try {
      await core.readNamespacedServiceAccount({ name: "default", namespace: ns });
      return;
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err;
      if (Date.now() > deadline) throw new Error(`ServiceAccount ${ns}/default was not created within ${timeoutMs} ms (is kube-controller-manager running?)`);
    }
  }
}

let nsCounter = 0;
/** A fresh namespace per test, once its default ServiceAccount exists. */
export async function freshNamespace(cp: ControlPlane, prefix = "t", serviceAccountTimeoutMs = 30000): Promise<string> {
  const name = `${prefix}-${process.pid}-${Date.now().toString(36)}-${nsCounter++}`;
  const kc = kubeConfigOf(cp);
  await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name } } });
  await waitForDefaultServiceAccount(kc, name, serviceAccountTimeoutMs);
  return name;
}

/** A new ServiceAccount `name` of `ns` and a real bearer token for it (a TokenRequest). */
export async function serviceAccountToken(cp: ControlPlane, ns: string, name: string): Promise<string> {
  const core = kubeConfigOf(cp).makeApiClient(k8s.CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
  return (await core.createNamespacedServiceAccountToken({ name, namespace: ns, body: { spec: { audiences: [] } } })).status!.token;
}

/**
 * A kubeconfig for a new ServiceAccount `name` of `ns` (a real bearer token from a TokenRequest): a pipeline's
 * credentials with exactly the RBAC the test binds to it, not the admin's.
 */
export async function serviceAccountKubeconfig(cp: ControlPlane, ns: string, name: string): Promise<string> {
  const token = await serviceAccountToken(cp, ns, name);
  const base = YAML.parse(cp.kubeconfig);
  return YAML.stringify({
    apiVersion: "v1", kind: "Config", clusters: [{ ...base.clusters[0], name: "c" }], users: [{ name: "u", user: { token } }],
    contexts: [{ name: "c", context: { cluster: "c", user: "u" } }], "current-context": "c",
  });
}

/** An RFC 3339 timestamp with whole seconds (metav1.Time keeps seconds only). */
export function wholeSecond(ms = Date.now()): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Waits until Job `name` exists (and, with `notUid`, is a different Job than that uid); returns it. */
export async function waitForJob(
  kc: k8s.KubeConfig, ns: string, name: string, opts: { notUid?: string; timeoutMs?: number } = {},
): Promise<k8s.V1Job> {
  const batch = kc.makeApiClient(k8s.BatchV1Api);
  const timeoutMs = opts.timeoutMs ?? 15000;
  for (const deadline = Date.now() + timeoutMs; ; await sleep(20)) {
    try {
      const job = await batch.readNamespacedJob({ name, namespace: ns });
      if (!opts.notUid || job.metadata?.uid !== opts.notUid) return job;
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err;
    }
    if (Date.now() > deadline) throw new Error(`Job ${ns}/${name} did not appear within ${timeoutMs} ms`);
  }
}

/** Resolves when `pred` returns a truthy value (polled every `everyMs`), or rejects naming `what` after `ms`. */
export async function eventually<T>(what: string, pred: () => Promise<T | undefined | false>, ms = 60000, everyMs = 100): Promise<T> {
  let last: unknown;
  for (const deadline = Date.now() + ms; ; await sleep(everyMs)) {
    try {
      const v = await pred();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
  }
}
