// Omni's acceptance flow for healthcheck-gated upgrades, end to end on the simulated cluster with the real adapters:
// a failing check holds the upgrade at the start (its stderr in the step); opening the gate (a ConfigMap the check
// reads with kubectl) lets machines through; closing it holds the rollout mid-way; opening it again completes the
// upgrade (phase Done, lastUpgradeVersion = target) and no runner Job or pod is left behind. Then: control planes
// strictly before workers, and the checks re-run (fresh Jobs) before every node.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import type { KubeClient } from "../../../provider/kube";
import { runRollout } from "../../../provider/rollout/run";
import type { UpgradeStatus } from "../../../provider/rollout/status";
import { createTalosApi, type TalosApiImpl } from "../../../provider/talos";
import type { SimCluster } from "../../../sim/cluster";
import { onFileEnd } from "../../support/fixtures";
import {
  adapters, clients, configMapGateCheck, FROM, grantGateRead, recordBoots, RUNNER_SELECTOR, runOptions, setGate, sim, TARGET,
  until, versions, waitNoRunners,
} from "./helpers";

const CLUSTER = "accept";
const GATE_CM = "upgrade-gate";

describe("integration: rollout — Omni's gated upgrade flow on the sim (real adapters)", function () {
  this.timeout(240000);
  let s: SimCluster;
  let kube: KubeClient;
  let talos: TalosApiImpl;
  let boots: ReturnType<typeof recordBoots>;
  const jobsCreated: Array<{ name: string; at: number }> = [];
  const lines: string[] = [];
  const statuses: UpgradeStatus[] = [];
  let final: UpgradeStatus | undefined;

  before(async () => {
    // 3 control planes: with 2, Talos before v1.12.9 (and v1.13.0–v1.13.3) refuses the legacy upgrade of a control plane for good ("etcd
    // member count(2) is insufficient to maintain quorum"), preserve or not — as the sim now does, like the real Talos.
    s = await sim({ controlPlanes: 3, workers: 1 });
    ({ kube, talos } = adapters(s));
    boots = recordBoots(s);
    await setGate(clients(s).core, GATE_CM, false);
    await grantGateRead(kube, CLUSTER, [GATE_CM]);
    // Every runner Job the API server creates, seen by an independent watch.
    const kc = new k8s.KubeConfig();
    kc.loadFromString(s.kubeconfig);
    const seen = new Set<string>();
    const w = await new k8s.Watch(kc).watch("/apis/batch/v1/jobs", { labelSelector: RUNNER_SELECTOR }, (type, obj: k8s.V1Job) => {
      const uid = obj.metadata?.uid ?? "";
      if (type === "ADDED" && !seen.has(uid)) {
        seen.add(uid);
        jobsCreated.push({ name: obj.metadata?.name ?? "", at: Date.now() });
      }
    }, () => undefined);
    onFileEnd(async () => w.abort());
  });

  after(async () => {
    await s?.stop();
  });

  it("holds at the start with the check's stderr in the step, lets machines through when opened, holds mid-way when closed, completes when opened again", async () => {
    const check = configMapGateCheck(CLUSTER, GATE_CM);
    assert.equal(check.id, "cluster-accept-gate");
    let last: UpgradeStatus | undefined;
    const run = runRollout(kube, talos, runOptions(CLUSTER, {
      healthchecks: [check],
      onProgress: (l) => lines.push(l),
      onStatus: (st) => { last = st; statuses.push(st); },
    }));
    run.catch(() => undefined); // awaited below; a failure must not surface as unhandled while the test waits

    // 1. Held at the start: nothing touched, the step carries the check's stderr (Omni's wording).
    const heldStep = `waiting for healthchecks to pass: "cluster-accept-gate": gate closed: ${GATE_CM}.open=false, holding upgrade`;
    await until("the gate to hold at the start", () => last?.gate === "held");
    assert.equal(last!.step, heldStep);
    assert.equal(last!.phase, "Upgrading");
    assert.equal(last!.status, "updating machines 1/4");
    assert.equal(last!.currentUpgradeVersion, TARGET);
    await until("the mirrored status to show the hold", async () => ((await kube.readStatus(CLUSTER)) as UpgradeStatus | undefined)?.step === heldStep, 30000);
    await until("the failing check to be retried", () => (last?.healthchecks[0].attempts ?? 0) >= 2, 30000);
    // The retry alternates RUNNING and FAILED; between retries the check reads FAILED and the step keeps its stderr.
    await until("the retried check to read FAILED again", () => last?.healthchecks[0].state === "FAILED", 30000);
    assert.equal(last!.step, heldStep);
    assert.deepEqual(boots.downs, [], "no node may go down while the gate holds");
    assert.ok(Object.values(versions(s)).every((v) => v === FROM));

    // 2. Open the gate; close it again as soon as the first machine starts.
    await setGate(clients(s).core, GATE_CM, true);
    await until("the first node to start", () => lines.some((l) => / upgrading v1\.12\.4 → v1\.13\.2 /.test(l)), 30000);
    await setGate(clients(s).core, GATE_CM, false);
    await until("the gate to hold mid-way", () => last?.gate === "held" && last.machines.some((m) => m.state === "done"), 60000);
    const doneMid = last!.machines.filter((m) => m.state === "done").map((m) => m.name);
    assert.ok(doneMid.length >= 1 && doneMid.length < 4, `some machines went through: ${doneMid.join(", ")}`);
    assert.equal(last!.step, heldStep);
    assert.equal(last!.status, `updating machines ${doneMid.length + 1}/4`);
    const downsMid = boots.downs.length;
    assert.equal(downsMid, doneMid.length);
    // Two more evaluations find the gate closed; none of them lets a node go down.
    const attemptsMid = last!.healthchecks[0].attempts;
    await until("two more held evaluations", () => last!.healthchecks[0].attempts >= attemptsMid + 2 && last!.healthchecks[0].state === "FAILED", 60000);
    assert.equal(boots.downs.length, downsMid, "no further node goes down while the gate is closed again");
    assert.ok(last!.machines.every((m) => m.state === "done" || m.state === "pending"), "nothing in flight while held");

    // 3. Open again: the rollout completes.
    await setGate(clients(s).core, GATE_CM, true);
    final = await run;
    assert.equal(final.phase, "Done");
    assert.equal(final.lastUpgradeVersion, TARGET);
    assert.equal(final.currentUpgradeVersion, "");
    assert.equal(final.status, "");
    assert.equal(final.step, "");
    assert.deepEqual(versions(s), { "cp-1": TARGET, "cp-2": TARGET, "cp-3": TARGET, "w-1": TARGET });
    for (const n of ["cp-1", "cp-2", "cp-3", "w-1"]) assert.equal(boots.downsOf(n), 1, `${n} is upgraded exactly once`);
    const mirrored = (await kube.readStatus(CLUSTER)) as UpgradeStatus;
    assert.equal(mirrored.phase, "Done");
    assert.equal(mirrored.lastUpgradeVersion, TARGET);
    // Every Node is Ready and schedulable again.
    const machines = await kube.listMachines();
    assert.deepEqual(machines.map((m) => [m.name, m.ready, m.cordoned, m.talosVersion]), [
      ["cp-1", true, false, TARGET], ["cp-2", true, false, TARGET], ["cp-3", true, false, TARGET], ["w-1", true, false, TARGET],
    ]);
    assert.deepEqual(await waitNoRunners(s), { jobs: [], pods: [] });
  });

  it("upgraded the control planes strictly before any worker", () => {
    assert.ok(final, "needs the completed run of the first test");
    const started = lines.map((l) => / node (\S+): upgrading /.exec(l)?.[1]).filter((n): n is string => !!n);
    assert.deepEqual(started.slice(0, 3).sort(), ["cp-1", "cp-2", "cp-3"]);
    assert.deepEqual(started.slice(3).sort(), ["w-1"]);
    // From the Talos side: the last control plane was back before the first worker went down.
    const lastCpUp = Math.max(...boots.ups.filter((u) => u.node.startsWith("cp-")).map((u) => u.at));
    const firstWorkerDown = Math.min(...boots.downs.filter((d) => d.node.startsWith("w-")).map((d) => d.at));
    assert.ok(lastCpUp <= firstWorkerDown, "a worker went down before the last control plane was back");
    // And one node at a time (default parallelism 1): each node went down only after the previous one was back.
    const order = boots.downs.map((d) => d.node);
    for (let i = 1; i < order.length; i++) {
      const prevUp = boots.ups.find((u) => u.node === order[i - 1])!.at;
      assert.ok(prevUp <= boots.downs[i].at, `${order[i]} went down before ${order[i - 1]} was back`);
    }
  });

  it("re-ran the healthcheck as a fresh Job right before every node", () => {
    assert.ok(final, "needs the completed run of the first test");
    // Between two node starts there is a passing check (progress lines), and a new runner Job was created.
    const starts: number[] = [];
    lines.forEach((l, i) => { if (/ node \S+: upgrading /.test(l)) starts.push(i); });
    assert.equal(starts.length, 4);
    let from = 0;
    for (const i of starts) {
      const between = lines.slice(from, i);
      assert.ok(between.some((l) => l.endsWith(`healthcheck "cluster-accept-gate" passed`)), `no passing check before: ${lines[i]}`);
      from = i + 1;
    }
    for (const d of boots.downs) {
      const prevDown = Math.max(0, ...boots.downs.filter((x) => x.at < d.at).map((x) => x.at));
      assert.ok(jobsCreated.some((j) => j.at > prevDown && j.at < d.at), `no runner Job created before ${d.node} went down`);
    }
    // One Job per evaluation: every attempt (failed or passed) created a fresh Job, named deterministically.
    const check = final!.healthchecks.find((h) => h.id === "cluster-accept-gate")!;
    assert.equal(jobsCreated.length, check.attempts);
    assert.ok(check.attempts >= 4 + 2, `attempts: ${check.attempts}`);
    assert.ok(jobsCreated.every((j) => j.name === "talos-gate-cluster-accept-gate"));
    // The status history records the gate transitions of the last waves.
    assert.ok(final!.history.some((h) => h.event === "GatePassed"));
  });

  it("a run on a converged cluster does nothing: phase Done, no Job, no node touched", async () => {
    assert.ok(final, "needs the completed run of the first test");
    const jobsBefore = jobsCreated.length;
    const downsBefore = boots.downs.length;
    const again = await runRollout(kube, talos, runOptions(CLUSTER, {
      healthchecks: [configMapGateCheck(CLUSTER, GATE_CM)],
      lastUpgradeVersion: TARGET,
    }));
    assert.equal(again.phase, "Done");
    assert.equal(again.lastUpgradeVersion, TARGET);
    // A sentinel runner-labelled Job created now: the watch delivers events in order, so once it sees the sentinel it
    // has seen every runner Job the run could have created.
    const { batch } = clients(s);
    await batch.createNamespacedJob({ namespace: "default", body: {
      metadata: { name: "sentinel", labels: { "app.kubernetes.io/name": "talos-gate-healthcheck" } },
      spec: { suspend: true, template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox", command: ["true"] }] } } },
    } });
    await until("the watch to see the sentinel", () => jobsCreated.some((j) => j.name === "sentinel"), 30000);
    await batch.deleteNamespacedJob({ name: "sentinel", namespace: "default", propagationPolicy: "Background" });
    assert.deepEqual(jobsCreated.slice(jobsBefore).map((j) => j.name), ["sentinel"], "the converged run created no runner Job");
    assert.equal(boots.downs.length, downsBefore);
  });

  it("issue 23.2: the wait for a rebooting node looks at Talos when the run's Node watch sees the node change, not at its next poll", async () => {
    // Ten minutes between looks at a rebooting node: the run can only finish in time if the Node watch wakes the wait
    // (the control plane behind the kubeconfig's API included: its Node's change arrives when the watch is back).
    const slow = createTalosApi(s.talosconfig, { firstPollMs: 600_000, pollIntervalMs: 600_000 });
    try {
      const ups = boots.ups.length;
      const done = await runRollout(kube, slow, runOptions(CLUSTER, { targetVersion: "v1.13.3", lastUpgradeVersion: TARGET }));
      assert.equal(done.phase, "Done");
      assert.deepEqual(Object.values(versions(s)), ["v1.13.3", "v1.13.3", "v1.13.3", "v1.13.3"]);
      assert.equal(boots.ups.length - ups, 4, "each node rebooted once");
    } finally {
      slow.close();
    }
  });

  it("issue 23: a worker's cordon (ours) is lifted as soon as its Node reports Ready on the target from its new boot, before Talos has answered", async () => {
    // The Talos port gives its answer for w-1 ("back on the target") only once w-1's cordon was lifted, or 5 s after it
    // had the answer: a cordon lifted only after that answer is seen as 'answered first'.
    const worker = s.talos.node("w-1");
    let liftedWorker!: () => void;
    const workerLifted = new Promise<void>((r) => (liftedWorker = r));
    const lifts: string[] = [];
    const uncordon = kube.uncordon;
    kube.uncordon = async (node, owner) => {
      if (node === "w-1") {
        const m = await kube.readMachine!(node);
        lifts.push(`lifted (ready ${m?.ready}, ${m?.talosVersion}, ${m?.bootId === worker.bootId ? "this boot" : "another boot"})`);
        liftedWorker();
      }
      return uncordon.call(kube, node, owner);
    };
    const held = createTalosApi(s.talosconfig);
    const upgradeNode = held.upgradeNode;
    held.upgradeNode = async (address, opts) => {
      const res = await upgradeNode(address, opts);
      if (address === worker.address) {
        const late = new Promise<string>((r) => setTimeout(() => r("answered first"), 5000).unref());
        lifts.push(await Promise.race([workerLifted.then(() => "answered after"), late]));
      }
      return res;
    };
    try {
      const done = await runRollout(kube, held, runOptions(CLUSTER, { targetVersion: "v1.13.4", lastUpgradeVersion: "v1.13.3" }));
      assert.equal(done.phase, "Done");
    } finally {
      kube.uncordon = uncordon;
      held.close();
    }
    assert.deepEqual(lifts, ["lifted (ready true, v1.13.4, this boot)", "answered after"]);
    const node = await kube.readMachine!("w-1");
    assert.deepEqual([node?.cordoned, node?.talosVersion], [false, "v1.13.4"]);
  });

  it("issue 23: each wave's installer image is read while its gate holds; its node starts with the image known", async () => {
    await setGate(clients(s).core, GATE_CM, false);
    const reads: string[] = [];
    const starts: string[] = [];
    const api = createTalosApi(s.talosconfig);
    const upgradeNode = api.upgradeNode;
    api.upgradeNode = (address, o) => {
      starts.push(`${typeof o.image === "string" ? "image known" : "image still read"}, expected on ${o.expectedVersion}`);
      return upgradeNode(address, o);
    };
    let last: UpgradeStatus | undefined;
    const run = runRollout(kube, api, runOptions(CLUSTER, {
      targetVersion: "v1.13.5", lastUpgradeVersion: "v1.13.4", healthchecks: [configMapGateCheck(CLUSTER, GATE_CM)],
      installerImage: (m, v) => {
        reads.push(m.name);
        return `ghcr.io/siderolabs/installer:${v}`;
      },
      onStatus: (st) => (last = st),
    }));
    run.catch(() => undefined); // awaited below
    try {
      await until("the gate to hold", () => last?.gate === "held");
      assert.deepEqual(reads, ["cp-1"], "the first wave's image is read while its gate holds");
      assert.deepEqual(starts, []);
      await setGate(clients(s).core, GATE_CM, true);
      assert.equal((await run).phase, "Done");
    } finally {
      api.close();
    }
    assert.deepEqual(reads, ["cp-1", "cp-2", "cp-3", "w-1"], "each read once, ahead");
    assert.deepEqual(starts, Array(4).fill("image known, expected on v1.13.4"), "before the change each node's image was still being read as it started");
  });
});
