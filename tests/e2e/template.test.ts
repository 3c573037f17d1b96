// An Omni cluster template through the real pulumi CLI: ClusterTemplate creates the Cluster, the template's
// healthchecks with Omni's ids, and a TalosUpgrade to talos.version with the Workers' upgradeStrategy parallelism.
import * as assert from "node:assert/strict";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { createKubeApi } from "../../provider/kube";
import type { SimCluster } from "../../sim/cluster";
import { packageRoot } from "../../sim/tools";
import { ClusterTemplate } from "../../sdk";
import { inlineStack, pulumiEnv, stateText } from "../support/pulumi";
import { leftoverRunners, testSim } from "../support/sim";

describe("e2e: ClusterTemplate from an Omni template on the sim", function () {
  this.timeout(600000);
  let sim: SimCluster;

  before(async () => {
    sim = await testSim({ controlPlanes: 1, workers: 2, version: "v1.12.4" });
  });

  it("plans and performs the template's gated upgrade, workers two at a time", async () => {
    const env = await pulumiEnv();
    const file = path.join(packageRoot, "examples", "omni-template", "cluster.yaml");
    const stack = await inlineStack(env, "template", async () => {
      const t = new ClusterTemplate("sim", { file, kubeconfig: pulumi.secret(sim.kubeconfig), talosconfig: pulumi.secret(sim.talosconfig) });
      return { status: t.upgrade.status, ids: t.healthchecks.map((h) => h.checkId) };
    });
    const preview = await stack.preview({ diff: true });
    assert.match(preview.stdout, /1\. cp-1 \(controlplane\) v1\.12\.4 → v1\.13\.2, gated by: cluster-sim-nodes-ready, cluster-sim-no-pending-pods/);
    assert.match(preview.stdout, /2\. w-1, w-2 \(worker\) v1\.12\.4 → v1\.13\.2, gated by/);
    const up = await stack.up();
    assert.equal(up.outputs.status.value.phase, "Done");
    assert.deepEqual(up.outputs.ids.value, ["cluster-sim-nodes-ready", "cluster-sim-no-pending-pods"]);
    const kube = createKubeApi(sim.kubeconfig);
    assert.deepEqual((await kube.listMachines()).map((m) => m.talosVersion), ["v1.13.2", "v1.13.2", "v1.13.2"]);
    await kube.close();
    assert.deepEqual(await leftoverRunners(sim), []);
    // Warnings land on a resource's row by the URN the SDK computes: it must be the URN the engine gave, also for
    // children of the ClusterTemplate component.
    const resources = JSON.parse(await stateText(stack)).resources as Array<{ urn: string; type: string; inputs?: { resourceUrn?: string } }>;
    const ours = resources.filter((r) => r.type.startsWith("pulumi-nodejs:dynamic/talos-gate:"));
    assert.equal(ours.length, 4);
    for (const r of ours) assert.equal(r.inputs?.resourceUrn, r.urn);
  });

  it("an invalid template fails the program with Omni's message and creates nothing", async () => {
    const env = await pulumiEnv();
    const file = path.join(packageRoot, "tests", "fixtures", "templates", "invalid", "F4-cluster-rules.yaml");
    const stack = await inlineStack(env, "bad-template", async () => {
      new ClusterTemplate("bad", { file, kubeconfig: pulumi.secret(sim.kubeconfig), talosconfig: pulumi.secret(sim.talosconfig) });
    });
    await assert.rejects(stack.preview(), /error (validating cluster|loading template)/);
  });
});
