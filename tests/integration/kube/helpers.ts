// Shared bits of the Kubernetes port's integration tests: a port on the shared control plane, composed runner Jobs
// (their command runs as a local process on the kubelet emulator), and a file gate such a command can wait on.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { createKubeApi, KubeClient } from "../../../provider/kube";
import type { HealthcheckJob } from "../../../provider/rollout/ports";
import { onFileEnd } from "../../support/fixtures";
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
  onFileEnd(() => kube.close());
  const kc = kubeConfigOf(cp);
  return { kube, kc, batch: kc.makeApiClient(k8s.BatchV1Api), core: kc.makeApiClient(k8s.CoreV1Api), logs };
}

/**
 * A composed runner Job as provider/template would build it (name, labels, hash annotation, fallback policy) whose
 * container runs `script` with `sh -c`; the config hash follows the script.
 */
export function healthcheck(namespace: string, name: string, script = "exit 0"): HealthcheckJob {
  const id = `cluster-test-${name}`;
  const jobName = `talos-gate-${id}`;
  const configHash = createHash("sha256").update(script).digest("hex");
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
              name: "check", image: "busybox", command: ["sh", "-c", script],
              terminationMessagePolicy: "FallbackToLogsOnError",
            }],
          },
        },
      },
    },
  };
}

export const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A gate a check's process waits on: `script` blocks until `open()` creates the file, then exits 0 (the kubelet
 * emulator runs the process on this machine, so it sees the file). `close()` makes later processes wait again.
 */
export function fileGate(): { script: string; open(): void; close(): void } {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gate-")), "open");
  return {
    script: `while [ ! -e ${file} ]; do sleep 0.05; done; echo passed`,
    open: () => fs.writeFileSync(file, ""),
    close: () => fs.rmSync(file, { force: true }),
  };
}

/** Tracks whether a promise has settled yet (read after observing the cluster, never after a sleep). */
export function tracked<T>(p: Promise<T>): { promise: Promise<T>; settled(): boolean } {
  let done = false;
  const promise = p.finally(() => (done = true));
  promise.catch(() => undefined);
  return { promise, settled: () => done };
}
