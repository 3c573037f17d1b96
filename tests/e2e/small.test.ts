// Small clusters through the real pulumi CLI (issue 25): what the user sees on the resource's row and in the preview
// plan. The rules themselves are proven without Pulumi in tests/integration/rollout/small.test.ts; here only what the
// Pulumi layer adds: the `drain` default and `etcdQuorumLoss` inputs reaching the run, the warning as a diagnostic,
// the plan lines in `up --diff`, the refusal as the update's error. One `pulumi up` per topology (plus the refused one).
import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import type { Stack } from "@pulumi/pulumi/automation";
import type { SimCluster } from "../../sim/cluster";
import { Cluster, TalosUpgrade } from "../../sdk";
import { inlineStack, PulumiEnv, pulumiEnv } from "../support/pulumi";
import { countBoots, nodeVersions, testSim } from "../support/sim";

const FROM = "v1.13.2";
const TARGET = "v1.13.3";

function program(sim: SimCluster, args: { etcdQuorumLoss?: "allow" | "refuse" } = {}) {
  return async () => {
    const cluster = new Cluster("sim", { clusterName: "sim", kubeconfig: pulumi.secret(sim.kubeconfig), talosconfig: pulumi.secret(sim.talosconfig) });
    const upgrade = new TalosUpgrade("talos", { cluster, version: TARGET, nodeTimeout: "2m", ...args });
    return { status: upgrade.status };
  };
}

describe("e2e: small clusters through the real pulumi CLI on the sim (issue 25)", function () {
  this.timeout(600000);
  let env: PulumiEnv;

  before(async () => {
    env = await pulumiEnv();
  });

  describe("a single node with a PodDisruptionBudget", () => {
    let sim: SimCluster;
    // As `talos-gate sim up --control-planes 1 --workers 0`: schedulable, its workload behind a budget.
    before(async () => {
      sim = await testSim({ controlPlanes: 1, workers: 0, version: FROM, workloadPodsPerNode: 2, apiBehindControlPlane: true });
    });
    after(async () => sim?.stop()); // hands the control plane to the next sim

    it("upgrades to Done, the resource's row warning that the node was not drained and which budget that violates", async () => {
      const stack = await inlineStack(env, "small", program(sim), "single");
      const up = await stack.up();
      assert.equal(up.outputs.status.value.phase, "Done");
      assert.deepEqual(await nodeVersions(sim), { "cp-1": TARGET });
      assert.match(up.stdout, /warning: .*node cp-1 is not drained: no other Ready, schedulable node could take its pods \(drain: "auto"\)/);
      assert.match(up.stdout, /PodDisruptionBudget sim-workloads\/sim-workload will be violated for the reboot/);
    });
  });

  describe("two control planes", () => {
    let sim: SimCluster;
    let stack: Stack;
    const args: { etcdQuorumLoss?: "allow" } = {};
    let boots: Map<string, number>;
    before(async () => {
      sim = await testSim({ controlPlanes: 2, workers: 0, version: FROM, workloadPodsPerNode: 0, apiBehindControlPlane: true });
      stack = await inlineStack(env, "small", async () => program(sim, args)(), "pair");
      boots = countBoots(sim);
    });
    after(async () => sim?.stop());

    it("without etcdQuorumLoss the update fails before any reboot, naming the input", async () => {
      await assert.rejects(stack.up(), (err: Error) => {
        assert.match(err.message, /taking control plane cp-1 down would lose etcd quorum.*etcdQuorumLoss: "allow"/);
        return true;
      });
      assert.equal(boots.size, 0);
    });

    it('with etcdQuorumLoss "allow" the plan names what each reboot costs, and both upgrade to Done one at a time', async () => {
      args.etcdQuorumLoss = "allow";
      const up = await stack.up({ diff: true });
      assert.equal(up.outputs.status.value.phase, "Done");
      for (const n of ["cp-1", "cp-2"]) {
        // The plan line (the warning at the reboot goes on: `"allow"; all members were healthy)`).
        assert.match(up.stdout, new RegExp(`${n} down: etcd loses quorum for the reboot, the API server is read-only \\(etcdQuorumLoss: \\\\?"allow\\\\?"\\)`), up.stdout);
      }
      assert.deepEqual(await nodeVersions(sim), { "cp-1": TARGET, "cp-2": TARGET });
      assert.deepEqual(Object.fromEntries(boots), { "cp-1": 1, "cp-2": 1 });
    });
  });
});
