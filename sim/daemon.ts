// The background process behind `talos-gate sim up`: starts a simulated cluster, writes kubeconfig, talosconfig and
// state.json into the sim dir, and runs until SIGTERM/SIGINT, then stops everything and removes its temp data.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseSimArgs, SimState, stateFile } from "./state";
import { startSimCluster } from "./cluster";
import { startControlServer } from "./control";
import { simMsg } from "./messages";

async function main(): Promise<void> {
  const opts = parseSimArgs(process.argv.slice(2));
  // As on a real cluster, the kubeconfig's API server is away while its control plane reboots.
  // kube-proxy's DaemonSet too: what a Kubernetes upgrade syncs (sim/kube/kubeproxy.ts).
  const cluster = await startSimCluster({ ...opts, apiBehindControlPlane: true, kubeProxy: true });
  const control = await startControlServer(cluster.talos);
  const state: SimState = {
    pid: process.pid,
    dir: opts.dir,
    startedAt: new Date().toISOString(),
    kubeconfig: cluster.kubeconfigPath,
    talosconfig: cluster.talosconfigPath,
    kubernetesServer: cluster.server,
    talosEndpoint: cluster.talos.endpoints.join(", "),
    machines: cluster.machines.map((m) => ({ name: m.name, role: m.role, address: m.address, version: m.version })),
    bootSeconds: opts.bootSeconds,
    pullMs: opts.pullMs,
    installMs: opts.installMs,
    control: { url: control.url, token: control.token },
  };
  // 0600: the control token lets whoever reads it set faults
  fs.writeFileSync(stateFile(opts.dir), JSON.stringify(state, null, 2) + "\n", { mode: 0o600 });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await control.close();
    await cluster.stop();
    for (const f of ["kubeconfig", "talosconfig", "state.json"]) fs.rmSync(path.join(opts.dir, f), { force: true });
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((err) => {
  process.stderr.write(simMsg.daemonFailed(String((err as Error).stack ?? err)));
  process.exit(1);
});
