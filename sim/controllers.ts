// The real kube-controller-manager and kube-scheduler of the sim and the test control plane, each with its own
// identity (client certificates CN=system:kube-controller-manager / system:kube-scheduler, which the API server's
// bootstrap RBAC already binds), on loopback ports, leader election off.
//
// Controllers: the Job controller, garbage collector, disruption (PDB status), TTL-after-finished, pod GC, the
// ServiceAccount controllers (default accounts, legacy token secrets), the kube-root-ca.crt publisher, namespace
// deletion, and the ReplicaSet / Deployment / DaemonSet controllers that own the sim's workload pods. Each controller
// talks to the API server as its own service account (--use-service-account-credentials), as on a kubeadm cluster.
// Not run: nodelifecycle (see sim/kube/README.md), and everything with no role in the sim (endpoints, volumes,
// certificates, cloud, ...).
import { writePrivateFile } from "./files";
import { ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { KubePki } from "./certs";
import { kubeconfigYaml } from "./kubeconfig";
import { freePort } from "./ports";
import { startServer, stopServer, waitHealthy } from "./servers";
import { toolPath } from "./tools";

export const CONTROLLERS = [
  "job-controller",
  "garbage-collector-controller",
  "disruption-controller",
  "ttl-after-finished-controller",
  "pod-garbage-collector-controller",
  "serviceaccount-controller",
  "serviceaccount-token-controller",
  "root-ca-certificate-publisher-controller",
  "namespace-controller",
  "replicaset-controller",
  "deployment-controller",
  "daemonset-controller",
] as const;

export interface KubeComponent {
  name: "kube-controller-manager" | "kube-scheduler";
  child: ChildProcess;
  logFile: string;
}

export interface Components {
  controllerManager: KubeComponent;
  scheduler: KubeComponent;
  pids(): number[];
  stop(): Promise<void>;
}

function writeKubeconfig(file: string, server: string, pki: KubePki, user: string, cert: string, key: string): void {
  const b64 = (f: string) => fs.readFileSync(f).toString("base64");
  writePrivateFile(file, kubeconfigYaml({
    server, caData: b64(pki.caCert), user,
    credentials: { clientCertificateData: b64(cert), clientKeyData: b64(key) },
  }));
}

/** Starts both next to a running kube-apiserver and waits for their /healthz. */
export async function startComponents(opts: { server: string; pki: KubePki; dir: string; timeoutMs: number }): Promise<Components> {
  const { server, pki, dir } = opts;
  const kcmConfig = path.join(dir, "kube-controller-manager.kubeconfig");
  const schedConfig = path.join(dir, "kube-scheduler.kubeconfig");
  writeKubeconfig(kcmConfig, server, pki, "system:kube-controller-manager", pki.controllerManagerCert, pki.controllerManagerKey);
  writeKubeconfig(schedConfig, server, pki, "system:kube-scheduler", pki.schedulerCert, pki.schedulerKey);
  const [kcmPort, schedPort] = [await freePort(), await freePort()];
  const serving = [`--tls-cert-file=${pki.serverCert}`, `--tls-private-key-file=${pki.serverKey}`, "--bind-address=127.0.0.1"];
  // Client-side rate limits protect a shared, remote API server; this one is local and the sim's own. At the defaults
  // (20 requests/s per controller, 50 for the scheduler) a 1,000-node sim needs minutes to create and bind its
  // DaemonSet pods, so both get the headroom a large cluster's control plane is typically given.
  const rate = ["--kube-api-qps=200", "--kube-api-burst=400"];
  const kcmArgs = [
    `--kubeconfig=${kcmConfig}`, ...serving, `--secure-port=${kcmPort}`,
    "--leader-elect=false", `--controllers=${CONTROLLERS.join(",")}`,
    "--use-service-account-credentials=true",
    `--service-account-private-key-file=${pki.saKey}`, `--root-ca-file=${pki.caCert}`,
    ...rate, "--profiling=false", "--v=0",
  ];
  const schedArgs = [`--kubeconfig=${schedConfig}`, ...serving, `--secure-port=${schedPort}`, "--leader-elect=false", ...rate, "--profiling=false", "--v=0"];
  const start = (name: KubeComponent["name"], args: string[]): KubeComponent => {
    const logFile = path.join(dir, `${name}.log`);
    return { name, child: startServer(toolPath(name), args, logFile), logFile };
  };
  const controllerManager = start("kube-controller-manager", kcmArgs);
  const scheduler = start("kube-scheduler", schedArgs);
  const all = [controllerManager, scheduler];
  const stop = async () => {
    await Promise.all(all.map((c) => stopServer(c.child)));
  };
  try {
    const ca = fs.readFileSync(pki.caCert);
    await Promise.all([
      waitHealthy("kube-controller-manager", { url: `https://127.0.0.1:${kcmPort}/healthz`, ca }, controllerManager.child, controllerManager.logFile, opts.timeoutMs),
      waitHealthy("kube-scheduler", { url: `https://127.0.0.1:${schedPort}/healthz`, ca }, scheduler.child, scheduler.logFile, opts.timeoutMs),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    controllerManager,
    scheduler,
    pids: () => all.map((c) => c.child.pid).filter((p): p is number => typeof p === "number"),
    stop,
  };
}
