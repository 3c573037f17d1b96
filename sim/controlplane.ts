// A real Kubernetes control plane for the sim and the tests, envtest-style: etcd + kube-apiserver from .tools/bin on
// loopback, generated certificates, an admin kubeconfig, RBAC authorization, free ports, data on tmpfs when there is
// one. No controllers run: the sim's kubelet/job emulator plays the Job controller and the kubelet.
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import * as os from "node:os";
import * as path from "node:path";
import { issueKubePki, KubePki } from "./certs";
import { freePort } from "./ports";
import { toolPath } from "./tools";

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
  pids(): number[];
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

function kubeconfigText(server: string, pki: KubePki): string {
  const b64 = (f: string) => fs.readFileSync(f).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: talos-gate-sim",
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(pki.caCert)}`,
    "users:",
    "- name: admin",
    "  user:",
    `    client-certificate-data: ${b64(pki.adminCert)}`,
    `    client-key-data: ${b64(pki.adminKey)}`,
    "contexts:",
    "- name: talos-gate-sim",
    "  context:",
    "    cluster: talos-gate-sim",
    "    user: admin",
    "current-context: talos-gate-sim",
    "",
  ].join("\n");
}

function startProcess(bin: string, args: string[], logFile: string): ChildProcess {
  const log = fs.openSync(logFile, "a");
  const child = spawn(bin, args, { stdio: ["ignore", log, log], detached: false });
  fs.closeSync(log);
  return child;
}

function stopProcess(child: ChildProcess | undefined, timeoutMs = 10000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

async function waitReady(url: string, pki: KubePki, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const ca = fs.readFileSync(pki.caCert);
  const cert = fs.readFileSync(pki.adminCert);
  const key = fs.readFileSync(pki.adminKey);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`kube-apiserver exited with code ${child.exitCode} while starting; last log lines:\n${tail(logFile)}`);
    }
    const ok = await new Promise<boolean>((resolve) => {
      const req = https.get(`${url}/readyz`, { ca, cert, key, timeout: 2000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on("error", () => resolve(false));
      req.on("timeout", () => req.destroy());
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`kube-apiserver did not become ready within ${timeoutMs} ms; last log lines:\n${tail(logFile)}`);
}

async function waitEtcd(port: number, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`etcd exited with code ${child.exitCode}; last log lines:\n${tail(logFile)}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`etcd did not become healthy within ${timeoutMs} ms; last log lines:\n${tail(logFile)}`);
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
  const etcd = startProcess(etcdBin, [
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
    "--disable-admission-plugins=ServiceAccount", "--allow-privileged=true", "--enable-garbage-collector=false",
    "--endpoint-reconciler-type=none", "--profiling=false", "--enable-priority-and-fairness=false", "--v=0",
  ];
  const stopAll = async () => {
    await stopProcess(apiserver);
    await stopProcess(etcd);
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (ownsDir) fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitEtcd(etcdPort, etcd, etcdLog, timeout);
    apiserver = startProcess(apiserverBin, apiArgs, apiLog);
    await waitReady(server, pki, apiserver, apiLog, timeout);
  } catch (err) {
    await stopAll();
    throw err;
  }
  const kubeconfig = kubeconfigText(server, pki);
  const kubeconfigPath = path.join(dir, "kubeconfig");
  fs.writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
  let stopped = false;
  return {
    server,
    kubeconfig,
    kubeconfigPath,
    dir,
    pids: () => [etcd.pid, apiserver?.pid].filter((p): p is number => typeof p === "number"),
    async restartApiServer(downMs = 0) {
      await stopProcess(apiserver);
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      apiserver = startProcess(apiserverBin, apiArgs, apiLog);
      await waitReady(server, pki, apiserver, apiLog, timeout);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopAll();
    },
  };
}
