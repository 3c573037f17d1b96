// Beyond Omni through the real pulumi CLI on the sim: a Ceph-like CRD installed by the Cluster's manifests, a
// gate.Condition on its CephCluster, a soak and a maintenance window on the TalosUpgrade. Preview shows the gates in
// the plan; up holds on the missing object and then on the condition's message, completes once Rook would report
// HEALTH_OK; a second preview is no change.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import * as pulumi from "@pulumi/pulumi";
import type { Stack } from "@pulumi/pulumi/automation";
import type { SimCluster } from "../../sim/cluster";
import { Cluster, Condition, TalosUpgrade } from "../../sdk";
import { inlineStack, pulumiEnv } from "../support/pulumi";
import { countBoots, testSim } from "../support/sim";

const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: cephclusters.ceph.rook.io}
spec:
  group: ceph.rook.io
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
            spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: v1
kind: Namespace
metadata: {name: rook-ceph}
`;

function program(sim: SimCluster) {
  return async () => {
    const cluster = new Cluster("sim", {
      clusterName: "sim",
      kubeconfig: pulumi.secret(sim.kubeconfig),
      talosconfig: pulumi.secret(sim.talosconfig),
      manifests: [{ name: "rook-crds", inline: CRD }],
    });
    const ceph = new Condition("ceph-health", {
      cluster, name: "ceph-health",
      target: { apiVersion: "ceph.rook.io/v1", kind: "CephCluster", namespace: "rook-ceph", name: "rook-ceph" },
      expression: "object.status.ceph.health == 'HEALTH_OK'",
      message: "'ceph is ' + object.status.ceph.health",
    }, { dependsOn: [cluster] });
    const upgrade = new TalosUpgrade("talos", {
      cluster, version: "v1.13.2", conditions: [ceph], soakTime: "2s",
      maintenanceWindows: ["Mon-Sun 00:00-24:00 UTC"],
      holdTimeout: "5m", nodeTimeout: "2m",
    });
    return { status: upgrade.status, plan: upgrade.plan, conditionId: ceph.conditionId };
  };
}

describe("e2e: condition gate, soak and maintenance window through the real pulumi CLI on the sim", function () {
  this.timeout(600000);
  let sim: SimCluster;
  let stack: Stack;
  let custom: k8s.CustomObjectsApi;
  const ref = { group: "ceph.rook.io", version: "v1", namespace: "rook-ceph", plural: "cephclusters" };

  before(async () => {
    sim = await testSim({ controlPlanes: 1, workers: 1, version: "v1.12.4" });
    const env = await pulumiEnv();
    stack = await inlineStack(env, "gates", async () => program(sim)());
    const kc = new k8s.KubeConfig();
    kc.loadFromString(sim.kubeconfig);
    custom = kc.makeApiClient(k8s.CustomObjectsApi);
  });

  it("up holds on the missing CephCluster, then on its message, and completes once it reports HEALTH_OK", async () => {
    const boots = countBoots(sim);
    const lines: string[] = [];
    let step = 0;
    // Read inside the output callback, asserted after the update: a throw in the callback would not fail the test,
    // it would leave the condition unmet and the update holding until holdTimeout.
    let bootsWhileHeld = -1;
    const up = await stack.up({
      onOutput: (o) => {
        lines.push(o);
        const text = lines.join("");
        if (step === 0 && text.includes('"cluster-sim-ceph-health": ceph.rook.io/v1 CephCluster rook-ceph/rook-ceph not found')) {
          step = 1;
          void custom.createNamespacedCustomObject({ ...ref, body: { apiVersion: "ceph.rook.io/v1", kind: "CephCluster", metadata: { name: "rook-ceph" }, status: { ceph: { health: "HEALTH_WARN" } } } });
        } else if (step === 1 && text.includes('"cluster-sim-ceph-health": ceph is HEALTH_WARN')) {
          step = 2;
          bootsWhileHeld = boots.size;
          void custom.patchNamespacedCustomObject({ ...ref, name: "rook-ceph", body: { status: { ceph: { health: "HEALTH_OK" } } } },
            k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
        }
      },
    });
    assert.equal(step, 2, `held on the missing object, then on the message; output:\n${lines.join("")}`);
    assert.equal(bootsWhileHeld, 0, "no node went down while the condition held");
    assert.equal(up.outputs.status.value.phase, "Done");
    assert.match(lines.join(""), /soak: 2s with every condition holding/);
    assert.deepEqual(Object.fromEntries(boots), { "cp-1": 1, "w-1": 1 });
  });

  it("preview shows the condition, the window and the soak in the plan, and no change", async () => {
    const preview = await stack.preview({ diff: true });
    assert.deepEqual(preview.changeSummary, { same: 4 }, preview.stdout);
    const plan = (await stack.outputs()).plan.value as string[];
    // The plan the up computed at its check, before any node moved.
    assert.ok(plan.some((l) => /1\. cp-1 \(controlplane\) v1\.12\.4 → v1\.13\.2, gated by: cluster-sim-ceph-health/.test(l)), plan.join("\n"));
    assert.ok(plan.some((l) => l.startsWith("maintenance window open until ")), plan.join("\n"));
    assert.ok(plan.some((l) => l.startsWith("soak: after each node is back and Ready, at least 2s")), plan.join("\n"));
  });
});
