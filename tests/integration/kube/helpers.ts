// Shared bits of the Kubernetes port's integration tests: a port on the shared control plane, composed runner Jobs.
import { createHash } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import { createKubeApi, KubeClient } from "../../../provider/kube";
import type { HealthcheckJob } from "../../../provider/rollout/ports";
import { onSuiteEnd } from "../../support/fixtures";
import { kubeConfigOf, testControlPlane } from "../../support/kube";

export interface Harness {
  kube: KubeClient;
  kc: k8s.KubeConfig;
  batch: k8s.BatchV1Api;
  core: k8s.CoreV1Api;
  logs: string[];
}

export async function harness(): Promise<Harness> {
  const cp = await testControlPlane();
  const logs: string[] = [];
  const kube = createKubeApi(cp.kubeconfig, { log: (l) => logs.push(l) });
  onSuiteEnd(() => kube.close());
  const kc = kubeConfigOf(cp);
  return { kube, kc, batch: kc.makeApiClient(k8s.BatchV1Api), core: kc.makeApiClient(k8s.CoreV1Api), logs };
}

/** A composed runner Job as provider/template would build it (name, labels, hash annotation, fallback policy). */
export function healthcheck(namespace: string, name: string, manifestText = `check ${name}`): HealthcheckJob {
  const id = `cluster-test-${name}`;
  const jobName = `talos-gate-${id}`;
  const configHash = createHash("sha256").update(manifestText).digest("hex");
  return {
    id,
    jobName,
    namespace,
    configHash,
    intervalMs: 30000,
    job: {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name: jobName,
        namespace,
        labels: { "app.kubernetes.io/name": "talos-gate-healthcheck" },
        annotations: { "talos-gate.dev/config-hash": configHash },
      },
      spec: {
        backoffLimit: 0,
        template: {
          metadata: { labels: { "app.kubernetes.io/name": "talos-gate-healthcheck" } },
          spec: {
            restartPolicy: "Never",
            containers: [{
              name: "check", image: "busybox", command: ["sh", "-c", manifestText.replace(/[^a-z ]/gi, "")],
              terminationMessagePolicy: "FallbackToLogsOnError",
            }],
          },
        },
      },
    },
  };
}

export const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves with the promise's value, or "pending" if it has not settled within `ms`. */
export async function settledWithin<T>(p: Promise<T>, ms: number): Promise<T | "pending"> {
  return Promise.race([p, delay(ms).then(() => "pending" as const)]);
}
