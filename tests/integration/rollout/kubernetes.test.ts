// KubernetesUpgrade on the sim (issue 24.3): 1.35 → 1.36 over the Talos API — control planes one at a time (their
// static pods restarted by the machine config patch, Talos' StaticPodStatus waited on), kube-proxy, then each kubelet —
// with the gate held and opened between units, under the cluster's Lease (a Talos rollout started meanwhile is
// refused); its status beside the Talos rollout's, not over it; a static pod that never becomes Ready ends the run
// naming node and component with nothing further touched, and the next run resumes from the live versions. One sim.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import type { KubeClient } from "../../../provider/kube";
import { kubernetesPort } from "../../../provider/handlers/kubernetesPort";
import { kubernetesUpgradeHandler } from "../../../provider/handlers/kubernetesUpgrade";
import { runKubernetesUpgrade, type KubernetesRunOptions } from "../../../provider/rollout/kubernetesRun";
import { kubernetesStatusKey } from "../../../provider/rollout/status";
import { runRollout } from "../../../provider/rollout/run";
import type { StatusEvent } from "../../../provider/rollout/status";
import type { TalosApiImpl } from "../../../provider/talos";
import { kubernetesRefusal } from "../../../provider/talos/compat";
import type { SimCluster } from "../../../sim/cluster";
import {
  adapters, clients, configMapGateCheck, grantGateRead, rejection, runOptions, setGate, sim,
} from "./helpers";

const CLUSTER = "k8s";
const GATE = "k8s-gate";

describe("integration: rollout — KubernetesUpgrade (sim)", function () {
  this.timeout(180000);
  let s: SimCluster;
  let kube: KubeClient;
  let talos: TalosApiImpl;

  before(async () => {
    // kube-proxy's DaemonSet as Talos bootstraps it: the run syncs the manifests the control planes render, and the real
    // kube-controller-manager and the kubelet emulator roll its pods.
    s = await sim({ controlPlanes: 2, workers: 1, version: "v1.13.2", kubernetesVersion: "v1.35.2", kubeProxy: true,
      // kube-proxy v1.36.3's pods never start (the last test: a DaemonSet rollout that does not finish).
      kubelet: { unpullableImages: ["registry.k8s.io/kube-proxy:v1.36.3"] } });
    ({ kube, talos } = adapters(s));
  });

  after(async () => {
    await s?.stop();
  });

  const options = (over: Partial<KubernetesRunOptions>): KubernetesRunOptions => ({
    cluster: CLUSTER, holder: `test:${CLUSTER}:kubernetes`, targetVersion: "v1.36.1", healthchecks: [], holdTimeoutMs: 60_000,
    nodeTimeoutMs: 30_000, readyPollMs: 100, statusWriteIntervalMs: 100, talosRange: kubernetesRefusal, ...over,
  });
  const kubelets = async () => Object.fromEntries((await kube.kubernetesVersions()).kubelets.map((k) => [k.node, k.version]));
  const proxyRollout = async () => {
    const r = (await kube.daemonSetRollout("kube-system", "kube-proxy", AbortSignal.timeout(10_000)))!;
    return { image: r.image, desired: r.desired, updated: r.updated, available: r.available };
  };
  const proxyManagers = async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(s.kubeconfig);
    const ds = await kc.makeApiClient(k8s.AppsV1Api).readNamespacedDaemonSet({ name: "kube-proxy", namespace: "kube-system" });
    return (ds.metadata?.managedFields ?? []).map((f) => f.manager);
  };
  const staticPodImages = (node: string) => s.talos.node(node).kubernetes.staticPods().map((p) => `${p.component} ${p.image.split(":").pop()} ${p.ready}`);

  it("preview: the plan from the live versions, and a skipped minor refused naming component, node and versions", async () => {
    const props = { kind: "KubernetesUpgrade", clusterName: CLUSTER, kubeconfig: s.kubeconfig, talosconfig: s.talosconfig, version: "v1.36.1", healthcheckIds: ["cluster-k8s-gate"] };
    const ok = await kubernetesUpgradeHandler.check({}, props);
    assert.deepEqual(ok.failures, undefined);
    assert.deepEqual((ok.inputs as { plan: string[] }).plan, [
      "upgrade Kubernetes to v1.36.1: 2 control planes one at a time, kube-proxy, then 3 kubelets",
      "1. cp-1 (control plane): kube-apiserver, kube-controller-manager, kube-scheduler v1.35.2 → v1.36.1, gated by: cluster-k8s-gate",
      "2. cp-2 (control plane): kube-apiserver, kube-controller-manager, kube-scheduler v1.35.2 → v1.36.1, gated by: cluster-k8s-gate",
      "3. kube-proxy: cluster.proxy.image on every control plane, bootstrap manifests synced v1.35.2 → v1.36.1, gated by: cluster-k8s-gate",
      "4. cp-1 (kubelet): kubelet v1.35.2 → v1.36.1, gated by: cluster-k8s-gate",
      "5. cp-2 (kubelet): kubelet v1.35.2 → v1.36.1, gated by: cluster-k8s-gate",
      "6. w-1 (kubelet): kubelet v1.35.2 → v1.36.1, gated by: cluster-k8s-gate",
    ]);
    const skipped = await kubernetesUpgradeHandler.check({}, { ...props, version: "v1.37.0" });
    assert.equal(skipped.failures?.[0]?.property, "version");
    assert.match(String(skipped.failures?.[0]?.reason), /^kube-apiserver on cp-1 runs v1.35.2: Kubernetes moves the control plane one minor at a time .*set version to v1.36.x first/);
  });

  it("1.35 → 1.36: control planes one at a time, then kube-proxy, then kubelets; the gate held and opened between units; the Lease refuses a Talos rollout", async () => {
    const { core } = clients(s);
    await grantGateRead(kube, CLUSTER, [GATE]);
    await setGate(core, GATE, true);
    const events: StatusEvent[] = [];
    const restarts: string[] = [];
    s.talos.on("staticPod", (n, pod) => restarts.push(`${n.name} ${pod.component} ${pod.image.split(":").pop()} ${pod.ready}`));
    let talosRefused: Promise<Error> | undefined;
    let closed = false, reopened: Promise<void> | undefined;
    // The gate closes while the first control plane is patched (awaited there, so before the next gate runs) and is
    // opened once the gate before the second is seen holding.
    const port = kubernetesPort(talos, kube);
    const closing = { ...port, setImages: async (...a: Parameters<typeof port.setImages>) => {
      if (!closed) { closed = true; await setGate(core, GATE, false); }
      return port.setImages(...a);
    } };
    const done = await runKubernetesUpgrade(kube, talos, closing, options({
      healthchecks: [configMapGateCheck(CLUSTER, GATE, 500)],
      onEvent: (e) => {
        events.push(e);
        // A Talos rollout of the same cluster started while this one runs: refused at once by the shared Lease.
        if (e.type === "NodeStarted" && !talosRefused) talosRefused = runRollout(kube, talos, runOptions(CLUSTER, { holder: "talos-pipeline" }))
          .then(() => assert.fail("the Talos rollout ran beside the Kubernetes one"), (err: Error) => err);
        if (e.type === "GateHeld" && closed && !reopened) reopened = setGate(core, GATE, true);
      },
    }));
    assert.equal(done.phase, "Done", done.error);
    assert.equal(done.lastUpgradeVersion, "v1.36.1");
    assert.match((await talosRefused!).message, /another rollout holds the lease \(holder "test:k8s:kubernetes"/);

    const shape = events.flatMap((e) => e.type === "NodeStarted" ? [e.node] : e.type === "GatePassed" ? ["gate open"] : e.type === "GateHeld" ? ["gate held"] : []);
    assert.deepEqual(shape.filter((x, i) => x !== "gate held" || shape[i - 1] !== "gate held"), [
      "gate open", "cp-1 (control plane)", "gate held", "gate open", "cp-2 (control plane)", "gate open", "kube-proxy",
      "gate open", "cp-1 (kubelet)", "gate open", "cp-2 (kubelet)", "gate open", "w-1 (kubelet)",
    ]);
    // One control plane at a time: cp-2's static pods restart only once cp-1's three are Ready on v1.36.1.
    const firstCp2 = restarts.findIndex((r) => r.startsWith("cp-2 "));
    for (const c of ["kube-apiserver", "kube-controller-manager", "kube-scheduler"]) {
      assert.ok(restarts.slice(0, firstCp2).includes(`cp-1 ${c} v1.36.1 true`), restarts.join("\n"));
    }
    for (const n of ["cp-1", "cp-2"]) assert.deepEqual(staticPodImages(n), ["kube-apiserver v1.36.1 true", "kube-controller-manager v1.36.1 true", "kube-scheduler v1.36.1 true"]);
    assert.deepEqual(await kubelets(), { "cp-1": "v1.36.1", "cp-2": "v1.36.1", "w-1": "v1.36.1" });
    // kube-proxy really upgraded: Talos only renders the new manifest; the run synced it as talosctl upgrade-k8s does
    // (server-side apply, Talos' field manager) and waited for the DaemonSet's rollout, before the first kubelet.
    assert.deepEqual(await proxyRollout(), { image: "registry.k8s.io/kube-proxy:v1.36.1", desired: 3, updated: 3, available: 3 });
    assert.ok((await proxyManagers()).includes("talos"), "applied with Talos' field manager");
    const proxySteps = events.flatMap((e) => e.type === "NodeStep" && e.node === "kube-proxy" ? [`${e.step} ${e.detail ?? ""}`.trim()] : []);
    assert.deepEqual(proxySteps, ["installing", "installing bootstrap manifests", "waiting kube-system/kube-proxy"]);
    assert.equal(done.machines.find((m) => m.name === "kube-proxy")?.from, "v1.35.2", "the DaemonSet's version read before the run");
    // Its status beside the Talos rollout's, under its own key: neither reads the other's.
    assert.equal((await kube.readStatus(kubernetesStatusKey(CLUSTER)) as { phase?: string } | undefined)?.phase, "Done");
    assert.equal(await kube.readStatus(CLUSTER), undefined);

    // Converged: a second run touches nothing (no machine config is applied again).
    const applies = () => s.talos.nodes().map((n) => n.kubernetes.applies);
    const before = applies();
    const again = await runKubernetesUpgrade(kube, talos, kubernetesPort(talos, kube), options({}));
    assert.equal(again.phase, "Done");
    assert.deepEqual(again.machines, []);
    assert.deepEqual(applies(), before);
  });

  it("a static pod that never becomes Ready fails the run naming node and component, nothing further is touched; the next run resumes from the live versions", async () => {
    s.talos.node("cp-2").faults.staticPodNeverReady = ["kube-scheduler"];
    const applies = () => Object.fromEntries(s.talos.nodes().map((n) => [n.name, n.kubernetes.applies]));
    const before = applies();
    const err = await rejection(runKubernetesUpgrade(kube, talos, kubernetesPort(talos, kube), options({ targetVersion: "v1.36.2", nodeTimeoutMs: 3000 })));
    assert.match(err.message, /^kube-scheduler on cp-2 was not Ready on v1.36.2 within nodeTimeout 3s \(last seen: registry.k8s.io\/kube-scheduler:v1.36.2, not Ready\); nothing further was touched/);
    assert.equal(err.status.machines.find((m) => m.name === "cp-2 (control plane)")?.state, "failed");
    const after = applies();
    assert.deepEqual({ "cp-1": after["cp-1"] - before["cp-1"], "cp-2": after["cp-2"] - before["cp-2"], "w-1": after["w-1"] - before["w-1"] },
      { "cp-1": 1, "cp-2": 1, "w-1": 0 }, "cp-1's and cp-2's static pods patched; no kube-proxy, no kubelet");

    s.talos.node("cp-2").faults.staticPodNeverReady = undefined;
    s.talos.recoverKubernetes("cp-2");
    const started: string[] = [];
    const done = await runKubernetesUpgrade(kube, talos, kubernetesPort(talos, kube), options({
      targetVersion: "v1.36.2", onEvent: (e) => { if (e.type === "NodeStarted") started.push(e.node); },
    }));
    assert.equal(done.phase, "Done", done.error);
    assert.deepEqual(started, ["kube-proxy", "cp-1 (kubelet)", "cp-2 (kubelet)", "w-1 (kubelet)"], "the control planes already on v1.36.2 are not done again");
    assert.deepEqual(await kubelets(), { "cp-1": "v1.36.2", "cp-2": "v1.36.2", "w-1": "v1.36.2" });
    // `pulumi refresh` of a stack whose last run failed: the status recomputed from the live versions.
    const state = { kind: "KubernetesUpgrade", clusterName: CLUSTER, kubeconfig: s.kubeconfig, talosconfig: s.talosconfig, version: "v1.36.2", status: { phase: "Failed", error: "x" } };
    const refreshed = (await kubernetesUpgradeHandler.read(CLUSTER, state)).props.status as { phase: string; lastUpgradeVersion: string; error: string };
    assert.deepEqual([refreshed.phase, refreshed.lastUpgradeVersion, refreshed.error], ["Done", "v1.36.2", ""]);
  });

  it("kube-proxy's DaemonSet not rolled out within nodeTimeout fails its unit naming the DaemonSet; no kubelet is touched", async () => {
    const err = await rejection(runKubernetesUpgrade(kube, talos, kubernetesPort(talos, kube), options({ targetVersion: "v1.36.3", nodeTimeoutMs: 3000 })));
    assert.match(err.message, /^DaemonSet kube-system\/kube-proxy did not finish rolling out v1.36.3 within nodeTimeout 3s \(last seen: image registry.k8s.io\/kube-proxy:v1.36.3, \d of 3 updated, [0-2] available\); nothing further was touched/);
    assert.equal(err.status.machines.find((m) => m.name === "kube-proxy")?.state, "failed");
    assert.deepEqual(await kubelets(), { "cp-1": "v1.36.2", "cp-2": "v1.36.2", "w-1": "v1.36.2" });
  });
});
