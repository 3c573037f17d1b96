// The control plane's server processes (etcd, kube-apiserver, kube-controller-manager, kube-scheduler): spawned with
// their output appended to a log file, stopped with SIGTERM then SIGKILL, and waited for on their health endpoint.
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import { simMsg } from "./messages";

export function startServer(bin: string, args: string[], logFile: string): ChildProcess {
  const log = fs.openSync(logFile, "a");
  // Never in-cluster: a server that saw KUBERNETES_SERVICE_HOST would look for a pod's service-account token.
  const env = { ...process.env };
  delete env.KUBERNETES_SERVICE_HOST;
  delete env.KUBERNETES_SERVICE_PORT;
  const child = spawn(bin, args, { stdio: ["ignore", log, log], detached: false, env });
  fs.closeSync(log);
  return child;
}

export function stopServer(child: ChildProcess | undefined, timeoutMs = 10000): Promise<void> {
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

export function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

export interface HealthProbe {
  /** e.g. https://127.0.0.1:6443/readyz */
  url: string;
  ca: Buffer;
  /** Client certificate, when the endpoint needs one (kube-apiserver's /readyz). */
  cert?: Buffer;
  key?: Buffer;
}

function probe(p: HealthProbe): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const req = https.get(p.url, { ca: p.ca, cert: p.cert, key: p.key, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
  });
}

/** Waits until the endpoint answers 200; fails with the log tail if the process exits or the time is up. */
export async function waitHealthy(name: string, p: HealthProbe, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(simMsg.exitedWhileStarting(name, child.exitCode, tail(logFile)));
    }
    if (await probe(p)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(simMsg.notReadyWithin(name, timeoutMs, tail(logFile)));
}
