// Small clusters (issue 25), on the sim with the real adapters. A single node (`--control-planes 1 --workers 0`: the
// control plane takes the workload pods, guarded by a PodDisruptionBudget) upgrades without a drain that has nowhere
// to go, naming what goes down with it; `drain: "always"` keeps the drain and its failure. The kubeconfig's API server
// is behind the node, so it is away for the reboot, as on a real single-node cluster.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import type { KubeClient } from "../../../provider/kube";
import { runRollout } from "../../../provider/rollout/run";
import type { TalosApiImpl } from "../../../provider/talos";
import type { SimCluster } from "../../../sim/cluster";
import { WORKLOAD_NAMESPACE, WORKLOAD_RS } from "../../../sim/kube";
import { adapters, recordBoots, rejection, runOptions, sim, until, versions } from "./helpers";

const FROM = "v1.13.2";
const TARGET = "v1.13.3";

describe("integration: rollout — a single node (issue 25)", function () {
  this.timeout(300000);
  const CLUSTER = "single";
  let s: SimCluster;
  let kube: KubeClient;
  let talos: TalosApiImpl;
  let boots: ReturnType<typeof recordBoots>;
  const policy = () => {
    const c = new k8s.KubeConfig();
    c.loadFromString(s.controlPlane.kubeconfig);
    return { policy: c.makeApiClient(k8s.PolicyV1Api), core: c.makeApiClient(k8s.CoreV1Api) };
  };
  /** The workload's pods on the node, by uid, once both run and the budget allows exactly one disruption. */
  const workloadSettled = async (): Promise<string[]> => {
    let uids: string[] = [];
    await until("both workload pods running and the budget allowing one disruption", async () => {
      const { policy: p, core } = policy();
      const pdb = await p.readNamespacedPodDisruptionBudget({ name: WORKLOAD_RS, namespace: WORKLOAD_NAMESPACE }).catch(() => undefined);
      const pods = (await core.listNamespacedPod({ namespace: WORKLOAD_NAMESPACE, labelSelector: `app.kubernetes.io/name=${WORKLOAD_RS}` })).items
        .filter((x) => !x.metadata?.deletionTimestamp);
      uids = pods.map((x) => x.metadata!.uid!).sort();
      return pods.length === 2 && pods.every((x) => x.status?.phase === "Running" && x.spec?.nodeName === "cp-1")
        && pdb?.status?.disruptionsAllowed === 1 && pdb.status.observedGeneration === pdb.metadata?.generation;
    });
    return uids;
  };
  const schedulable = async () => !(await kube.listMachines()).find((m) => m.name === "cp-1")!.cordoned;

  before(async () => {
    s = await sim({ controlPlanes: 1, workers: 0, version: FROM, workloadPodsPerNode: 2, apiBehindControlPlane: true });
    ({ kube, talos } = adapters(s));
    boots = recordBoots(s);
  });

  after(async () => {
    await s?.stop();
  });

  it("the sim's single node is schedulable (no control-plane taint) and runs the workload behind a PodDisruptionBudget", async () => {
    const node = await policy().core.readNode({ name: "cp-1" });
    assert.deepEqual(node.spec?.taints ?? [], [], "allowSchedulingOnControlPlanes: no NoSchedule taint");
    await workloadSettled();
  });

  it('drain "never" only cordons, naming the pods that stay and the budget that breaks', async () => {
    await workloadSettled();
    const outcome = await kube.drain("cp-1", { timeoutMs: 5000, owner: "test", mode: "never" });
    try {
      assert.equal(outcome.drained, false);
      assert.ok(!outcome.drained && outcome.why === "never");
      assert.equal(!outcome.drained && outcome.pods.length, 2);
      assert.deepEqual(!outcome.drained && outcome.pdbs, [`${WORKLOAD_NAMESPACE}/${WORKLOAD_RS}`]);
      assert.equal(await schedulable(), false, "cordoned");
    } finally {
      await kube.uncordon("cp-1", "test");
    }
  });

  it('drain "always" keeps today\'s behaviour: the budget refuses the drain, the node is left up and schedulable', async () => {
    await workloadSettled();
    const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: TARGET, drain: "always", drainTimeoutMs: 3000 })));
    assert.match(err.message, new RegExp(`drain of node cp-1 did not finish within 3s: .*PodDisruptionBudget ${WORKLOAD_NAMESPACE}/${WORKLOAD_RS}`));
    assert.deepEqual(versions(s), { "cp-1": FROM });
    assert.equal(boots.downsOf("cp-1"), 0);
    assert.equal(await schedulable(), true, "our cordon is lifted");
  });

  it('drain "auto" (the default): not drained, the warning and the status step name the pods and the budget; Done', async () => {
    const before = await workloadSettled();
    const warnings: string[] = [];
    const steps = new Set<string>();
    // drainTimeoutMs: without the rule the drain would fail here (the budget refuses the second eviction).
    const done = await runRollout(kube, talos, runOptions(CLUSTER, {
      targetVersion: TARGET, drainTimeoutMs: 3000, onWarning: (l) => warnings.push(l), onStatus: (st) => steps.add(st.step),
    }));
    assert.equal(done.phase, "Done");
    assert.deepEqual(versions(s), { "cp-1": TARGET });
    assert.equal(boots.downsOf("cp-1"), 1);
    const warning = warnings.find((l) => l.includes("not drained"));
    assert.ok(warning, `a warning on the resource's row; got ${JSON.stringify(warnings)}`);
    assert.match(warning, /node cp-1 is not drained: no other Ready, schedulable node could take its pods \(drain: "auto"\); it is cordoned and reboots with its pods: 2 pod\(s\) go down with it: /);
    assert.match(warning, new RegExp(`PodDisruptionBudget ${WORKLOAD_NAMESPACE}/${WORKLOAD_RS} will be violated for the reboot`));
    assert.ok([...steps].some((st) => /^current machine: cp-1; cp-1 not drained \(no other node could take its pods\): 2 pod\(s\) go down with it: .*PodDisruptionBudget sim-workloads\/sim-workload/.test(st)),
      `the status step says it; got ${JSON.stringify([...steps])}`);
    assert.equal(await schedulable(), true, "our cordon is lifted after the reboot");
    assert.deepEqual(await workloadSettled(), before, "the same pods, never evicted, run again after the reboot");
  });
});

describe("integration: rollout — two control planes (issue 25)", function () {
  this.timeout(300000);
  const UNHEALTHY_MS = 3000;
  const CLUSTER = "pair";
  let s: SimCluster;
  let kube: KubeClient;
  let talos: TalosApiImpl;
  let boots: ReturnType<typeof recordBoots>;

  before(async () => {
    // A member stays unhealthy for a while after its boot: the second control plane must wait for it.
    s = await sim({ controlPlanes: 2, workers: 1, version: FROM, apiBehindControlPlane: true, etcd: { unhealthyAfterBootMs: UNHEALTHY_MS } });
    ({ kube, talos } = adapters(s));
    boots = recordBoots(s);
  });

  after(async () => {
    await s?.stop();
  });

  it("without the opt-in the run stops before the first control plane, naming the input; nothing reboots", async () => {
    const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { targetVersion: TARGET })));
    assert.match(err.message, /taking control plane cp-1 down would lose etcd quorum: 1 of 2 voting members .* run 3, or accept the outage with etcdQuorumLoss: "allow"/);
    assert.equal(boots.downs.length, 0);
    assert.deepEqual(versions(s), { "cp-1": FROM, "cp-2": FROM, "w-1": FROM });
  });

  it('etcdQuorumLoss "allow": one control plane at a time through the outage, each named, the next only once etcd is healthy again', async () => {
    const warnings: string[] = [];
    const done = await runRollout(kube, talos, runOptions(CLUSTER, {
      targetVersion: TARGET, etcdQuorumLoss: "allow", onWarning: (l) => warnings.push(l),
    }));
    assert.equal(done.phase, "Done");
    assert.deepEqual(versions(s), { "cp-1": TARGET, "cp-2": TARGET, "w-1": TARGET });
    for (const n of ["cp-1", "cp-2"]) {
      assert.ok(warnings.some((l) => l.includes(`${n} down: etcd loses quorum for the reboot, the API server is read-only (etcdQuorumLoss: "allow"`)),
        `${n}'s cost is named; got ${JSON.stringify(warnings)}`);
    }
    // One at a time: cp-2 went down only after cp-1 was back, and not before cp-1's member had caught up (the sim keeps
    // it unhealthy for UNHEALTHY_MS after its boot; a lower bound, which load can only make longer).
    const at = (e: string) => [...boots.downs.map((d) => ({ e: `down ${d.node}`, at: d.at })), ...boots.ups.map((u) => ({ e: `up ${u.node}`, at: u.at }))]
      .find((x) => x.e === e)!.at;
    const order = ["down cp-1", "up cp-1", "down cp-2", "up cp-2"];
    assert.deepEqual([...order].sort((a, b) => at(a) - at(b)), order);
    assert.ok(at("down cp-2") - at("up cp-1") >= UNHEALTHY_MS - 50, "cp-2 waited for cp-1's etcd member to be healthy again");
  });
});
