// Every request of the Kubernetes port ends at its bound: an API server that accepts connections and never answers
// (a hung load balancer, a half-open connection) must not hang a rollout, its cleanup or a preview.
import * as assert from "node:assert/strict";
import * as net from "node:net";
import { createKubeApi } from "../../../provider/kube";

function silentServer(): Promise<{ port: number; close(): void }> {
  return new Promise((resolve) => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((s) => sockets.add(s)); // accepts, never answers (not even the TLS handshake)
    server.listen(0, "127.0.0.1", () => resolve({
      port: (server.address() as net.AddressInfo).port,
      close: () => {
        for (const s of sockets) s.destroy();
        server.close();
      },
    }));
  });
}

function kubeconfig(port: number): string {
  return [
    "apiVersion: v1", "kind: Config",
    "clusters:", "- name: c", "  cluster:", `    server: https://127.0.0.1:${port}`, "    insecure-skip-tls-verify: true",
    "users:", "- name: u", "  user:", "    token: t",
    "contexts:", "- name: c", "  context:", "    cluster: c", "    user: u", "current-context: c", "",
  ].join("\n");
}

describe("integration: kube port — request bound", function () {
  this.timeout(60000);

  it("a request the API server never answers fails at the request timeout, saying so", async () => {
    const server = await silentServer();
    const logs: string[] = [];
    const kube = createKubeApi(kubeconfig(server.port), { requestTimeoutMs: 500, log: (l) => logs.push(l) });
    try {
      for (const call of [() => kube.uncordon("w-1", "test"), () => kube.runningRollout("prod")]) {
        await assert.rejects(Promise.race([
          call(),
          new Promise((_, reject) => setTimeout(() => reject(new Error("still waiting after 20 s")), 20_000)),
        ]), (err: Error) => {
          assert.match(err.message, /no answer from the API server before the request timed out/);
          return true;
        });
      }
      // Best-effort calls end too, and say why in their log.
      assert.deepEqual(await kube.sweepRunners(), { jobs: 0, pods: 0 });
      assert.match(logs.join("\n"), /listing runner Jobs.*no answer from the API server before the request timed out/);
    } finally {
      await kube.close();
      server.close();
    }
  });
});
