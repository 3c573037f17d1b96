// The bounded and refused runs on one simulated cluster (1 control plane, 2 workers), with the real adapters:
// holdTimeout, the lease refusing a concurrent run, nodeTimeout, a revert (not gated, phase Reverting) and a node
// that comes back on the old version. The tests run in order and each starts from the state the previous one left
// (noted in each test); every failure must leave the nodes it did not reach untouched.
import * as assert from "node:assert/strict";
import type { KubeClient } from "../../../provider/kube";
import { RolloutError, runRollout } from "../../../provider/rollout/run";
import type { UpgradeStatus } from "../../../provider/rollout/status";
import type { TalosApiImpl } from "../../../provider/talos";
import type { SimCluster } from "../../../sim/cluster";
import {
  adapters, clients, configMapGateCheck, FROM, grantGateRead, recordBoots, runOptions, setGate, shellCheck, sim, TARGET, until,
  versions, waitNoRunners, rejection,
} from "./helpers";

const CLUSTER = "bounded";

describe("integration: rollout — bounded, refused and reverted runs on the sim (real adapters)", function () {
  this.timeout(240000);
  let s: SimCluster;
  let kube: KubeClient;
  let kubeLog: string[];
  let talos: TalosApiImpl;
  let boots: ReturnType<typeof recordBoots>;
  const failing = () => shellCheck(CLUSTER, "ceph", "echo 'ceph is not healthy, holding upgrade: HEALTH_WARN 1 osds down' >&2; exit 1");

  before(async () => {
    s = await sim({ controlPlanes: 1, workers: 2 });
    ({ kube, talos, kubeLog } = adapters(s));
    boots = recordBoots(s);
    await grantGateRead(kube, CLUSTER, ["restart-gate", "stop-gate"]);
  });

  after(async () => {
    await s?.stop();
  });

  /** The rollout's Events on Node `node` in the order written: [type, reason, message without the reason's timing]. */
  async function nodeEvents(node: string): Promise<string[][]> {
    await kube.flush();
    const { core } = clients(s);
    const items = (await core.listNamespacedEvent({ namespace: "default", fieldSelector: `involvedObject.name=${node}` })).items;
    return items.filter((e) => e.reason?.startsWith("TalosUpgrade"))
      .sort((a, b) => String(a.metadata?.name).localeCompare(String(b.metadata?.name)))
      .map((e) => [e.type ?? "", e.reason ?? "", (e.message ?? "").replace(/ \(last step .*$/, "")]);
  }

  it("holdTimeout: a check failing longer than holdTimeout ends the run (phase Failed, reason) and touches no node", async () => {
    // The check's retry interval (60 s) outlasts holdTimeout, so the hold ends while it waits to retry, with the failure
    // as the check's latest word (the real Job controller needs a second or more to fail a check; an attempt still
    // running at the deadline would read "waiting to complete", see the never-finishing test below).
    const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { healthchecks: [{ ...failing(), intervalMs: 60_000 }], holdTimeoutMs: 8000 })));
    assert.equal(err.status.phase, "Failed");
    assert.match(err.message, /^healthchecks held the upgrade longer than holdTimeout 8s before wave 1\/3: "cluster-bounded-ceph": ceph is not healthy, holding upgrade: HEALTH_WARN 1 osds down; /);
    assert.ok(err.message.startsWith(err.status.error.replace(/\.\.\.$/, "")), "status.error is the single-line, truncated reason");
    assert.deepEqual(boots.downs, []);
    assert.ok(Object.values(versions(s)).every((v) => v === FROM));
    const mirrored = (await kube.readStatus(CLUSTER)) as UpgradeStatus;
    assert.equal(mirrored.phase, "Failed");
    assert.equal(mirrored.error, err.status.error);
    assert.deepEqual(await waitNoRunners(s), { jobs: [], pods: [] });
  });

  it("holdTimeout cutting a retry short still ends with the check's last failure text, not \"waiting to complete\"", async () => {
    // Retried every second: a retry is running (the real Job controller takes a second or more) when the deadline hits.
    const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { healthchecks: [{ ...failing(), intervalMs: 1000 }], holdTimeoutMs: 6000 })));
    assert.match(err.message, /^healthchecks held the upgrade longer than holdTimeout 6s before wave 1\/3: "cluster-bounded-ceph": ceph is not healthy, holding upgrade: HEALTH_WARN 1 osds down; /);
    assert.ok(err.status.healthchecks[0].attempts >= 2, "it was retried");
    assert.deepEqual(boots.downs, []);
    assert.deepEqual(await waitNoRunners(s), { jobs: [], pods: [] });
  });

  it("RBAC: a check without the permissions it needs holds with the API server's Forbidden message, as on a real cluster", async () => {
    // The check's process gets its pod's service-account token (default/default, no RoleBinding), never admin rights.
    // Retry interval beyond holdTimeout: the hold ends with the failed attempt's text (as in the holdTimeout test).
    const nodes = shellCheck(CLUSTER, "nodes", "kubectl get nodes -o name", 60_000);
    const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { healthchecks: [nodes], holdTimeoutMs: 8000 })));
    assert.match(err.message, new RegExp('^healthchecks held the upgrade longer than holdTimeout 8s before wave 1/3: "cluster-bounded-nodes": ' +
      'Error from server \\(Forbidden\\): nodes is forbidden: User "system:serviceaccount:default:default" cannot list resource "nodes" ' +
      'in API group "" at the cluster scope'));
    assert.deepEqual(boots.downs, []);
    assert.deepEqual(await waitNoRunners(s), { jobs: [], pods: [] });
  });

  it("holdTimeout also ends a check that never finishes: it holds as \"waiting to complete\", its Job is deleted, the lease released", async () => {
    // Before the fix the run waited on the Job for ever: holdTimeout was only checked after every check returned.
    const never = shellCheck(CLUSTER, "slow", "sleep 100000");
    const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { healthchecks: [never], holdTimeoutMs: 3000 })));
    assert.match(err.message, /^healthchecks held the upgrade longer than holdTimeout 3s before wave 1\/3: "cluster-bounded-slow": waiting to complete; /);
    assert.equal(err.status.healthchecks.find((h) => h.id === "cluster-bounded-slow")?.state, "RUNNING");
    assert.deepEqual(boots.downs, []);
    assert.deepEqual(await waitNoRunners(s), { jobs: [], pods: [] }, "the cut-short check's Job and pod are gone");
    assert.equal(await kube.runningRollout(CLUSTER), undefined, "the lease is released");
  });

  it("a stop request through the cluster (talos-gate stop) ends a held run before its first node, naming who asked", async () => {
    await setGate(clients(s).core, "stop-gate", false);
    const run = runRollout(kube, talos, runOptions(CLUSTER, { healthchecks: [configMapGateCheck(CLUSTER, "stop-gate")] }));
    await until("the gate to hold", async () => ((await kube.readStatus(CLUSTER)) as UpgradeStatus | undefined)?.gate === "held");
    assert.equal((await kube.requestStop(CLUSTER, "oncall@laptop"))?.holder, `test:${CLUSTER}@${process.pid}`);
    const err = await rejection(run);
    assert.match(err.message, /^upgrade cancelled before node cp-1 \(0\/3 machines on the target\): stop requested by oncall@laptop at \S+ \(talos-gate stop\); run `pulumi up` again/);
    assert.deepEqual(boots.downs, []);
    assert.equal(await kube.runningRollout(CLUSTER), undefined);
  });

  it("a cancel carries its reason into the status (what stopped the run)", async () => {
    const ctl = new AbortController();
    ctl.abort(new Error("the Pulumi engine cancelled the update (Ctrl-C or SIGTERM to the pulumi CLI)"));
    const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { signal: ctl.signal })));
    assert.match(err.message, /^upgrade cancelled before node cp-1 \(0\/3 machines on the target\): the Pulumi engine cancelled the update/);
    assert.deepEqual(boots.downs, []);
  });

  it("lease: a second run of the same cluster is refused at once, naming the holder; the first is unaffected", async () => {
    const abort = new AbortController();
    let last: UpgradeStatus | undefined;
    const first = runRollout(kube, talos, runOptions(CLUSTER, {
      holder: "pipeline-a@ci-1", healthchecks: [failing()], signal: abort.signal, onStatus: (st) => (last = st),
    }));
    first.catch(() => undefined);
    try {
      await refusedWhileHeld();
    } finally {
      abort.abort();
    }
    const err = await rejection(first);
    assert.match(err.message, /^upgrade cancelled before node cp-1 \(0\/3 machines on the target\)/);
    assert.deepEqual(boots.downs, []);
    assert.deepEqual(await waitNoRunners(s), { jobs: [], pods: [] });

    async function refusedWhileHeld(): Promise<void> {
    await until("the first run to hold", () => last?.gate === "held");
    await assert.rejects(
      runRollout(kube, talos, runOptions(CLUSTER, { holder: "pipeline-b@ci-2", healthchecks: [] })),
      (err: Error) => {
        assert.ok(!(err instanceof RolloutError), "refused before the run starts, not a failed run");
        assert.match(err.message, /pipeline-a@ci-1/);
        return true;
      },
    );
    assert.equal(last!.phase, "Upgrading", "the holder's status is untouched");
    // The refused run wrote nothing: the mirror shows the holder's hold (its check failing or re-running) — waited
    // for, since mirror writes are throttled and may lag the holder's own status by a write.
    const holding = /^waiting for healthchecks to pass: "cluster-bounded-ceph": (ceph is not healthy|waiting to complete)/;
    await until("the mirror to show the holder's hold", async () => holding.test(((await kube.readStatus(CLUSTER)) as UpgradeStatus | undefined)?.step ?? ""));
    assert.equal(((await kube.readStatus(CLUSTER)) as UpgradeStatus).phase, "Upgrading");
    }
  });

  it("nodeTimeout: a node that does not come back ends the run with the reason; no further node is touched", async () => {
    s.talos.node("cp-1").faults.neverComesBack = true;
    const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { nodeTimeoutMs: 4000 })));
    assert.equal(err.status.phase, "Failed");
    assert.match(err.message, /^node cp-1 was not back on v1\.13\.2 within nodeTimeout 4s: it went down to reboot and has not come back on the new version \(last step \d+s ago\); inspect the node/);
    assert.match(err.message, /run `pulumi up` again to resume from the first node not on the target$/, "the whole reason, not the truncated status.error");
    assert.equal(err.status.machines.find((m) => m.name === "cp-1")!.state, "failed");
    assert.deepEqual(err.status.machines.filter((m) => m.name !== "cp-1").map((m) => m.state), ["pending", "pending"]);
    // The run has ended: whatever it touched is recorded (the Talos sim emits "down" synchronously).
    assert.deepEqual(boots.downs.map((d) => d.node), ["cp-1"]);
    assert.equal(versions(s)["w-1"], FROM);
    assert.equal(versions(s)["w-2"], FROM);
    // Events on the Node for `kubectl describe node` (issue 22.5).
    assert.deepEqual(await nodeEvents("cp-1"), [
      ["Normal", "TalosUpgradeStarted", `upgrading Talos ${FROM} → ${TARGET} (talos-gate rollout of cluster ${CLUSTER}, node 1/3)`],
      ["Warning", "TalosUpgradeFailed", `Talos upgrade ${FROM} → ${TARGET} failed (talos-gate rollout of cluster ${CLUSTER}): node cp-1 was not back on ${TARGET} within nodeTimeout 4s: it went down to reboot and has not come back on the new version`],
    ]);
    // Leaves the cluster mixed for the next test: cp-1 boots the new version once recovered.
    s.talos.node("cp-1").faults.neverComesBack = false;
    assert.ok(s.talos.recover("cp-1"));
    await s.settled();
    await until("cp-1 to be Ready on the target", async () => (await kube.listMachines()).some((m) => m.name === "cp-1" && m.ready && m.talosVersion === TARGET));
  });

  it("revert: target = lastUpgradeVersion while nodes are mixed → phase Reverting, not gated even by a failing check", async () => {
    assert.equal(versions(s)["cp-1"], TARGET, "starts from the mixed cluster the nodeTimeout test left");
    const downsBefore = boots.downs.length;
    const seen: UpgradeStatus[] = [];
    const lines: string[] = [];
    const done = await runRollout(kube, talos, runOptions(CLUSTER, {
      targetVersion: FROM, lastUpgradeVersion: FROM, healthchecks: [failing()],
      onStatus: (st) => seen.push(st), onProgress: (l) => lines.push(l),
    }));
    assert.equal(done.phase, "Done");
    assert.equal(done.lastUpgradeVersion, FROM);
    assert.deepEqual(versions(s), { "cp-1": FROM, "w-1": FROM, "w-2": FROM });
    assert.deepEqual(boots.downs.slice(downsBefore).map((d) => d.node), ["cp-1"], "only the mixed node is rolled back");
    assert.match((await nodeEvents("cp-1")).at(-1)!.join(" "), new RegExp(`^Normal TalosUpgraded upgraded Talos ${TARGET} → ${FROM} in \\d+s \\(talos-gate rollout of cluster ${CLUSTER}\\)$`));
    const reverting = seen.filter((st) => st.phase === "Reverting");
    assert.ok(reverting.length > 0, "phase Reverting while rolling back");
    assert.equal(reverting[0].currentUpgradeVersion, "");
    assert.ok(reverting.some((st) => st.status === "reverting update 3/3"), `statuses: ${[...new Set(reverting.map((st) => st.status))].join(" | ")}`);
    assert.ok(seen.every((st) => !st.step.includes("cluster-bounded-ceph")), "never held by the failing check");
    assert.ok(lines[0].includes("(not gated by your checks)"), lines[0]);
    // Only etcd's consent is asked before the control plane goes down (issue 18.1); the user's check never ran.
    assert.deepEqual(done.healthchecks.map((h) => h.id), ["talos-gate:etcd"], "the user's check never ran");
    assert.deepEqual(await waitNoRunners(s), { jobs: [], pods: [] });
  });

  it("a node that comes back on the old version (A/B rollback) stops the run with the reason", async () => {
    const downsBefore = boots.downs.length;
    s.talos.node("cp-1").faults.rollback = true;
    try {
      const err = await rejection(runRollout(kube, talos, runOptions(CLUSTER, { lastUpgradeVersion: FROM })));
      assert.equal(err.status.phase, "Failed");
      assert.match(err.message, /^upgrade of node cp-1 failed: .*v1\.12\.4.*v1\.13\.2/);
      assert.equal(err.status.machines.find((m) => m.name === "cp-1")!.state, "failed");
      assert.deepEqual(boots.downs.slice(downsBefore).map((d) => d.node), ["cp-1"], "no further node touched");
      assert.deepEqual(versions(s), { "cp-1": FROM, "w-1": FROM, "w-2": FROM });
    } finally {
      s.talos.node("cp-1").faults.rollback = false;
    }
  });

  it("an API server restart during a hold does not end the run: the gate keeps holding, then opens and the run completes; the dropped watches are warnings", async () => {
    const { core } = clients(s);
    kubeLog.length = 0;
    await setGate(core, "restart-gate", false);
    let last: UpgradeStatus | undefined;
    const run = runRollout(kube, talos, runOptions(CLUSTER, {
      lastUpgradeVersion: FROM, healthchecks: [configMapGateCheck(CLUSTER, "restart-gate")], onStatus: (st) => (last = st),
    }));
    run.catch(() => undefined);
    await until("the gate to hold", () => last?.gate === "held");
    const gate = () => last?.healthchecks?.find((h) => h.id === "cluster-bounded-gate");
    const before = gate()?.attempts ?? 0;
    await s.controlPlane.restartApiServer(1500);
    // The run outlives the restart: the gate is evaluated again (a new attempt that failed) and still holds.
    await until("a failed check attempt after the restart", () => (gate()?.attempts ?? 0) >= before + 2 && gate()?.state === "FAILED", 60000);
    assert.equal(last!.phase, "Upgrading", `still running after the restart: ${last!.error}`);
    assert.match(last!.step, /^waiting for healthchecks to pass: "cluster-bounded-gate": gate closed: restart-gate\.open=false/);
    await setGate(clients(s).core, "restart-gate", true);
    const done = await run;
    assert.equal(done.phase, "Done");
    assert.deepEqual(versions(s), { "cp-1": TARGET, "w-1": TARGET, "w-2": TARGET });
    assert.deepEqual(await waitNoRunners(s), { jobs: [], pods: [] });
    // What the provider shows on the resource's row (README, "Nothing vanishes"): the watches the restart broke.
    assert.ok(kubeLog.some((l) => /^watch of .* dropped \(.*\); reconnecting$/.test(l)), kubeLog.join("\n"));
  });
});
