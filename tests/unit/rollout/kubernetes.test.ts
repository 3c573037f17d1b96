// KubernetesUpgrade's pure parts (issue 24.3): what is left to do, read from live versions (so a killed run resumes
// without redoing a node); the skew rules refused at preview; the plan in the Talos rollout's status shape; the model.
import * as assert from "node:assert/strict";
import {
  asRolloutPlan, describeKubernetesPlan, kubernetesSkewFailures, planKubernetesUpgrade, unitName, type KubernetesNode,
} from "../../../provider/rollout/kubernetesPlan";
import { initialStatus, reduce } from "../../../provider/rollout/status";
import { proxyRolledOut } from "../../../provider/rollout/kubernetesRun";
import { kubernetesRefusal } from "../../../provider/talos/compat";
import { checkKubernetesUpgrade, kubernetesRolloutKey, parseKubernetesUpgrade } from "../../../provider/resources/kubernetesUpgrade";
import { UNKNOWN } from "../../../provider/handlers/common";
import { kubernetesUpgradeHandler } from "../../../provider/handlers/kubernetesUpgrade";

const pods = (v: string) => ({ "kube-apiserver": v, "kube-controller-manager": v, "kube-scheduler": v });
const cp = (name: string, v: string, over: Partial<KubernetesNode> = {}): KubernetesNode =>
  ({ name, role: "controlplane", ready: true, talosVersion: "v1.13.2", kubeletVersion: v, staticPods: pods(v), ...over });
const worker = (name: string, v: string, over: Partial<KubernetesNode> = {}): KubernetesNode =>
  ({ name, role: "worker", ready: true, talosVersion: "v1.13.2", kubeletVersion: v, ...over });

describe("rollout: KubernetesUpgrade plan and skew", () => {
  it("control planes one at a time (their three static pods), then kube-proxy, then kubelets: control planes first, by name", () => {
    const plan = planKubernetesUpgrade([worker("w-1", "v1.35.2"), cp("cp-2", "v1.35.2"), cp("cp-1", "v1.35.2"), worker("a-0", "v1.35.2")], "1.36.1");
    assert.equal(plan.target, "v1.36.1");
    assert.deepEqual(plan.units.map(unitName), [
      "cp-1 (control plane)", "cp-2 (control plane)", "kube-proxy", "cp-1 (kubelet)", "cp-2 (kubelet)", "a-0 (kubelet)", "w-1 (kubelet)",
    ]);
    assert.deepEqual(plan.units[0], { kind: "controlPlane", node: "cp-1", role: "controlplane", components: ["kube-apiserver", "kube-controller-manager", "kube-scheduler"], from: "v1.35.2" });
  });

  it("level-based: what already runs the target is not planned again (a killed run resumes where it stopped)", () => {
    const nodes = [
      cp("cp-1", "v1.36.1", { kubeletVersion: "v1.35.2" }),
      cp("cp-2", "v1.35.2", { staticPods: { ...pods("v1.36.1"), "kube-scheduler": "v1.35.2" } }),
      worker("w-1", "v1.36.1"),
    ];
    const plan = planKubernetesUpgrade(nodes, "v1.36.1");
    assert.deepEqual(plan.units.map(unitName), ["cp-2 (control plane)", "kube-proxy", "cp-1 (kubelet)", "cp-2 (kubelet)"]);
    assert.deepEqual(plan.units[0], { kind: "controlPlane", node: "cp-2", role: "controlplane", components: ["kube-scheduler"], from: "v1.35.2" });
    assert.deepEqual(plan.done, ["w-1"]);
    const converged = planKubernetesUpgrade([cp("cp-1", "v1.36.1"), worker("w-1", "v1.36.1")], "v1.36.1");
    assert.deepEqual(converged.units, [], "nothing left: not even kube-proxy");
    assert.deepEqual(describeKubernetesPlan(converged, []), ["nothing to do: every node already runs Kubernetes v1.36.1"]);
    const missing = planKubernetesUpgrade([cp("cp-1", "v1.36.1", { staticPods: {} })], "v1.36.1");
    assert.deepEqual(missing.units.map(unitName), ["cp-1 (control plane)", "kube-proxy"], "a static pod not found is planned, never assumed done");
  });

  it("refuses a skipped control-plane minor and a minor downgrade, naming component, node and both versions", () => {
    assert.deepEqual(kubernetesSkewFailures([cp("cp-1", "v1.35.2"), worker("w-1", "v1.34.0")], "v1.36.1", kubernetesRefusal), []);
    assert.deepEqual(kubernetesSkewFailures([cp("cp-1", "v1.34.5", { kubeletVersion: "v1.34.5" })], "v1.36.1", kubernetesRefusal).slice(0, 1), [
      "kube-apiserver on cp-1 runs v1.34.5: Kubernetes moves the control plane one minor at a time (its version skew policy), so v1.36.1 " +
      "cannot be reached directly: set version to v1.35.x first, then v1.36.1",
    ]);
    assert.match(kubernetesSkewFailures([cp("cp-1", "v1.36.1")], "v1.35.0", kubernetesRefusal)[0],
      /^kube-apiserver on cp-1 runs v1.36.1: going down to v1.35.0 is a minor downgrade, which Kubernetes does not support/);
  });

  it("refuses a kubelet newer than the target API server, or more than 3 minors behind it", () => {
    assert.deepEqual(kubernetesSkewFailures([cp("cp-1", "v1.35.2", { kubeletVersion: "v1.35.0" }), worker("w-1", "v1.36.0")], "v1.35.2", kubernetesRefusal), [
      "the kubelet of w-1 runs v1.36.0, newer than the API server would (v1.35.2): kubelets are never newer than the API server " +
      "(Kubernetes' version skew policy); set version to v1.36.0 or newer",
    ]);
    assert.match(kubernetesSkewFailures([cp("cp-1", "v1.35.2"), worker("w-9", "v1.32.4")], "v1.36.1", kubernetesRefusal)[0],
      /^the kubelet of w-9 runs v1.32.4, more than 3 minors older than v1.36.1/);
  });

  it("refuses a target outside a node's Talos range (Talos' compatibility table), naming node, Talos version and range", () => {
    const failures = kubernetesSkewFailures([cp("cp-1", "v1.35.2"), worker("w-1", "v1.35.2", { talosVersion: "v1.12.11" })], "v1.36.1", kubernetesRefusal);
    assert.deepEqual(failures, [
      "node w-1 runs Talos v1.12.11, whose range is Kubernetes 1.30.0 – 1.35.x (Talos 1.12), so Kubernetes v1.36.1 cannot run on it: " +
      "upgrade Talos first (a TalosUpgrade, and `after` on this KubernetesUpgrade)",
    ]);
    // After a TalosUpgrade to v1.13.2 (`after`): the range preview checks is that release's.
    assert.deepEqual(kubernetesSkewFailures([cp("cp-1", "v1.35.2"), worker("w-1", "v1.35.2", { talosVersion: "v1.12.11" })], "v1.36.1", kubernetesRefusal, "v1.13.2"), []);
    assert.match(kubernetesSkewFailures([worker("w-1", "v1.35.2", { talosVersion: "v1.12.11" })], "v1.36.1", kubernetesRefusal, "v1.12.11")[0],
      /^node w-1 runs Talos v1.12.11, /, "a TalosUpgrade that does not move the node up changes nothing");
    assert.match(kubernetesSkewFailures([worker("w-1", "v1.36.1", { talosVersion: "v1.13.2" })], "v1.37.0", kubernetesRefusal, "v1.13.9")[0],
      /^node w-1 will run Talos v1.13.9 \(the TalosUpgrade this one runs after\), whose range is Kubernetes 1.31.0 – 1.36.x \(Talos 1.13\), so Kubernetes v1.37.0 cannot run on it: choose a Kubernetes inside that range$/);
  });

  it("the plan drives the Talos rollout's status reducer: one wave per unit, the preview lines name the gates", () => {
    const plan = planKubernetesUpgrade([cp("cp-1", "v1.35.2"), worker("w-1", "v1.35.2")], "v1.36.1");
    const status = reduce(initialStatus("prod"), { type: "RunStarted", at: 0, plan: asRolloutPlan(plan, ["cluster-prod-ceph"]) });
    assert.equal(status.phase, "Upgrading");
    assert.equal(status.currentUpgradeVersion, "v1.36.1");
    assert.deepEqual(status.machines.map((m) => [m.name, m.role, m.from ?? "", m.wave]), [
      ["cp-1 (control plane)", "controlplane", "v1.35.2", 1], ["kube-proxy", "worker", "", 2],
      ["cp-1 (kubelet)", "controlplane", "v1.35.2", 3], ["w-1 (kubelet)", "worker", "v1.35.2", 4],
    ]);
    assert.deepEqual(describeKubernetesPlan(plan, ["cluster-prod-ceph"]), [
      "upgrade Kubernetes to v1.36.1: 1 control plane one at a time, kube-proxy, then 2 kubelets",
      "1. cp-1 (control plane): kube-apiserver, kube-controller-manager, kube-scheduler v1.35.2 → v1.36.1, gated by: cluster-prod-ceph",
      "2. kube-proxy: cluster.proxy.image on every control plane, bootstrap manifests synced → v1.36.1, gated by: cluster-prod-ceph",
      "3. cp-1 (kubelet): kubelet v1.35.2 → v1.36.1, gated by: cluster-prod-ceph",
      "4. w-1 (kubelet): kubelet v1.35.2 → v1.36.1, gated by: cluster-prod-ceph",
    ]);
  });

  it("kube-proxy's DaemonSet version: its hop in the plan, planned alone when only it is behind (a run killed between patch and sync), not when on the target", () => {
    const nodes = [cp("cp-1", "v1.36.1"), worker("w-1", "v1.36.1")];
    const behind = planKubernetesUpgrade(nodes, "v1.36.1", { version: "v1.35.2" });
    assert.deepEqual(behind.units, [{ kind: "proxy", from: "v1.35.2" }]);
    assert.deepEqual(describeKubernetesPlan(behind, []), [
      "upgrade Kubernetes to v1.36.1: kube-proxy only (every node already runs it), 2 already on v1.36.1",
      "1. kube-proxy: cluster.proxy.image on every control plane, bootstrap manifests synced v1.35.2 → v1.36.1",
    ]);
    assert.equal(reduce(initialStatus("prod"), { type: "RunStarted", at: 0, plan: asRolloutPlan(behind, []) }).machines[0].from, "v1.35.2");
    assert.deepEqual(planKubernetesUpgrade(nodes, "v1.36.1", { version: "v1.36.1" }).units, []);
    assert.deepEqual(planKubernetesUpgrade(nodes, "v1.36.1", {}).units, [], "no DaemonSet read (none, or kube-proxy disabled): nothing for it");
    assert.deepEqual(planKubernetesUpgrade([cp("cp-1", "v1.35.2")], "v1.36.1", { version: "1.35.2" }).units.find((u) => u.kind === "proxy"), { kind: "proxy", from: "v1.35.2" });
  });

  it("kube-proxy's rollout is done as kubectl rollout status says: generation observed, every pod updated and available, on the target", () => {
    const done = { version: "v1.36.1", generation: 2, observedGeneration: 2, desired: 3, updated: 3, available: 3 };
    assert.equal(proxyRolledOut(done, "v1.36.1"), true);
    assert.equal(proxyRolledOut({ ...done, observedGeneration: 1 }, "v1.36.1"), false, "the controller has not seen the new spec");
    assert.equal(proxyRolledOut({ ...done, updated: 2 }, "v1.36.1"), false);
    assert.equal(proxyRolledOut({ ...done, available: 2 }, "v1.36.1"), false);
    assert.equal(proxyRolledOut({ ...done, version: "v1.35.2" }, "v1.36.1"), false, "rolled out, but not the target");
    assert.equal(proxyRolledOut({ ...done, desired: 0, updated: 0, available: 0 }, "v1.36.1"), true, "no node to run on");
  });

  it("the model: version is a Kubernetes version, spellings of the same input key alike, unknowns wait for apply", () => {
    const props = (over: Record<string, unknown>) => ({ clusterName: "prod", kubeconfig: "k", talosconfig: "t", version: "v1.36.1", ...over });
    assert.deepEqual(checkKubernetesUpgrade(props({ version: "1.36" })), [{ property: "version", reason: 'version must be a Kubernetes version like "v1.36.1", got "1.36"' }]);
    assert.deepEqual(checkKubernetesUpgrade(props({ version: UNKNOWN })), []);
    const a = parseKubernetesUpgrade(props({ version: "1.36.1", holdTimeout: "1h" }));
    const b = parseKubernetesUpgrade(props({ holdTimeout: "60m", nodeTimeout: "15m" }));
    assert.equal(a.version, "v1.36.1");
    assert.equal(kubernetesRolloutKey(a), kubernetesRolloutKey(b));
    assert.notEqual(kubernetesRolloutKey(a), kubernetesRolloutKey(parseKubernetesUpgrade(props({ version: "v1.36.2" }))));
  });

  it("diff: no change for another spelling once Done; a new version, an unknown input or an unfinished run is a change", async () => {
    const props = (over: Record<string, unknown>) => ({ kind: "KubernetesUpgrade", clusterName: "prod", kubeconfig: "k", talosconfig: "t", version: "v1.36.1", ...over });
    const done = props({ holdTimeout: "60m", status: { phase: "Done" } });
    assert.deepEqual(await kubernetesUpgradeHandler.diff("prod", done, props({ version: "1.36.1", holdTimeout: "1h" })), { changes: false, replaces: [] });
    assert.equal((await kubernetesUpgradeHandler.diff("prod", done, props({ version: "v1.36.2" }))).changes, true);
    assert.equal((await kubernetesUpgradeHandler.diff("prod", done, props({ version: UNKNOWN }))).changes, true);
    assert.equal((await kubernetesUpgradeHandler.diff("prod", props({ status: { phase: "Failed" } }), props({}))).changes, true, "the next up resumes");
    assert.deepEqual((await kubernetesUpgradeHandler.diff("prod", done, props({ clusterName: "other" }))).replaces, ["clusterName"]);
  });
});
