// Beyond Omni through the real pulumi CLI on the sim: a Ceph-like CRD installed by the Cluster's manifests, a
// gate.Condition on its CephCluster, a soak and a maintenance window on the TalosUpgrade. Outside its window the first
// up succeeds with the rollout Waiting and a warning on its row, and the next preview still shows it pending (issue
// 22.3); inside the window up holds on the missing object and then on the condition's message — shown live as ephemeral
// status on the TalosUpgrade's row, never on the stack's (issue 22.4) — and completes once Rook would report
// HEALTH_OK; a second preview is no change. The credentials' current contexts lead nowhere: the Cluster's `context`
// picks the sim's (issue 22.8), and customTimeouts/replaceOnChanges are honoured or said to do nothing.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import * as pulumi from "@pulumi/pulumi";
import type { EngineEvent, Stack } from "@pulumi/pulumi/automation";
import * as YAML from "yaml";
import type { SimCluster } from "../../sim/cluster";
import { Cluster, Condition, TalosUpgrade } from "../../sdk";
import { inlineStack, pulumiEnv } from "../support/pulumi";
import { coreApi, countBoots, testSim } from "../support/sim";

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

/** A window that opens two days from now (UTC): closed while the test runs. */
const closedWindow = () => `${new Date(Date.now() + 2 * 86_400_000).toUTCString().slice(0, 3)} 00:00-01:00 UTC`;
const CLOSED = closedWindow();
let windows = [CLOSED];

/**
 * The sim's credentials with a current context that leads nowhere (issue 22.8): only the Cluster's `context` choosing the
 * sim's own contexts makes every resource reach it.
 */
function elsewhereCurrent(sim: SimCluster): { kubeconfig: string; talosconfig: string } {
  const kc = YAML.parse(sim.kubeconfig);
  kc.clusters.push({ name: "elsewhere", cluster: { server: "https://127.0.0.1:1" } });
  kc.contexts.push({ name: "elsewhere", context: { cluster: "elsewhere", user: kc.users[0].name } });
  kc["current-context"] = "elsewhere";
  const tc = YAML.parse(sim.talosconfig);
  tc.contexts.elsewhere = { ...tc.contexts.sim, endpoints: ["127.0.0.1:1"] };
  tc.context = "elsewhere";
  return { kubeconfig: YAML.stringify(kc), talosconfig: YAML.stringify(tc) };
}

function program(sim: SimCluster) {
  return async () => {
    const creds = elsewhereCurrent(sim);
    const cluster = new Cluster("sim", {
      clusterName: "sim",
      kubeconfig: pulumi.secret(creds.kubeconfig),
      talosconfig: pulumi.secret(creds.talosconfig),
      context: { kubeconfig: "talos-gate-sim", talosconfig: "sim" },
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
      maintenanceWindows: windows,
      holdTimeout: "5m", nodeTimeout: "2m",
    }, { customTimeouts: { update: "10m" }, replaceOnChanges: ["version"] }); // issue 22.8: honoured, or said to do nothing
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

  it("outside its window, up succeeds with the rollout Waiting and a warning on its row; the next preview shows it pending", async () => {
    const boots = countBoots(sim);
    const events: EngineEvent[] = [];
    const up = await stack.up({ onEvent: (e) => events.push(e) });
    windows = ["Mon-Sun 00:00-24:00 UTC"]; // for the next test, even when an assertion below fails
    const status = up.outputs.status.value;
    assert.equal(status.phase, "Waiting");
    assert.match(status.step, /^waiting for the maintenance window: next opens \w{3} \d{4}-\d\d-\d\d 00:00 UTC, in 1d\d+h$/);
    const warning = events.map((e) => e.diagnosticEvent).find((d) => d?.severity === "warning" && d.message.includes("waiting for the maintenance window"));
    assert.match(warning?.urn ?? "", /TalosUpgrade::talos$/, "the warning is on the TalosUpgrade's row");
    assert.match(warning!.message, /2 machine\(s\) still to upgrade: the next `pulumi up` inside a window continues the rollout/);
    assert.equal(boots.size, 0);
    // Issue 22.8: customTimeouts reach the provider as an input; replaceOnChanges is a warning on the row.
    const state = await stack.exportStack();
    const talos = state.deployment.resources.find((r: { type: string }) => r.type.endsWith(":TalosUpgrade"));
    assert.deepEqual(talos.inputs.customTimeouts, { update: "10m" });
    const roc = events.map((e) => e.diagnosticEvent).find((d) => d?.severity === "warning" && d.message.includes("replaceOnChanges"));
    assert.match(roc?.urn ?? "", /TalosUpgrade::talos$/);
    assert.match(roc!.message, /^replaceOnChanges \(version\) has no effect on TalosUpgrade "talos": a replacement runs the same rollout as an update/);
    windows = [CLOSED];
    const preview = await stack.preview();
    assert.deepEqual(preview.changeSummary, { same: 3, update: 1 }, "no input changed, the rollout is still pending");
    windows = ["Mon-Sun 00:00-24:00 UTC"];
  });

  it("up holds on the missing CephCluster, then on its message (live on the TalosUpgrade's row), and completes once it reports HEALTH_OK", async () => {
    const boots = countBoots(sim);
    const lines: string[] = [];
    const diags: NonNullable<EngineEvent["diagnosticEvent"]>[] = [];
    let step = 0;
    // Read inside the event callback, asserted after the update: a throw in the callback would not fail the test,
    // it would leave the condition unmet and the update holding until holdTimeout.
    let bootsWhileHeld = -1;
    const up = await stack.up({
      onOutput: (o) => lines.push(o),
      onEvent: (e) => {
        if (!e.diagnosticEvent) return;
        diags.push(e.diagnosticEvent);
        const text = e.diagnosticEvent.ephemeral ? e.diagnosticEvent.message : "";
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
    // Progress: live (ephemeral) on the TalosUpgrade's row, transitions kept on it, nothing on the stack's row.
    const onRow = diags.filter((d) => /TalosUpgrade::talos$/.test(d.urn ?? ""));
    const live = onRow.filter((d) => d.ephemeral).map((d) => d.message.trimEnd()); // the engine ends each with a newline
    assert.ok(live.some((m) => /^\[0\/2 0%\] gate held (\S+ )?by "cluster-sim-ceph-health": ceph is HEALTH_WARN \(wave 1\/2\)$/.test(m)), live.join("\n"));
    assert.ok(live.some((m) => /^\[\d\/2 \d+%\] (cp-1|w-1): (pulling|installing|draining|rebooting|waiting)/.test(m)), live.join("\n"));
    const kept = onRow.filter((d) => !d.ephemeral && d.severity === "info").map((d) => d.message);
    assert.ok(kept.some((m) => m.includes("[talos-gate/sim] node cp-1: back on v1.13.2")), kept.join("\n"));
    assert.ok(kept.some((m) => m.includes("[talos-gate/sim] done: all 2 machines on v1.13.2")), kept.join("\n"));
    assert.ok(!kept.some((m) => m.includes("gate held")), "a held gate is live only");
    assert.deepEqual(diags.filter((d) => !/TalosUpgrade::talos$/.test(d.urn ?? "") && d.message.includes("[talos-gate/")).map((d) => d.message), [],
      "no progress line on the stack's row");
    assert.ok(live.some((m) => / soaking: next node not before /.test(m)), live.join("\n"));
    assert.deepEqual(Object.fromEntries(boots), { "cp-1": 1, "w-1": 1 });
    // Issue 22.5: what `kubectl describe node` shows of the rollout — Events on each upgraded Node, from → to.
    const events = (await coreApi(sim).listEventForAllNamespaces({ fieldSelector: "involvedObject.kind=Node" })).items;
    for (const node of ["cp-1", "w-1"]) {
      const mine = events.filter((e) => e.involvedObject.name === node).map((e) => `${e.reason}: ${e.message}`);
      assert.ok(mine.some((m) => /^TalosUpgradeStarted: upgrading Talos v1\.12\.\d+ → v1\.13\.2 \(talos-gate rollout of cluster sim/.test(m)), mine.join("\n"));
      assert.ok(mine.some((m) => /^TalosUpgraded: upgraded Talos v1\.12\.\d+ → v1\.13\.2/.test(m)), mine.join("\n"));
    }
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
