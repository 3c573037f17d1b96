// Kubernetes upgrades over the Talos API against the simulated nodes, on the real wire: the adapter reads a node's
// machine configuration (COSI), patches an image, applies it with ApplyConfiguration NO_REBOOT, and reads what the
// node then runs (StaticPodStatus, KubeletSpec, the kubelet service, the kube-proxy bootstrap manifest) — the steps
// of `talosctl upgrade-k8s`. No control plane: the Kubernetes side's mirror of these is in tests/integration/sim/kube-sim.test.ts.
import * as assert from "node:assert/strict";
import { status as Status } from "@grpc/grpc-js";
import {
  APPLY_MODE, applyConfigurationNoReboot, bootstrapManifests, createTalosApi, kubeletSpecImage, kubernetesImagesOf, patchKubernetesImages,
  readMachineConfig, serviceState, staticPodVersions, TalosError,
} from "../../../provider/talos";
import { SIM_CONFIG_SECRET, type SimStaticPod } from "../../../sim/talos";
import { Harness, rejectsWith, spec, startHarness } from "./helpers";

const FROM = "v1.35.2";
const TO = "v1.36.1";
const CP = "10.5.0.2";
const W = "10.5.0.3";

describe("talos: Kubernetes upgrades over the Talos API (machine config, static pods, kubelet)", function () {
  this.timeout(30000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ nodes: [spec("cp-1", 2, "v1.13.2", "controlplane"), spec("w-1", 3, "v1.13.2")], kubernetesVersion: FROM });
  });
  after(async () => h?.stop());
  afterEach(() => {
    for (const n of h.sim.nodes()) n.faults = {};
  });

  /** The next static pod report of `component` on cp-1 that matches `pred` (the sim's own event, no polling). */
  const staticPodEvent = (component: string, pred: (p: SimStaticPod) => boolean) => new Promise<SimStaticPod>((resolve) => {
    const on = (n: { name: string }, p: SimStaticPod) => {
      if (n.name !== "cp-1" || p.component !== component || !pred(p)) return;
      h.sim.off("staticPod", on);
      resolve(p);
    };
    h.sim.on("staticPod", on);
  });

  it("reads each node's configuration and what it runs: the images of the starting Kubernetes, three ready static pods on the control plane", async () => {
    const cpConfig = await readMachineConfig(h.api.client, CP);
    assert.deepEqual(kubernetesImagesOf(cpConfig), {
      apiServer: `registry.k8s.io/kube-apiserver:${FROM}`, controllerManager: `registry.k8s.io/kube-controller-manager:${FROM}`,
      scheduler: `registry.k8s.io/kube-scheduler:${FROM}`, proxy: `registry.k8s.io/kube-proxy:${FROM}`, kubelet: `ghcr.io/siderolabs/kubelet:${FROM}`,
    });
    assert.match(cpConfig, /kind: HostnameConfig/, "every document of the configuration");
    assert.deepEqual(kubernetesImagesOf(await readMachineConfig(h.api.client, W)), { kubelet: `ghcr.io/siderolabs/kubelet:${FROM}` });
    assert.deepEqual((await staticPodVersions(h.api.client, CP)).map((p) => [p.id, p.component, p.image, p.ready]), [
      ["kube-system/kube-apiserver-cp-1", "kube-apiserver", `registry.k8s.io/kube-apiserver:${FROM}`, true],
      ["kube-system/kube-controller-manager-cp-1", "kube-controller-manager", `registry.k8s.io/kube-controller-manager:${FROM}`, true],
      ["kube-system/kube-scheduler-cp-1", "kube-scheduler", `registry.k8s.io/kube-scheduler:${FROM}`, true],
    ]);
    assert.deepEqual(await staticPodVersions(h.api.client, W), [], "a worker runs no control-plane static pods");
    assert.equal(await kubeletSpecImage(h.api.client, W), `ghcr.io/siderolabs/kubelet:${FROM}`);
    assert.deepEqual(await serviceState(h.api.client, W), { running: true, healthy: true });
  });

  it("a new kube-apiserver image, applied without a reboot: the static pod restarts on it, not ready, then ready; nothing else changes", async () => {
    const before = await readMachineConfig(h.api.client, CP);
    const patched = patchKubernetesImages(before, { apiServer: `registry.k8s.io/kube-apiserver:${TO}` });
    const ready = staticPodEvent("kube-apiserver", (p) => p.ready && p.image.endsWith(TO));
    h.sim.node("cp-1").faults.staticPodNeverReady = ["kube-apiserver"];
    const upBefore = h.sim.node("cp-1").bootId;
    await applyConfigurationNoReboot(h.api.client, CP, patched);
    assert.equal(await readMachineConfig(h.api.client, CP), patched, "the node's configuration is exactly what was applied");
    let pods = await staticPodVersions(h.api.client, CP);
    assert.deepEqual(pods.map((p) => [p.component, p.image, p.ready]), [
      ["kube-apiserver", `registry.k8s.io/kube-apiserver:${TO}`, false],
      ["kube-controller-manager", `registry.k8s.io/kube-controller-manager:${FROM}`, true],
      ["kube-scheduler", `registry.k8s.io/kube-scheduler:${FROM}`, true],
    ]);
    h.sim.recoverKubernetes("cp-1");
    await ready;
    pods = await staticPodVersions(h.api.client, CP);
    assert.deepEqual(pods.map((p) => [p.component, p.ready]), [["kube-apiserver", true], ["kube-controller-manager", true], ["kube-scheduler", true]]);
    assert.equal(h.sim.node("cp-1").bootId, upBefore, "no reboot");
    // without the fault, the restart ends by itself
    const cm = staticPodEvent("kube-controller-manager", (p) => p.ready && p.image.endsWith(TO));
    await applyConfigurationNoReboot(h.api.client, CP, patchKubernetesImages(patched, { controllerManager: `registry.k8s.io/kube-controller-manager:${TO}` }));
    await cm;
    assert.equal((await staticPodVersions(h.api.client, CP))[1].ready, true);
  });

  it("a new kubelet image restarts the kubelet (its service gone meanwhile), which then runs the new version", async () => {
    const node = h.sim.node("w-1");
    node.faults.kubeletNeverReturns = true;
    await applyConfigurationNoReboot(h.api.client, W, patchKubernetesImages(await readMachineConfig(h.api.client, W), { kubelet: `ghcr.io/siderolabs/kubelet:${TO}` }));
    assert.deepEqual(await serviceState(h.api.client, W), { running: false, healthy: false }, "the stopped service's resource is gone");
    assert.equal(node.kubernetes.kubelet.version, FROM);
    const started = new Promise<void>((resolve) => h.sim.once("kubelet", () => resolve()));
    h.sim.recoverKubernetes("w-1");
    await started;
    assert.deepEqual(await serviceState(h.api.client, W), { running: true, healthy: true });
    assert.equal(await kubeletSpecImage(h.api.client, W), `ghcr.io/siderolabs/kubelet:${TO}`);
    assert.equal(node.kubernetes.kubelet.version, TO);
  });

  it("kube-proxy: the control plane renders its DaemonSet from cluster.proxy.image (bootstrap manifest 10-kube-proxy)", async () => {
    const image = (ms: Awaited<ReturnType<typeof bootstrapManifests>>) => {
      const ds = ms.find((m) => m.id === "10-kube-proxy")?.objects.find((o) => o.kind === "DaemonSet") as { spec: { template: { spec: { containers: { image: string }[] } } } };
      return ds.spec.template.spec.containers[0].image;
    };
    assert.equal(image(await bootstrapManifests(h.api.client, CP)), `registry.k8s.io/kube-proxy:${FROM}`);
    await applyConfigurationNoReboot(h.api.client, CP, patchKubernetesImages(await readMachineConfig(h.api.client, CP), { proxy: `registry.k8s.io/kube-proxy:${TO}` }));
    const manifests = await bootstrapManifests(h.api.client, CP);
    assert.equal(image(manifests), `registry.k8s.io/kube-proxy:${TO}`);
    assert.deepEqual(manifests[0].objects.map((o) => o.kind), ["ServiceAccount", "ClusterRoleBinding", "DaemonSet"]);
    assert.deepEqual(await bootstrapManifests(h.api.client, W), []);
  });

  it("Talos' refusals name the node and what to do, never the configuration; a busy node is retryable", async () => {
    const config = await readMachineConfig(h.api.client, W);
    assert.ok(config.includes(SIM_CONFIG_SECRET));
    const node = h.sim.node("w-1");
    // a validation error that quotes a value of the configuration (as Talos' may)
    node.faults.rejectApply = { code: Status.INVALID_ARGUMENT, message: `1 error occurred:\n\t* machine.token "${SIM_CONFIG_SECRET}" is not valid` };
    let err = await rejectsWith(applyConfigurationNoReboot(h.api.client, W, config), "INVALID_ARGUMENT");
    assert.match(err.message, /^talos: node 10\.5\.0\.3: Talos refused the machine configuration \(INVALID_ARGUMENT: .*machine\.token "\[redacted\]" is not valid\); nothing was changed on the node — fix/s);
    assert.equal(err.retryable, false);
    assert.ok(!err.message.includes(SIM_CONFIG_SECRET) && !(err.detail ?? "").includes(SIM_CONFIG_SECRET));
    node.faults.rejectApply = { code: Status.FAILED_PRECONDITION, message: "another apply configuration is already in progress" };
    err = await rejectsWith(applyConfigurationNoReboot(h.api.client, W, config), "IN_PROGRESS");
    assert.match(err.message, /^talos: node 10\.5\.0\.3: Talos refused the machine configuration for now \(another apply configuration is already in progress\); .* retry after it finishes$/);
    assert.equal(err.retryable, true);
    node.faults = {};
    // what Talos itself refuses on the wire: no v1alpha1 document, the deprecated REBOOT mode
    const noV1 = "apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: w-1\n";
    await assert.rejects(h.api.client.applyConfiguration(W, { data: noV1, mode: APPLY_MODE.NO_REBOOT }), /doesn't contain v1alpha1 config/);
    const reboot = await rejectsWith(h.api.client.applyConfiguration(W, { data: config, mode: APPLY_MODE.REBOOT }), "UNIMPLEMENTED");
    assert.match(reboot.detail ?? "", /the REBOOT mode is not supported/);
    // ... and the adapter refuses the first before sending it
    const applies = node.kubernetes.applies;
    err = await rejectsWith(applyConfigurationNoReboot(h.api.client, W, noV1), "CONFIG");
    assert.match(err.message, /node 10\.5\.0\.3: the machine configuration has no v1alpha1 document/);
    assert.equal(node.kubernetes.applies, applies, "the refused configuration never reached the node");
    // AUTO is answered as NO_REBOOT, as Talos does
    assert.equal((await h.api.client.applyConfiguration(W, { data: config, mode: APPLY_MODE.AUTO })).mode, APPLY_MODE.NO_REBOOT);
  });

  it("the configuration is os:admin only: a reader talosconfig gets a message saying which role to use", async () => {
    const reader = createTalosApi(h.sim.talosconfig({ roles: ["os:reader"] }), { probeTimeoutMs: 2000 });
    try {
      const read = await rejectsWith(readMachineConfig(reader.client, W), "PERMISSION_DENIED");
      assert.match(read.message, /^talos: node 10\.5\.0\.3: the active machine configuration cannot be read \(not authorized\); the talosconfig needs the os:admin role/);
      const err = await rejectsWith(applyConfigurationNoReboot(reader.client, W, await readMachineConfig(h.api.client, W)), "PERMISSION_DENIED");
      assert.match(err.message, /os:admin/);
      assert.ok(err instanceof TalosError && !err.message.includes(SIM_CONFIG_SECRET));
    } finally {
      reader.close();
    }
  });

  it("a configuration applied STAGED becomes active only with the next boot", async () => {
    const node = h.sim.node("w-1");
    const config = await readMachineConfig(h.api.client, W);
    const staged = patchKubernetesImages(config, { kubelet: "ghcr.io/siderolabs/kubelet:v1.36.2" });
    assert.equal((await h.api.client.applyConfiguration(W, { data: staged, mode: APPLY_MODE.STAGED })).mode, APPLY_MODE.STAGED);
    assert.equal(await readMachineConfig(h.api.client, W), config);
    // after the boot the kubelet restarts on the staged configuration's image
    const kubeletBack = new Promise<void>((resolve) => {
      const on = (n: { name: string }, k: { running: boolean; version: string }) => {
        if (n.name !== "w-1" || !k.running || k.version !== "v1.36.2") return;
        h.sim.off("kubelet", on);
        resolve();
      };
      h.sim.on("kubelet", on);
    });
    await h.api.client.reboot(W);
    await kubeletBack;
    assert.equal(await readMachineConfig(h.api.client, W), staged);
    assert.equal(node.kubernetes.staged, undefined);
  });
});
