// Supporting manifests: server-side apply (namespaces first), pruning in full mode, one-time mode, dry runs; and the
// server-side dry-run create of a composed runner Job.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { harness, healthcheck } from "./helpers";

let counter = 0;
const unique = () => `${process.pid}-${Date.now().toString(36)}-${counter++}`;

describe("integration: kube port — manifests and Job dry run", function () {
  this.timeout(120000);

  it("applies full manifests server-side, namespaces first, and prunes what is no longer listed", async () => {
    const h = await harness();
    const id = unique();
    const cluster = `m-${id}`;
    const ns = `hc-${id}`;
    const rbac = `
apiVersion: v1
kind: ServiceAccount
metadata: {name: ceph-check, namespace: ${ns}}
---
# comment-only documents are skipped
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: ceph-read, namespace: ${ns}}
rules: [{apiGroups: [""], resources: ["pods"], verbs: ["get", "list"]}]
---
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
`;
    const extra = [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: ns }, data: { a: "1" } }];
    const owner = "urn:pulumi:s::p::talos-gate:index:Cluster::prod";
    const first = await h.kube.applyManifests([{ name: "rbac", content: rbac }, { name: "extra.yaml", content: extra }], { cluster, mode: "full", owner });
    assert.deepEqual(first.applied, [`Namespace ${ns}`, `ServiceAccount ${ns}/ceph-check`, `Role ${ns}/ceph-read`, `ConfigMap ${ns}/settings`]);
    assert.deepEqual(first.pruned, []);
    const sa = await h.core.readNamespacedServiceAccount({ name: "ceph-check", namespace: ns });
    assert.equal(sa.metadata?.labels?.["talos-gate.dev/manifest"], "rbac");
    assert.equal(sa.metadata?.labels?.["talos-gate.dev/cluster"], cluster);
    assert.ok(sa.metadata?.managedFields?.some((f) => f.manager === "talos-gate" && f.operation === "Apply"));

    // Each inventory entry names its owner and the uid the apply returned.
    const inventoryName = `talos-gate-manifests-${cluster}`;
    const inventory = await h.core.readNamespacedConfigMap({ name: inventoryName, namespace: "kube-system" });
    const entries = JSON.parse(inventory.data!["inventory.json"]) as Array<Record<string, string>>;
    assert.deepEqual(entries.find((e) => e.kind === "ServiceAccount"), {
      manifest: "rbac", apiVersion: "v1", kind: "ServiceAccount", namespace: ns, name: "ceph-check", uid: sa.metadata!.uid, owner,
    });
    // Someone who may write ConfigMaps adds entries for objects talos-gate never applied (labelled like its own, or
    // recreated under an applied name): the next apply must not delete them with the pipeline's credentials.
    await h.core.createNamespacedConfigMap({ namespace: ns, body: {
      metadata: { name: "victim", labels: { "talos-gate.dev/cluster": cluster, "talos-gate.dev/manifest": "rbac" } }, data: { keep: "me" },
    } });
    const victim = await h.core.readNamespacedConfigMap({ name: "victim", namespace: ns });
    entries.push({ manifest: "rbac", apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: "victim" });
    entries.push({ manifest: "rbac", apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: "victim", uid: "00000000-0000-0000-0000-000000000000", owner });
    await h.core.replaceNamespacedConfigMap({ name: inventoryName, namespace: "kube-system", body: { ...inventory, data: { "inventory.json": JSON.stringify(entries) } } });

    // Drop the Role and the whole "extra.yaml" manifest: both are pruned, the rest stays.
    const second = await h.kube.applyManifests([{ name: "rbac", content: rbac.replace(/---\napiVersion: rbac[^]*?get", "list"\]\}\]\n/, "") }], { cluster, mode: "full", owner });
    assert.deepEqual(second.pruned.sort(), [`ConfigMap ${ns}/settings`, `Role ${ns}/ceph-read`]);
    const rbacApi = h.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await assert.rejects(rbacApi.readNamespacedRole({ name: "ceph-read", namespace: ns }), (e: { code?: number }) => e.code === 404);
    await h.core.readNamespacedServiceAccount({ name: "ceph-check", namespace: ns });
    assert.equal((await h.core.readNamespacedConfigMap({ name: "victim", namespace: ns })).metadata?.uid, victim.metadata?.uid, "the forged entries' object is left alone");
    assert.ok(h.logs.some((l) => l.includes(`not pruning ConfigMap ${ns}/victim`)));

    // A dry run reports without writing.
    const dry = await h.kube.applyManifests([{ name: "rbac", content: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry, namespace: ${ns}}\n` }], { cluster, dryRun: true, owner });
    assert.deepEqual(dry.applied, [`ConfigMap ${ns}/dry`]);
    assert.deepEqual(dry.pruned.sort(), [`Namespace ${ns}`, `ServiceAccount ${ns}/ceph-check`]);
    await assert.rejects(h.core.readNamespacedConfigMap({ name: "dry", namespace: ns }), (e: { code?: number }) => e.code === 404);
    await h.core.readNamespacedServiceAccount({ name: "ceph-check", namespace: ns });
  });

  it("one-time manifests are created once and never updated", async () => {
    const h = await harness();
    const id = unique();
    const cluster = `m-${id}`;
    const ns = `ot-${id}`;
    await h.core.createNamespace({ body: { metadata: { name: ns } } });
    const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: seed, namespace: ${ns}}\ndata: {value: "${v}"}\n`;
    const r1 = await h.kube.applyManifests([{ name: "seed", content: cm("initial") }], { cluster, mode: "one-time" });
    assert.deepEqual(r1.applied, [`ConfigMap ${ns}/seed`]);
    const r2 = await h.kube.applyManifests([{ name: "seed", content: cm("changed") }], { cluster, mode: "one-time" });
    assert.deepEqual(r2, { applied: [], skipped: [`ConfigMap ${ns}/seed`], pruned: [] });
    assert.equal((await h.core.readNamespacedConfigMap({ name: "seed", namespace: ns })).data?.value, "initial");
    const r3 = await h.kube.applyManifests([], { cluster, mode: "full" });
    assert.deepEqual(r3.pruned, [], "one-time objects are never pruned");
  });

  it("rejects a manifest document that is not an object, naming the manifest", async () => {
    const h = await harness();
    await assert.rejects(h.kube.applyManifests([{ name: "broken", content: "kind: ConfigMap\n" }], { cluster: "x" }),
      /manifest "broken": document 1 is not a Kubernetes object/);
    await assert.rejects(h.kube.applyManifests([{ name: "bad-yaml", content: "a: [\n" }], { cluster: "x" }), /manifest "bad-yaml": not valid YAML/);
  });

  it("dry-runs a composed Job against the cluster: valid passes without creating it, invalid names the Job", async () => {
    const h = await harness();
    const check = healthcheck("default", `dry-${unique()}`);
    await h.kube.dryRunJob(check);
    await assert.rejects(h.batch.readNamespacedJob({ name: check.jobName, namespace: "default" }), (e: { code?: number }) => e.code === 404);
    const bad = healthcheck("default", `dry-bad-${unique()}`);
    (bad.job as any).spec.template.spec.restartPolicy = "Always";
    await assert.rejects(h.kube.dryRunJob(bad), (err: Error) => {
      assert.match(err.message, new RegExp(`healthcheck Job default/${bad.jobName}: the cluster would reject the Job \\(server-side dry run\\): .*restartPolicy`));
      return true;
    });
  });

  it("applies a CRD's schema as written (x-kubernetes-preserve-unknown-fields, default, enum), so its objects keep their status", async () => {
    const h = await harness();
    const id = unique();
    const group = `m${id.replace(/[^a-z0-9]/g, "")}.rook.io`;
    const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: cephclusters.${group}}
spec:
  group: ${group}
  scope: Namespaced
  names: {kind: CephCluster, plural: cephclusters, singular: cephcluster, listKind: CephClusterList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, properties: {mode: {type: string, enum: [a, b], default: a}}}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;
    await h.kube.applyManifests([{ name: "crd", content: crd }], { cluster: `m-${id}` });
    const custom = h.kc.makeApiClient(k8s.CustomObjectsApi);
    const read = (await custom.getClusterCustomObject({
      group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", name: `cephclusters.${group}`,
    })) as { spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: Record<string, Record<string, unknown>> } } }> } };
    const props = read.spec.versions[0].schema.openAPIV3Schema.properties;
    assert.equal(props.status["x-kubernetes-preserve-unknown-fields"], true);
    assert.deepEqual((props.spec.properties as Record<string, unknown>).mode, { type: "string", enum: ["a", "b"], default: "a" });
  });
});
