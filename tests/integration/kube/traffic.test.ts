// What the Kubernetes port reads from the API server, counted on its sockets (provider/kube/traffic.ts): the answers of
// requests on the shared keep-alive agent, the events of watches (client-node builds a new agent per watch), and the
// status mirror storing those counters beside the status, where `talos-gate status` and the benchmark read them.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { createKubeApi } from "../../../provider/kube";
import { KubeClients } from "../../../provider/kube/client";
import { eventually, freshNamespace, kubeConfigOf, testControlPlane } from "../../support/kube";
import { onFileEnd } from "../../support/fixtures";

/** Bytes of data per ConfigMap; 20 of them stay below the API server's 128 KiB gzip threshold, so sizes compare. */
const PAYLOAD = 2048;

function configMap(name: string, fill: string): k8s.V1ConfigMap {
  return { metadata: { name, labels: { bench: "traffic" } }, data: { blob: fill.repeat(PAYLOAD) } };
}

describe("integration: kube port — bytes read from the API server", function () {
  this.timeout(120000);

  async function setup() {
    const cp = await testControlPlane();
    const ns = await freshNamespace(cp, "traffic");
    const c = new KubeClients(cp.kubeconfig);
    onFileEnd(async () => c.close());
    // Objects are created through another client, so only what the port under test reads is counted.
    const other = kubeConfigOf(cp).makeApiClient(k8s.CoreV1Api);
    return { c, ns, other };
  }

  it("a list of N objects adds at least their JSON size", async () => {
    const { c, ns, other } = await setup();
    for (let i = 0; i < 20; i++) await other.createNamespacedConfigMap({ namespace: ns, body: configMap(`cm-${i}`, "l") });
    const before = c.stats().bytesRead;
    const list = (await c.objects.getRaw(`/api/v1/namespaces/${ns}/configmaps`, { labelSelector: "bench=traffic" })) as { items: unknown[] };
    assert.equal(list.items.length, 20);
    const read = c.stats().bytesRead - before;
    const json = Buffer.byteLength(JSON.stringify(list.items));
    assert.ok(json > 20 * PAYLOAD, `the items' JSON is ${json} bytes`);
    assert.ok(read >= json, `read ${read} bytes for a list whose items are ${json} bytes of JSON`);
    // Another request on the same keep-alive socket keeps adding.
    const again = c.stats().bytesRead;
    await c.core.readNamespacedConfigMap({ name: "cm-0", namespace: ns });
    assert.ok(c.stats().bytesRead - again >= PAYLOAD, "a read of one object adds at least its data");
  });

  it("a watch's events count too", async () => {
    const { c, ns, other } = await setup();
    const seen = new Set<string>();
    let done!: () => void;
    const ended = new Promise<void>((r) => (done = r));
    const before = c.stats().bytesRead;
    const stop = await c.watch(`/api/v1/namespaces/${ns}/configmaps`, { labelSelector: "bench=traffic" }, (type, obj) => {
      if (type === "ADDED") seen.add(obj.metadata.name);
    }, () => done());
    for (let i = 0; i < 10; i++) await other.createNamespacedConfigMap({ namespace: ns, body: configMap(`w-${i}`, "w") });
    await eventually("the watch to deliver 10 ADDED events", async () => seen.size === 10, 30000, 50);
    const read = c.stats().bytesRead - before;
    assert.ok(read >= 10 * PAYLOAD, `read ${read} bytes while the watch delivered 10 objects of ${PAYLOAD} bytes of data each`);
    // Ending the watch closes its socket; what it read stays counted.
    stop.abort();
    await ended;
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(c.stats().bytesRead - before >= read, "the closed watch's bytes are kept");
  });

  it("watches go out on the requests' keep-alive agent: a watch after a request opens no connection of its own", async () => {
    const { c, ns } = await setup();
    await c.core.listNamespacedConfigMap({ namespace: ns });
    const opened = c.stats().connections;
    assert.ok(opened >= 1, "the request opened a connection");
    // Three watches one after the other, each ended by the API server (timeoutSeconds): each takes the free keep-alive
    // socket and hands it back. With an agent per watch (client-node's Watch), each was a new TLS connection.
    for (let i = 0; i < 3; i++) {
      let done!: (err: unknown) => void;
      const ended = new Promise<unknown>((r) => (done = r));
      await c.watch(`/api/v1/namespaces/${ns}/configmaps`, { timeoutSeconds: 1 }, () => undefined, (err) => done(err));
      assert.equal(await ended, null, "the watch ended cleanly at its timeout");
      await new Promise((r) => setImmediate(r));
    }
    await c.core.listNamespacedConfigMap({ namespace: ns });
    assert.equal(c.stats().connections, opened, `${c.stats().connections - opened} connection(s) opened for 3 watches and a request`);
  });

  it("the status mirror stores the port's requests, watches and bytes read beside the status, which reads back as written", async () => {
    const cp = await testControlPlane();
    const kube = createKubeApi(cp.kubeconfig);
    onFileEnd(() => kube.close());
    const cluster = `traffic-${process.pid}-${Date.now().toString(36)}`;
    await kube.listMachines();
    await kube.writeStatus(cluster, { phase: "Upgrading", status: "updating machines 1/2" });
    await kube.flush();
    const stats = kube.stats();
    const cm = await kubeConfigOf(cp).makeApiClient(k8s.CoreV1Api)
      .readNamespacedConfigMap({ name: `talos-gate-status-${cluster}`, namespace: "kube-system" });
    const api = JSON.parse(cm.data?.["api.json"] ?? "null");
    assert.ok(api, "api.json is stored beside status.json");
    assert.deepEqual(Object.keys(api).sort(), ["bytesRead", "requests", "watches"]);
    // The counters as they were when the write went out: the list (and the write's own request is not in yet).
    assert.ok(api.requests >= 1 && api.requests < stats.requests, `stored ${api.requests} requests, the port has made ${stats.requests}`);
    assert.ok(api.bytesRead > 0 && api.bytesRead <= stats.bytesRead, `stored ${api.bytesRead} bytes, the port has read ${stats.bytesRead}`);
    assert.deepEqual(await kube.readStatus(cluster), { phase: "Upgrading", status: "updating machines 1/2" });
  });
});
