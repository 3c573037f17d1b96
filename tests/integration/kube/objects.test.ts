// Watch-driven object selections for condition gates, against the real kube-apiserver: a CRD that is not installed
// yet (unavailable, then served once the test installs it), a Ceph-like CephCluster observed by name through create,
// status changes and deletion (managedFields dropped), a label selection that follows objects in and out of the
// selector, scope errors, and a condition evaluated on each state.
import assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { compileCondition, evaluateCondition, selectorString } from "../../../provider/conditions";
import { KubeClients } from "../../../provider/kube/client";
import { watchObjects } from "../../../provider/kube/objects";
import type { ObjectWatch, SelectionState } from "../../../provider/rollout/ports";
import { onFileEnd } from "../../support/fixtures";
import { freshNamespace, kubeConfigOf, testControlPlane } from "../../support/kube";
import { delay } from "./helpers";

/** Waits for a state the predicate accepts (every state is observed in order, coalesced); fails after `ms`. */
async function until(w: ObjectWatch, ok: (s: SelectionState) => boolean, ms = 20000): Promise<SelectionState> {
  const deadline = Date.now() + ms;
  const seen: string[] = [];
  for (;;) {
    const left = deadline - Date.now();
    const s = left > 0 ? await Promise.race([w.next(), delay(left).then(() => "timeout" as const)]) : "timeout";
    if (s === "timeout") assert.fail(`no matching state within ${ms} ms; saw: ${seen.join(" | ")}`);
    assert.ok(s, "watch stopped");
    seen.push(JSON.stringify(s).slice(0, 200));
    if (ok(s)) return s;
  }
}
const objectsOf = (s: SelectionState) => ("objects" in s ? s.objects : undefined);

/** A unique CRD per run: group `ceph<pid>.rook.io`, kind CephCluster (namespaced, schemaless spec and status). */
function cephCrd(group: string): Record<string, unknown> {
  return {
    apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
    metadata: { name: `cephclusters.${group}` },
    spec: {
      group, scope: "Namespaced",
      names: { kind: "CephCluster", plural: "cephclusters", singular: "cephcluster", listKind: "CephClusterList" },
      versions: [{
        name: "v1", served: true, storage: true,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      }],
    },
  };
}

describe("integration: kube port — object selections (condition gates)", function () {
  this.timeout(120000);

  async function setup() {
    const cp = await testControlPlane();
    const c = new KubeClients(cp.kubeconfig);
    onFileEnd(async () => c.close());
    const kc = kubeConfigOf(cp);
    return {
      cp, c, kc, objects: kc.makeApiClient(k8s.KubernetesObjectApi), core: kc.makeApiClient(k8s.CoreV1Api),
      custom: kc.makeApiClient(k8s.CustomObjectsApi),
    };
  }

  it("a CRD not installed is unavailable with the reason, then observed by name once installed", async () => {
    const { cp, c, custom } = await setup();
    const ns = await freshNamespace(cp, "ceph");
    const group = `ceph${process.pid}.rook.io`;
    const apiVersion = `${group}/v1`;
    const w = watchObjects(c, { apiVersion, kind: "CephCluster", namespace: ns, name: "rook-ceph" });
    const cond = compileCondition({
      target: { apiVersion, kind: "CephCluster", namespace: ns, name: "rook-ceph" },
      expression: "object.status.ceph.health == 'HEALTH_OK'",
      message: "'ceph is ' + object.status.ceph.health",
    }).compiled!;
    const verdict = (s: SelectionState) => evaluateCondition(cond, objectsOf(s) as never);
    try {
      const first = await until(w, () => true);
      assert.match("unavailable" in first ? first.unavailable : "", new RegExp(`^${apiVersion} CephCluster is not served by the cluster \\(is its CRD installed\\?\\)`));
      // Sent as written (client-node's typed object API would drop x-kubernetes-preserve-unknown-fields).
      await custom.createClusterCustomObject({ group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", body: cephCrd(group) });
      let s = await until(w, (x) => "objects" in x);
      assert.deepEqual(objectsOf(s), []);
      assert.deepEqual(verdict(s), { state: "held", cause: "object-missing", reason: `${apiVersion} CephCluster ${ns}/rook-ceph not found` });

      // CustomObjectsApi sends the body as it is (the typed object API would drop the schemaless status).
      const ref = { group, version: "v1", namespace: ns, plural: "cephclusters" };
      await custom.createNamespacedCustomObject({ ...ref, body: { apiVersion, kind: "CephCluster", metadata: { name: "rook-ceph" }, status: { phase: "Progressing" } } });
      s = await until(w, (x) => (objectsOf(x) ?? []).length === 1);
      assert.equal(verdict(s).state === "held" && (verdict(s) as { reason: string }).reason,
        `field status.ceph absent on ${apiVersion} CephCluster ${ns}/rook-ceph`);
      const meta = (objectsOf(s)![0] as { metadata: Record<string, unknown> }).metadata;
      assert.equal(meta.managedFields, undefined, "managedFields dropped");
      assert.ok(meta.uid, "the rest of metadata kept");

      const setHealth = (health: string) => custom.patchNamespacedCustomObject(
        { ...ref, name: "rook-ceph", body: { status: { ceph: { health } } } }, k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
      await setHealth("HEALTH_WARN");
      s = await until(w, (x) => verdict(x).state === "held" && (verdict(x) as { cause: string }).cause === "false");
      assert.deepEqual(verdict(s), { state: "held", cause: "false", reason: "ceph is HEALTH_WARN" });
      await setHealth("HEALTH_OK");
      s = await until(w, (x) => verdict(x).state === "passed");

      await custom.deleteNamespacedCustomObject({ ...ref, name: "rook-ceph" });
      s = await until(w, (x) => (objectsOf(x) ?? [1]).length === 0);
      assert.equal(verdict(s).state === "held" && (verdict(s) as { cause: string }).cause, "object-missing");
    } finally {
      w.stop();
    }
  });

  it("a label selection follows objects into and out of the selector, across namespaces", async () => {
    const { cp, c, core } = await setup();
    const [a, b] = [await freshNamespace(cp, "sel"), await freshNamespace(cp, "sel")];
    const app = `db-${process.pid}-${Date.now().toString(36)}`;
    const selector = selectorString({ matchLabels: { app }, matchExpressions: [{ key: "tier", operator: "In", values: ["primary", "replica"] }] });
    const cm = (namespace: string, name: string, tier: string, ready: string) =>
      core.createNamespacedConfigMap({ namespace, body: { metadata: { name, labels: { app, tier } }, data: { ready } } });
    await cm(a, "pg-0", "primary", "true");
    await cm(b, "pg-1", "replica", "true");
    await cm(b, "other", "cache", "true");
    const w = watchObjects(c, { apiVersion: "v1", kind: "ConfigMap", labelSelector: selector });
    const cond = compileCondition({
      target: { apiVersion: "v1", kind: "ConfigMap", labelSelector: { matchLabels: { app }, matchExpressions: [{ key: "tier", operator: "In", values: ["primary", "replica"] }] } },
      expression: "objects.all(o, o.data.ready == 'true')",
      message: "objects.filter(o, o.data.ready != 'true').map(o, o.metadata.name).join(', ') + ' not ready'",
    }).compiled!;
    const names = (s: SelectionState) => (objectsOf(s) ?? []).map((o) => `${(o as k8s.V1ConfigMap).metadata?.namespace}/${(o as k8s.V1ConfigMap).metadata?.name}`);
    try {
      let s = await until(w, (x) => names(x).length === 2);
      assert.deepEqual(names(s), [`${a}/pg-0`, `${b}/pg-1`], "ordered by namespace/name, the non-matching tier left out");
      const listed = objectsOf(s)![0] as { metadata: { creationTimestamp: unknown } };
      assert.equal(typeof listed.metadata.creationTimestamp, "string", "listed objects are raw JSON, like watch events");
      assert.equal(evaluateCondition(cond, objectsOf(s) as never).state, "passed");

      await core.patchNamespacedConfigMap({ name: "pg-1", namespace: b, body: { data: { ready: "false" } } }, k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
      s = await until(w, (x) => evaluateCondition(cond, objectsOf(x) as never).state === "held");
      assert.deepEqual(evaluateCondition(cond, objectsOf(s) as never), { state: "held", cause: "false", reason: "pg-1 not ready" });

      // Relabelled out of the selector: the API server's watch turns the change into a deletion for this selection.
      await core.patchNamespacedConfigMap({ name: "pg-1", namespace: b, body: { metadata: { labels: { tier: "retired" } } } }, k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
      s = await until(w, (x) => names(x).length === 1);
      assert.deepEqual(names(s), [`${a}/pg-0`]);
      assert.equal(evaluateCondition(cond, objectsOf(s) as never).state, "passed");

      await core.patchNamespacedConfigMap({ name: "other", namespace: b, body: { metadata: { labels: { tier: "replica" } } } }, k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
      s = await until(w, (x) => names(x).length === 2);
      assert.deepEqual(names(s), [`${a}/pg-0`, `${b}/other`]);
    } finally {
      w.stop();
    }
  });

  it("a namespaced kind by name needs a namespace; a cluster-scoped kind takes none", async () => {
    const { c } = await setup();
    const w1 = watchObjects(c, { apiVersion: "v1", kind: "ConfigMap", name: "x" });
    await assert.rejects(w1.next(), /v1 ConfigMap is namespaced: set the target's namespace/);
    const w2 = watchObjects(c, { apiVersion: "v1", kind: "Node", namespace: "default", name: "x" });
    await assert.rejects(w2.next(), /v1 Node is cluster-scoped: remove the target's namespace/);
    const w3 = watchObjects(c, { apiVersion: "v1", kind: "Node", name: `absent-${process.pid}` });
    try {
      assert.deepEqual(objectsOf(await until(w3, () => true)), []);
    } finally {
      w1.stop();
      w2.stop();
      w3.stop();
    }
  });
});
