// Cluster reads, cordon/uncordon and a PDB-aware drain against the real control plane (its disruption controller
// computes the PDB status). The Nodes here are the test's own, with no kubelet emulator behind them, so the test plays
// the kubelet's part of a graceful deletion: it removes evicted pods (delete with grace 0) once they are marked.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { eventually, freshNamespace, testControlPlane, wholeSecond } from "../../support/kube";
import { KubeClients } from "../../../provider/kube/client";
import { drain } from "../../../provider/kube/drain";
import { collator } from "../../../provider/kube/nodes";
import { delay, harness, Harness } from "./helpers";

let nodeCounter = 0;
async function createNode(h: Harness, opts: { controlPlane?: boolean; ready?: boolean; osImage?: string; set?: string; ip?: string; bare?: boolean }) {
  const name = `node-${process.pid}-${Date.now().toString(36)}-${nodeCounter++}`;
  const labels: Record<string, string> = { "kubernetes.io/hostname": name };
  if (opts.controlPlane) labels["node-role.kubernetes.io/control-plane"] = "";
  if (opts.set) labels["talos-gate.dev/machine-set"] = opts.set;
  // A kubelet registers its Node with annotations (`bare`: none, as no kubelet would).
  const annotations = opts.bare ? undefined : { "volumes.kubernetes.io/controller-managed-attach-detach": "true" };
  await h.core.createNode({ body: { metadata: { name, labels, annotations } } });
  const now = wholeSecond();
  await h.core.patchNodeStatus({
    name,
    body: [{
      op: "add", path: "/status",
      value: {
        addresses: [{ type: "Hostname", address: name }, { type: "InternalIP", address: opts.ip ?? "10.5.0.2" }],
        conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True", reason: "KubeletReady", message: "ok", lastHeartbeatTime: now, lastTransitionTime: now }],
        nodeInfo: {
          osImage: opts.osImage ?? "Talos (v1.12.4)", architecture: "amd64", bootID: "b", containerRuntimeVersion: "containerd://2.1",
          kernelVersion: "6.12", kubeProxyVersion: "", kubeletVersion: "v1.36.3", machineID: "m", operatingSystem: "linux", systemUUID: "u",
        },
      },
    }],
  });
  return name;
}

async function runningPod(h: Harness, ns: string, name: string, node: string, extra: { labels?: Record<string, string>; owner?: { kind: string; name: string; uid: string }; annotations?: Record<string, string> } = {}) {
  await h.core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: {
        name, labels: extra.labels, annotations: extra.annotations,
        ownerReferences: extra.owner ? [{ apiVersion: "apps/v1", ...extra.owner, controller: true }] : undefined,
      },
      spec: { nodeName: node, containers: [{ name: "c", image: "busybox" }] },
    },
  });
  const now = wholeSecond();
  await h.core.patchNamespacedPodStatus({
    name, namespace: ns,
    body: [{
      op: "add", path: "/status",
      value: {
        phase: "Running", startTime: now,
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: now }],
        containerStatuses: [{ name: "c", image: "busybox", imageID: "", ready: true, started: true, restartCount: 0, state: { running: { startedAt: now } } }],
      },
    }],
  });
}

/** The kubelet's part of a graceful deletion: pods marked for deletion on `node` are removed. */
function fakeKubelet(h: Harness, node: string): () => void {
  let stopped = false;
  void (async () => {
    while (!stopped) {
      try {
        const pods = (await h.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items;
        for (const p of pods.filter((x) => x.metadata?.deletionTimestamp)) {
          await h.core.deleteNamespacedPod({ name: p.metadata!.name!, namespace: p.metadata!.namespace!, gracePeriodSeconds: 0 }).catch(() => undefined);
        }
      } catch {
        // keep going
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return () => (stopped = true);
}

describe("integration: kube port — nodes and drain", function () {
  this.timeout(120000);

  it("lists machines with role, InternalIP, readiness, cordon state, Talos version and machine set", async () => {
    const h = await harness();
    const cp1 = await createNode(h, { controlPlane: true, osImage: "Talos (v1.13.2)", ip: "10.5.0.10" });
    const w1 = await createNode(h, { ready: false, osImage: "Ubuntu 24.04", ip: "10.5.0.20" });
    const w2 = await createNode(h, { set: "gpu", ip: "10.5.0.21" });
    assert.equal(await h.kube.cordon(w2, "pulumi:p/s/talos"), true);
    const machines = await h.kube.listMachines();
    const byName = new Map(machines.map((m) => [m.name, m]));
    assert.deepEqual(byName.get(cp1), {
      name: cp1, role: "controlplane", address: "10.5.0.10", ready: true, cordoned: false, talosVersion: "v1.13.2", kubeletVersion: "v1.36.3", bootId: "b", machineSet: "control-planes",
    });
    assert.deepEqual(byName.get(w1), { name: w1, role: "worker", address: "10.5.0.20", ready: false, cordoned: false, kubeletVersion: "v1.36.3", bootId: "b", machineSet: "workers" });
    assert.deepEqual(byName.get(w2), {
      name: w2, role: "worker", address: "10.5.0.21", ready: true, cordoned: true, cordonedBy: "pulumi:p/s/talos", talosVersion: "v1.12.4", kubeletVersion: "v1.36.3", bootId: "b", machineSet: "gpu",
    });
    assert.equal(await h.kube.uncordon(w2, "pulumi:p/s/talos"), true);
    const node = await h.core.readNode({ name: w2 });
    assert.notEqual(node.spec?.unschedulable, true, "uncordoned");
    assert.equal(node.metadata?.annotations?.["talos-gate.dev/cordoned-by"], undefined, "the mark is gone with the cordon");
  });

  it("the Node watch holds every machine, sees a change at once, and keeps only what a Machine needs", async () => {
    const h = await harness();
    const node = await createNode(h, { ready: false, osImage: "Talos (v1.12.4)", ip: "10.5.0.77" });
    const watch = h.kube.watchMachines();
    try {
      const listed = await watch.machines();
      assert.equal(await watch.machines(), listed, "one Machine array per generation, built when asked");
      const first = listed.find((m) => m.name === node);
      assert.deepEqual(first, { name: node, role: "worker", address: "10.5.0.77", ready: false, cordoned: false, talosVersion: "v1.12.4", kubeletVersion: "v1.36.3", bootId: "b", machineSet: "workers" });
      const since = watch.generation;
      const changed = watch.changed(since);
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      await h.core.patchNodeStatus({ name: node, body: [
        { op: "replace", path: "/status/conditions/0/status", value: "True" },
        { op: "replace", path: "/status/conditions/0/lastTransitionTime", value: now },
        { op: "replace", path: "/status/nodeInfo/osImage", value: "Talos (v1.13.2)" },
        { op: "replace", path: "/status/nodeInfo/bootID", value: "b2" },
      ] });
      await Promise.race([changed, delay(30_000).then(() => assert.fail("no change seen"))]);
      assert.notEqual(await watch.machines(), listed, "a new generation, a new array");
      const after = (await watch.machines()).find((m) => m.name === node)!;
      // The kubelet's report of a new boot (what a worker's early uncordon waits for: rollout/node.ts).
      assert.deepEqual([after.ready, after.talosVersion, after.bootId], [true, "v1.13.2", "b2"]);
      assert.ok(watch.generation > since);
      assert.equal(await h.kube.cordon(node, "pulumi:p/s/talos"), true);
      await eventually("the watch to see the cordon's owner", async () => (await watch.machines()).find((m) => m.name === node)?.cordonedBy === "pulumi:p/s/talos");
      // A taint that keeps pods off is a change too: the drain's placement check reads taints from this watch.
      const tainted = watch.generation;
      await h.core.patchNode({ name: node, body: [{ op: "add", path: "/spec/taints", value: [{ key: "dedicated", value: "db", effect: "NoSchedule" }] }] });
      await Promise.race([watch.changed(tainted), delay(30_000).then(() => assert.fail("the taint was not seen"))]);
    } finally {
      watch.stop();
    }
    assert.equal(watch.failed, false);
  });

  it("the Node watch ignores updates that change nothing a Machine holds, and does not rebuild unchanged machines", async () => {
    const h = await harness();
    const quiet = await createNode(h, { osImage: "Talos (v1.12.4)", ip: "10.5.0.78" });
    const other = await createNode(h, { osImage: "Talos (v1.12.4)", ip: "10.5.0.79" });
    const watch = h.kube.watchMachines();
    try {
      const before = (await watch.machines()).find((m) => m.name === quiet)!;
      const since = watch.generation;
      // A kubelet heartbeat and another controller's annotation: nothing a Machine holds.
      await h.core.patchNodeStatus({ name: quiet, body: [{ op: "replace", path: "/status/conditions/0/lastHeartbeatTime", value: new Date(Date.now() + 5000) }] });
      await h.core.patchNode({ name: quiet, body: [{ op: "add", path: "/metadata/annotations", value: { "example.com/inventory": "rack-7" } }] });
      // Then a change that matters, on another node: the watch sees events in order, so once it shows this one it
      // has seen the two above.
      assert.equal(await h.kube.cordon(other, "pulumi:p/s/talos"), true);
      await eventually("the watch to see the cordon", async () => (await watch.machines()).find((m) => m.name === other)?.cordoned === true);
      const after = (await watch.machines()).find((m) => m.name === quiet)!;
      assert.equal(after, before, "the quiet node's Machine is the same object: not rebuilt, not changed");
      assert.equal(watch.generation - since, 1, "only the cordon was a change");
    } finally {
      watch.stop();
    }
  });

  it("the Node watch keeps its machines' order between events: an update sorts nothing, a new Node is placed by name", async () => {
    const h = await harness();
    const node = await createNode(h, { osImage: "Talos (v1.12.4)", ip: "10.5.0.80" });
    const watch = h.kube.watchMachines();
    // Every comparison of the machines' order (at 1,000 Nodes, sorting on each event was most of what one cost).
    let compared = 0;
    const compare = collator.compare;
    Object.defineProperty(collator, "compare", { configurable: true, value: (a: string, b: string) => (compared++, compare(a, b)) });
    try {
      await watch.machines();
      compared = 0;
      assert.equal(await h.kube.cordon(node, "pulumi:p/s/talos"), true);
      await eventually("the watch to see the cordon", async () => (await watch.machines()).find((m) => m.name === node)?.cordoned === true);
      assert.equal(compared, 0, "an update of a Node sorts nothing");
      const added = await createNode(h, { osImage: "Talos (v1.12.4)", ip: "10.5.0.81" });
      await eventually("the watch to see the new Node", async () => (await watch.machines()).some((m) => m.name === added));
      const names = (await watch.machines()).map((m) => m.name);
      assert.deepEqual(names, [...names].sort(compare), "ordered by name, as listMachines orders");
    } finally {
      delete (collator as { compare?: unknown }).compare;
      watch.stop();
    }
  });

  it('drain "auto" lists the pods once, after the cordon, and asks the run\'s Node watch where they could go', async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "auto");
    // An empty node: the cordon (one patch) and one listing, which ends the drain (issue 23: it was listed twice, and
    // the cordon read the Node first).
    const empty = await createNode(h, {});
    const before = h.kube.stats().byMethod;
    assert.deepEqual(await h.kube.drain(empty, { timeoutMs: 10000, owner: "test", mode: "auto" }), { drained: true });
    const after = h.kube.stats().byMethod;
    assert.deepEqual([(after.GET ?? 0) - (before.GET ?? 0), (after.PATCH ?? 0) - (before.PATCH ?? 0)], [1, 1], "pod listing; the cordon");
    assert.equal((await h.core.readNode({ name: empty })).spec?.unschedulable, true);

    // With a run's Node watch, its answer decides: here the watch holds no other usable node, while the API server has
    // one (a read would drain), so the node is only cordoned and names its pod.
    const node = await createNode(h, {});
    await createNode(h, {});
    await runningPod(h, ns, "web-0", node);
    const c = new KubeClients((await testControlPlane()).kubeconfig);
    try {
      const outcome = await drain(c, node, { timeoutMs: 10000, owner: "test", mode: "auto" }, () => undefined, () => []);
      assert.deepEqual(outcome, { drained: false, why: "nowhere", pods: [`${ns}/web-0`], pdbs: [] });
      assert.equal(c.stats().byMethod.GET, 2, "pod listing, the namespace's budgets: no Node read (the cordon is one patch), no Node page read");
    } finally {
      c.close();
    }
  });

  it("issue 23.2: lifting our cordon is one request, also after the kubelet wrote the Node's status since the cordon", async () => {
    const h = await harness();
    const node = await createNode(h, {});
    assert.equal(await h.kube.cordon(node, "pulumi:p/s/talos"), true);
    // The kubelet's report at boot: a status write that changes the Node's resourceVersion.
    await h.core.patchNodeStatus({ name: node, body: [{ op: "replace", path: "/status/nodeInfo/bootID", value: "new" }] });
    const before = { ...h.kube.stats().byMethod };
    assert.equal(await h.kube.uncordon(node, "pulumi:p/s/talos"), true);
    const after = h.kube.stats().byMethod;
    assert.deepEqual([(after.GET ?? 0) - (before.GET ?? 0), (after.PATCH ?? 0) - (before.PATCH ?? 0)], [0, 1], "one patch, no read");
    const n = await h.core.readNode({ name: node });
    assert.notEqual(n.spec?.unschedulable, true, "uncordoned");
    assert.equal(n.metadata?.annotations?.["talos-gate.dev/cordoned-by"], undefined, "the mark is gone with the cordon");
    assert.equal(await h.kube.uncordon(node, "pulumi:p/s/talos"), false, "no mark any more: nothing lifted");
  });

  it("issue 23: cordoning a schedulable Node is one patch without a read, also after an uncordon; the rest is read first", async () => {
    const h = await harness();
    const requests = () => ({ ...h.kube.stats().byMethod });
    const delta = (before: Record<string, number>) => {
      const after = h.kube.stats().byMethod;
      return [(after.GET ?? 0) - (before.GET ?? 0), (after.PATCH ?? 0) - (before.PATCH ?? 0)];
    };
    // A Node without annotations (a kubelet always writes some): the one patch cannot apply; read, then patched.
    const bare = await createNode(h, { bare: true });
    let before = requests();
    assert.equal(await h.kube.cordon(bare, "pulumi:p/s/talos"), true);
    assert.deepEqual(delta(before), [1, 2], "the patch refused, a read, the patch decided on it");
    assert.equal((await h.core.readNode({ name: bare })).metadata?.annotations?.["talos-gate.dev/cordoned-by"], "pulumi:p/s/talos");

    const node = await createNode(h, {});
    for (const round of ["first", "after an uncordon (unschedulable: false is not stored)"]) {
      before = requests();
      assert.equal(await h.kube.cordon(node, "pulumi:p/s/talos"), true, round);
      assert.deepEqual(delta(before), [0, 1], `${round}: one patch, no read`);
      const n = await h.core.readNode({ name: node });
      assert.equal(n.spec?.unschedulable, true, round);
      assert.equal(n.metadata?.annotations?.["talos-gate.dev/cordoned-by"], "pulumi:p/s/talos", round);
      assert.equal(await h.kube.uncordon(node, "pulumi:p/s/talos"), true, round);
    }
    // Cordoned already (ours from a killed run, or anyone's): the patch's test refuses it, the read decides: not claimed.
    await h.core.patchNode({ name: node, body: [{ op: "add", path: "/spec/unschedulable", value: true }] });
    before = requests();
    assert.equal(await h.kube.cordon(node, "pulumi:p/s/talos"), false, "already cordoned: not claimed");
    assert.deepEqual(delta(before), [1, 1], "the patch refused by its test, a read, nothing patched");
    assert.equal((await h.core.readNode({ name: node })).metadata?.annotations?.["talos-gate.dev/cordoned-by"], undefined);
  });

  it("cordons are owned: an administrator's cordon is never claimed nor lifted, another owner's is left alone", async () => {
    const h = await harness();
    const admin = await createNode(h, {});
    await h.core.patchNode({ name: admin, body: [{ op: "add", path: "/spec/unschedulable", value: true }] }); // kubectl cordon
    assert.equal(await h.kube.cordon(admin, "pulumi:p/s/talos"), false, "already cordoned: not claimed");
    assert.equal(await h.kube.uncordon(admin, "pulumi:p/s/talos"), false, "not ours: not lifted");
    const a = await h.core.readNode({ name: admin });
    assert.equal(a.spec?.unschedulable, true, "the administrator's cordon stays");
    assert.equal(a.metadata?.annotations?.["talos-gate.dev/cordoned-by"], undefined);
    assert.equal((await h.kube.readMachine!(admin))?.cordonedBy, undefined);

    const other = await createNode(h, {});
    assert.equal(await h.kube.cordon(other, "pulumi:p/other-stack/talos"), true);
    assert.equal(await h.kube.uncordon(other, "pulumi:p/s/talos"), false, "another owner's cordon is left alone");
    assert.equal((await h.core.readNode({ name: other })).spec?.unschedulable, true);
    assert.equal(await h.kube.uncordon(other, "pulumi:p/other-stack/talos"), true);
  });

  it("drain evicts pods, skips DaemonSet and mirror pods, and names the PodDisruptionBudget that blocks it", async () => {
    const h = await harness();
    const ns = await freshNamespace(await testControlPlane(), "drain");
    const node = await createNode(h, {});
    await runningPod(h, ns, "web-0", node, { labels: { app: "web" } });
    await runningPod(h, ns, "db-0", node, { labels: { app: "db" } });
    // A real owner (the garbage collector deletes pods whose owner does not exist) for this node only. The real
    // DaemonSet controller keeps agent-x: the node's not-ready taint (no node lifecycle controller removes it) stops
    // new daemon pods but not running ones, and OnDelete never replaces it.
    const ds = await h.kc.makeApiClient(k8s.AppsV1Api).createNamespacedDaemonSet({ namespace: ns, body: {
      metadata: { name: "agent" },
      spec: {
        selector: { matchLabels: { app: "agent" } },
        updateStrategy: { type: "OnDelete" },
        template: { metadata: { labels: { app: "agent" } }, spec: { nodeSelector: { "kubernetes.io/hostname": node }, containers: [{ name: "c", image: "busybox" }] } },
      },
    } });
    await runningPod(h, ns, "agent-x", node, { labels: { app: "agent" }, owner: { kind: "DaemonSet", name: "agent", uid: ds.metadata!.uid! } });
    await runningPod(h, ns, "static-x", node, { annotations: { "kubernetes.io/config.mirror": "abc" } });
    const policy = h.kc.makeApiClient(k8s.PolicyV1Api);
    await policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: { metadata: { name: "db-pdb" }, spec: { minAvailable: 1, selector: { matchLabels: { app: "db" } } } } });
    await eventually("the disruption controller to allow no disruption of db-0", async () => {
      const pdb = await policy.readNamespacedPodDisruptionBudget({ name: "db-pdb", namespace: ns });
      return pdb.status?.observedGeneration === pdb.metadata?.generation && pdb.status?.currentHealthy === 1 && pdb.status.disruptionsAllowed === 0;
    });
    const stopKubelet = fakeKubelet(h, node);
    try {
      await assert.rejects(h.kube.drain(node, { timeoutMs: 3000, owner: "test" }), (err: Error) => {
        assert.match(err.message, new RegExp(`drain of node ${node} did not finish within 3s`));
        assert.match(err.message, new RegExp(`${ns}/db-0 \\(blocked by PodDisruptionBudget ${ns}/db-pdb`));
        assert.match(err.message, new RegExp(`PodDisruptionBudget ${ns}/db-pdb — scale up`));
        assert.doesNotMatch(err.message, /web-0|agent-x|static-x/);
        return true;
      });
      assert.equal((await h.core.readNode({ name: node })).spec?.unschedulable, true, "cordoned");
      const left = async () => (await h.core.listNamespacedPod({ namespace: ns })).items.map((p) => p.metadata?.name).sort();
      assert.deepEqual(await left(), ["agent-x", "db-0", "static-x"], "web-0 was evicted");

      // The budget allows one disruption once the disruption controller has seen the new spec.
      await policy.patchNamespacedPodDisruptionBudget({ name: "db-pdb", namespace: ns, body: { spec: { minAvailable: 0 } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
      await h.kube.drain(node, { timeoutMs: 10000, owner: "test" });
      assert.deepEqual(await left(), ["agent-x", "static-x"]);
      await h.kube.uncordon(node, "test");
      assert.notEqual((await h.core.readNode({ name: node })).spec?.unschedulable, true, "uncordoned");
    } finally {
      stopKubelet();
    }
  });
});
