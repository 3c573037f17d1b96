// The API server behind its control plane (issue 18.6). On a real cluster the API server runs on the control planes:
// with one control plane, or a kubeconfig pointing at one of them, the API is gone while that node reboots. The sim's
// kube-apiserver is one process that never goes down with a node, so the kubeconfig's address is served by this TCP
// proxy instead: it forwards to kube-apiserver while its control plane is up, and while that node is down it stops
// listening (connections are refused) and resets the connections it had, as a machine that went down does. The sim's
// own components (kubelet emulator, controllers) keep talking to kube-apiserver directly, as the other nodes would.
// The forwarding runs in a process of its own (apiproxyProcess.ts): in the sim's busy event loop it added ~80 ms to
// every request at 1,000 nodes.
import { fork, type ChildProcess } from "node:child_process";
import * as path from "node:path";
import type { SimNode } from "./talos";
import { freePort } from "./ports";
import type { ProxyCommand, ProxyReport } from "./apiproxyProcess";
import { simMsg } from "./messages";

export interface ApiProxy {
  /** https://127.0.0.1:<port>: the address the user's kubeconfig names. */
  server: string;
  /** The control plane the API is behind. */
  node: string;
  close(): Promise<void>;
}

/** What the proxy follows: a node's down and up (TalosNodeSim's events). */
export interface NodeEvents {
  on(event: "down" | "up", listener: (node: SimNode) => void): unknown;
  off(event: "down" | "up", listener: (node: SimNode) => void): unknown;
}

/** How long the forwarding process may take to start listening, and to exit when closed. */
const START_TIMEOUT_MS = 15_000;
const EXIT_TIMEOUT_MS = 5_000;

export async function startApiProxy(target: string, node: string, nodes: NodeEvents): Promise<ApiProxy> {
  const upstream = new URL(target);
  const port = await freePort();
  const child = fork(path.join(__dirname, "apiproxyProcess.js"), [upstream.hostname, upstream.port, String(port)], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const send = (c: ProxyCommand) => {
    if (child.connected) child.send(c);
  };
  await firstListening(child, exited).catch((err: Error) => {
    child.kill("SIGKILL");
    throw err;
  });
  const onDown = (n: SimNode) => {
    if (n.name === node) send("down");
  };
  const onUp = (n: SimNode) => {
    if (n.name === node) send("up");
  };
  nodes.on("down", onDown);
  nodes.on("up", onUp);
  return {
    server: `https://127.0.0.1:${port}`,
    node,
    async close() {
      nodes.off("down", onDown);
      nodes.off("up", onUp);
      if (child.exitCode !== null || child.signalCode !== null) return;
      send("close");
      const timer = setTimeout(() => child.kill("SIGKILL"), EXIT_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

function firstListening(child: ChildProcess, exited: Promise<void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(simMsg.apiProxyNotStarted(START_TIMEOUT_MS))), START_TIMEOUT_MS);
    child.once("message", (m: ProxyReport) => {
      if (m === "listening") {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(simMsg.apiProxyNotStarted(START_TIMEOUT_MS)));
    });
  });
}
