// The live status mirror (ConfigMap, throttled, last write wins) and Kubernetes Events for rollout transitions.
import * as assert from "node:assert/strict";
import { createKubeApi } from "../../../provider/kube";
import { freshNamespace, serviceAccountKubeconfig, testControlPlane } from "../../support/kube";
import { harness } from "./helpers";

let counter = 0;
const clusterName = () => `st-${process.pid}-${Date.now().toString(36)}-${counter++}`;

describe("integration: kube port — status mirror and events", function () {
  this.timeout(120000);

  it("round-trips the status through ConfigMap kube-system/talos-gate-status-<cluster>", async () => {
    const h = await harness();
    const cluster = clusterName();
    assert.equal(await h.kube.readStatus(cluster), undefined);
    const status = {
      phase: "Upgrading", status: "updating machines 2/5", step: 'waiting for healthchecks to pass: "cluster-x-ceph": waiting to complete',
      lastUpgradeVersion: "v1.12.4", currentUpgradeVersion: "v1.13.2", nested: { list: [1, "two", null, true] },
    };
    await h.kube.writeStatus(cluster, status);
    assert.deepEqual(await h.kube.readStatus(cluster), status);
    const cm = await h.core.readNamespacedConfigMap({ name: `talos-gate-status-${cluster}`, namespace: "kube-system" });
    assert.deepEqual(JSON.parse(cm.data?.["status.json"] ?? "null"), status, "stored as JSON under status.json");
    // Another process (e.g. `talos-gate status`) reads the same thing.
    const other = createKubeApi((await testControlPlane()).kubeconfig);
    assert.deepEqual(await other.readStatus(cluster), status);
    await other.close();
  });

  it("many transitions within one throttle window cost one serialization per write, and the newest state is written", async () => {
    const h = await harness();
    const cluster = clusterName();
    let serialized = 0;
    const status = { phase: "Upgrading", done: 0, toJSON() {
      serialized++;
      return { phase: this.phase, done: this.done };
    } };
    // A 1,000-node rollout reports thousands of transitions; the status is one object updated in place.
    for (let i = 1; i <= 1000; i++) {
      status.done = i;
      void h.kube.writeStatus(cluster, status);
    }
    status.phase = "Done";
    await h.kube.flush();
    assert.deepEqual(await h.kube.readStatus(cluster), { phase: "Done", done: 1000 }, "the state as it is at the write");
    assert.ok(serialized <= 3, `serialized ${serialized} times for 1,000 transitions (once per write: the first, then the coalesced rest)`);
  });

  it("a status that cannot be serialized is a warning naming the ConfigMap, never a failure of the caller", async () => {
    const h = await harness();
    const cluster = clusterName();
    const status: Record<string, unknown> = { phase: "Upgrading" };
    status.self = status;
    await h.kube.writeStatus(cluster, status);
    await h.kube.flush();
    assert.equal(await h.kube.readStatus(cluster), undefined, "nothing written");
    assert.ok(h.logs.some((l) => l.includes(`talos-gate-status-${cluster} failed: the status cannot be serialized as JSON`)), h.logs.join("\n"));
  });

  it("still reads a status written as YAML under status.yaml by earlier builds", async () => {
    const h = await harness();
    const cluster = clusterName();
    await h.core.createNamespacedConfigMap({
      namespace: "kube-system",
      body: { metadata: { name: `talos-gate-status-${cluster}` }, data: { "status.yaml": "phase: Done\nlastUpgradeVersion: v1.13.2\n" } },
    });
    assert.deepEqual(await h.kube.readStatus(cluster), { phase: "Done", lastUpgradeVersion: "v1.13.2" });
  });

  it("throttles writes per cluster: a burst becomes few writes and the last one wins", async () => {
    const h = await harness();
    const cluster = clusterName();
    const before = h.kube.stats().requests;
    for (let i = 1; i <= 20; i++) await h.kube.writeStatus(cluster, { status: `updating machines ${i}/20` });
    await h.kube.flush();
    const writes = h.kube.stats().requests - before;
    assert.ok(writes <= 4, `20 status updates in a burst took ${writes} requests`);
    assert.deepEqual(await h.kube.readStatus(cluster), { status: "updating machines 20/20" });
  });

  it("records events on Nodes and runner Jobs, aggregating repeats", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "ev");
    const node = `ev-node-${process.pid}-${Date.now().toString(36)}`;
    h.kube.recordEvent({ object: { kind: "Node", name: node }, reason: "UpgradeStarted", message: "upgrading to v1.13.2" });
    h.kube.recordEvent({ object: { kind: "Job", name: "talos-gate-cluster-x-ceph", namespace: ns }, type: "Warning", reason: "HealthcheckFailed", message: "ceph is not healthy" });
    h.kube.recordEvent({ object: { kind: "Job", name: "talos-gate-cluster-x-ceph", namespace: ns }, type: "Warning", reason: "HealthcheckFailed", message: "ceph is not healthy" });
    await h.kube.flush();
    const nodeEvents = (await h.core.listNamespacedEvent({ namespace: "default", fieldSelector: `involvedObject.name=${node}` })).items;
    assert.equal(nodeEvents.length, 1);
    assert.equal(nodeEvents[0].involvedObject.kind, "Node");
    assert.equal(nodeEvents[0].reason, "UpgradeStarted");
    assert.equal(nodeEvents[0].source?.component, "talos-gate");
    const jobEvents = (await h.core.listNamespacedEvent({ namespace: ns })).items;
    assert.equal(jobEvents.length, 1, "a repeated event bumps the count instead of adding an Event");
    assert.equal(jobEvents[0].count, 2);
    assert.equal(jobEvents[0].type, "Warning");
    assert.equal(jobEvents[0].involvedObject.namespace, ns);
  });

  it("a refused Event write is said once and stops recording; it never throws into the caller and the flush ends (issue 22.5)", async () => {
    const cp = await testControlPlane();
    const ns = await freshNamespace(cp, "evno");
    const log: string[] = [];
    const kube = createKubeApi(await serviceAccountKubeconfig(cp, ns, "no-events"), { log: (l) => log.push(l) });
    try {
      for (let i = 0; i < 5; i++) kube.recordEvent({ object: { kind: "Node", name: `n-${i}` }, reason: "TalosUpgradeStarted", message: "x" });
      const before = kube.stats().requests;
      await kube.flush();
      assert.deepEqual(log.map((l) => l.replace(/: .*$/s, "")), ["the cluster refused to record Kubernetes Events (the rollout goes on without them; `talos-gate rbac` prints the role that allows them)"]);
      assert.match(log[0], /forbidden/i);
      assert.ok(kube.stats().requests - before <= 1, "after the first refusal no more writes are tried");
    } finally {
      await kube.close();
    }
  });
});
