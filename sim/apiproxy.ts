// The API server behind its control plane (issue 18.6). On a real cluster the API server runs on the control planes:
// with one control plane, or a kubeconfig pointing at one of them, the API is gone while that node reboots. The sim's
// kube-apiserver is one process that never goes down with a node, so the kubeconfig's address is served by this TCP
// proxy instead: it forwards to kube-apiserver while its control plane is up, and while that node is down it stops
// listening (connections are refused) and resets the connections it had, as a machine that went down does. The sim's
// own components (kubelet emulator, controllers) keep talking to kube-apiserver directly, as the other nodes would.
import * as net from "node:net";
import type { SimNode } from "./talos";
import { freePort } from "./ports";

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

export async function startApiProxy(target: string, node: string, nodes: NodeEvents): Promise<ApiProxy> {
  const upstream = new URL(target);
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  let closed = false;
  let listening = false;
  const server = net.createServer((client) => {
    const api = net.connect(Number(upstream.port), upstream.hostname);
    for (const s of [client, api]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined); // either side's error ends both (below)
    }
    client.on("close", () => api.destroy());
    api.on("close", () => client.destroy());
    client.pipe(api);
    api.pipe(client);
  });
  const listen = () => new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      listening = true;
      resolve();
    });
  });
  const stopListening = () => new Promise<void>((resolve) => {
    if (!listening) return resolve();
    listening = false;
    server.close(() => resolve());
    for (const s of sockets) s.resetAndDestroy();
  });
  const onDown = (n: SimNode) => {
    if (n.name === node) void stopListening();
  };
  const onUp = (n: SimNode) => {
    // A port taken meanwhile would leave the API away for good: tried again shortly (the sim's ports are loopback).
    if (n.name === node && !closed && !listening) void listen().catch(() => setTimeout(() => onUp(n), 100));
  };
  nodes.on("down", onDown);
  nodes.on("up", onUp);
  await listen();
  return {
    server: `https://127.0.0.1:${port}`,
    node,
    async close() {
      closed = true;
      nodes.off("down", onDown);
      nodes.off("up", onUp);
      await stopListening();
    },
  };
}
