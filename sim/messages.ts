// User-visible messages of the simulated cluster's control endpoint (`talos-gate sim fault|recover|status`).

export const FAULT_NAMES = [
  "never-comes-back", "rollback", "slow-boot=<duration>", "etcd-unhealthy", "pull-failure", "static-pod-never-ready", "kubelet-never-returns", "clear",
] as const;

export const simMsg = {
  unknownFault: (text: string) =>
    `unknown fault ${JSON.stringify(text)}; faults: ${FAULT_NAMES.join(", ")} (e.g. slow-boot=30s)`,
  badSlowBoot: (text: string) =>
    `slow-boot needs a positive Go duration, e.g. slow-boot=30s; got ${JSON.stringify(text)}`,
  unknownNode: (node: string, known: string[]) =>
    `no simulated node ${JSON.stringify(node)}; nodes: ${known.join(", ")}`,
  etcdOnWorker: (node: string) =>
    `node ${node} is a worker and runs no etcd member; etcd-unhealthy applies to control planes`,
  notDown: (node: string) =>
    `node ${node} is not down, so there is nothing to recover (nor is any of its static pods or its kubelet held); 'sim recover' ` +
    "brings back a node left down by never-comes-back, and what static-pod-never-ready or kubelet-never-returns held",
  badRequest: (detail: string) => `bad request to the sim's control endpoint: ${detail}`,
  unauthorized: () => "the sim's control endpoint needs the token from its state.json",
  notFound: (path: string) => `the sim's control endpoint has no ${path}`,
  noAnswer: (url: string, detail: string) =>
    `the sim's control endpoint ${url} did not answer (${detail}); check that the sim daemon runs ('talos-gate sim status') and its sim.log`,
  faultSet: (node: string, faults: string[]) =>
    faults.length ? `node ${node}: faults now ${faults.join(", ")}` : `node ${node}: no faults`,
  recovered: (node: string) => `node ${node} is booting again; never-comes-back is cleared, its other faults stay`,

  // --- the sim's own failures (not Talos' or Kubernetes' answers, which the sim words as they do)
  duplicateNode: (name: string, address: string) => `duplicate simulated node ${name} (${address})`,
  endpointsNotListening: () => "the simulated Talos endpoints are not listening",
  apiProxyNotStarted: (ms: number) =>
    `the sim's API proxy process (dist/sim/apiproxyProcess.js) did not listen within ${ms} ms; see the sim's log for its error`,
  noSuchNode: (nameOrAddress: string) => `no simulated Talos node "${nameOrAddress}"`,
  unknownOption: (arg: string | undefined, options: string[]) => `unknown option ${arg}; options: ${options.join(", ")}`,
  needsValue: (flag: string) => `${flag} needs a value`,
  badNumber: (flag: string, fractional: boolean, min: number, value: string) =>
    `${flag} must be a ${fractional ? "number" : "whole number"} >= ${min}, got "${value}"`,
  badVersion: (version: string) => `--version must be a Talos version like v1.12.4, got "${version}"`,
  badKubernetesVersion: (version: string) => `--kubernetes must be a Kubernetes version like v1.35.2, got "${version}"`,
  noFreePort: (first: number, last: number, locks: string) => `no free loopback port between ${first} and ${last} after 200 tries (locks in ${locks})`,
  exitedWhileStarting: (name: string, code: number | null, log: string) => `${name} exited with code ${code} while starting; last log lines:\n${log}`,
  notReadyWithin: (name: string, timeoutMs: number, log: string) => `${name} did not become ready within ${timeoutMs} ms; last log lines:\n${log}`,
  etcdExited: (code: number | null, log: string) => `etcd exited with code ${code}; last log lines:\n${log}`,
  etcdNotHealthy: (timeoutMs: number, log: string) => `etcd did not become healthy within ${timeoutMs} ms; last log lines:\n${log}`,
  opensslFailed: (command: string | undefined, detail: string) => `openssl ${command} failed: ${detail} (is OpenSSL 3 installed?)`,
  machineNamesNotUnique: () => "kube sim: machine names must be unique (each becomes a Node name)",
  workloadNotRunning: (running: number, expected: number, afterMs: number) =>
    `kube sim: only ${running} of ${expected} workload pods are Running after ${afterMs} ms`,
  noCurrentCluster: () => "kube sim: the kubeconfig has no current cluster; pass a kubeconfig with a current-context",
  daemonFailed: (detail: string) => `talos-gate sim: failed to start: ${detail}\n`,
};
