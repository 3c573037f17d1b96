// A real Kubernetes control plane for the sim and the tests: etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler from .tools/bin on loopback, generated certificates (one identity per component), an admin
// kubeconfig, RBAC authorization with the ServiceAccount admission plugin and the garbage collector on, free ports,
// etcd data on tmpfs when there is one. Only the kubelet is emulated (sim/kube).
import { writePrivateFile } from "./files";
import { ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { issueKubePki } from "./certs";
import { Components, startComponents } from "./controllers";
import { kubeconfigYaml } from "./kubeconfig";
import { freePort } from "./ports";
import { startServer, stopServer, tail, waitHealthy } from "./servers";
import { toolPath } from "./tools";
import { simMsg } from "./messages";

export interface ControlPlaneOptions {
  /** Directory for certificates, logs and etcd data; a temp dir (removed on stop) if omitted. */
  dir?: string;
  /** Give up waiting for /readyz after this long. */
  startTimeoutMs?: number;
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  server: string;
  /** Admin kubeconfig (client-certificate auth, system:masters). */
  kubeconfig: string;
  kubeconfigPath: string;
  dir: string;
  /** etcd, kube-apiserver, kube-controller-manager, kube-scheduler (in that order, when running). */
  pids(): number[];
  /** The PID of one server process, if it runs. */
  pidOf(name: "etcd" | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler"): number | undefined;
  /** base64 of the cluster CA (what a pod's service-account kubeconfig trusts). */
  caData: string;
  /** Stops and starts kube-apiserver on the same port and etcd data (the "API server restart" fault). */
  restartApiServer(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

function dataRoot(): string {
  // etcd fsyncs less on tmpfs; fall back to the OS temp dir.
  try {
    fs.accessSync("/dev/shm", fs.constants.W_OK);
    return "/dev/shm";
  } catch {
    return os.tmpdir();
  }
}

async function waitEtcd(port: number, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(simMsg.etcdExited(child.exitCode, tail(logFile)));
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(simMsg.etcdNotHealthy(timeoutMs, tail(logFile)));
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const apiserverBin = toolPath("kube-apiserver");
  const etcdBin = toolPath("etcd");
  const ownsDir = !opts.dir;
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-kube-"));
  fs.mkdirSync(dir, { recursive: true });
  const dataDir = fs.mkdtempSync(path.join(dataRoot(), "talos-gate-etcd-"));
  const timeout = opts.startTimeoutMs ?? 60000;
  const pki = issueKubePki(path.join(dir, "pki"));

  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const etcdLog = path.join(dir, "etcd.log");
  const apiLog = path.join(dir, "kube-apiserver.log");
  const etcd = startServer(etcdBin, [
    "--data-dir", dataDir, "--name", "default",
    "--listen-client-urls", `http://127.0.0.1:${etcdPort}`, "--advertise-client-urls", `http://127.0.0.1:${etcdPort}`,
    "--listen-peer-urls", `http://127.0.0.1:${peerPort}`, "--initial-advertise-peer-urls", `http://127.0.0.1:${peerPort}`,
    "--initial-cluster", `default=http://127.0.0.1:${peerPort}`, "--unsafe-no-fsync", "--log-level", "warn",
  ], etcdLog);
  let apiserver: ChildProcess | undefined;
  const server = `https://127.0.0.1:${apiPort}`;
  const apiArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    "--bind-address=127.0.0.1", `--secure-port=${apiPort}`, "--advertise-address=127.0.0.1",
    `--tls-cert-file=${pki.serverCert}`, `--tls-private-key-file=${pki.serverKey}`,
    `--client-ca-file=${pki.caCert}`, "--authorization-mode=RBAC",
    `--service-account-issuer=${server}`, `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`, "--service-cluster-ip-range=10.0.0.0/24",
    "--allow-privileged=true",
    "--endpoint-reconciler-type=none", "--profiling=false", "--enable-priority-and-fairness=false", "--v=0",
    // PodTemplates, which nothing of talos-gate or the sim uses, are served from etcd without a watch cache: a watch
    // from a compacted resourceVersion gets etcd's 410 Gone every time (kube/watch.test.ts), where the watch cache
    // answers it with the current objects until it has dropped events of its own (whether it has depends on what ran before).
    "--watch-cache-sizes=podtemplates#0",
  ];
  let components: Components | undefined;
  const probe = {
    url: `${server}/readyz`, ca: fs.readFileSync(pki.caCert), cert: fs.readFileSync(pki.adminCert), key: fs.readFileSync(pki.adminKey),
  };
  const waitReady = (child: ChildProcess) => waitHealthy("kube-apiserver", probe, child, apiLog, timeout);
  const stopAll = async () => {
    await components?.stop();
    await stopServer(apiserver);
    await stopServer(etcd);
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (ownsDir) fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitEtcd(etcdPort, etcd, etcdLog, timeout);
    apiserver = startServer(apiserverBin, apiArgs, apiLog);
    await waitReady(apiserver);
    components = await startComponents({ server, pki, dir, timeoutMs: timeout });
  } catch (err) {
    await stopAll();
    throw err;
  }
  const b64 = (f: string) => fs.readFileSync(f).toString("base64");
  const caData = b64(pki.caCert);
  const kubeconfig = kubeconfigYaml({
    server, caData, user: "admin", credentials: { clientCertificateData: b64(pki.adminCert), clientKeyData: b64(pki.adminKey) },
  });
  const kubeconfigPath = path.join(dir, "kubeconfig");
  writePrivateFile(kubeconfigPath, kubeconfig);
  let stopped = false;
  return {
    server,
    kubeconfig,
    kubeconfigPath,
    dir,
    caData,
    pids: () => [etcd.pid, apiserver?.pid, ...(components?.pids() ?? [])].filter((p): p is number => typeof p === "number"),
    pidOf: (name) => ({
      etcd: etcd.pid,
      "kube-apiserver": apiserver?.pid,
      "kube-controller-manager": components?.controllerManager.child.pid,
      "kube-scheduler": components?.scheduler.child.pid,
    })[name],
    async restartApiServer(downMs = 0) {
      // The controller manager and scheduler stay up and reconnect, as on a real control plane.
      await stopServer(apiserver);
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      apiserver = startServer(apiserverBin, apiArgs, apiLog);
      await waitReady(apiserver);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopAll();
    },
  };
}
