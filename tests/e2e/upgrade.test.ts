// The Pulumi layer end to end: the real pulumi CLI drives Cluster, Healthcheck and TalosUpgrade against the simulated
// cluster (real kube-apiserver, Talos nodes on the real wire protocol, Jobs that really run).
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import * as pulumi from "@pulumi/pulumi";
import { Stack } from "@pulumi/pulumi/automation";
import { createTalosApi } from "../../provider/talos";
import type { SimCluster } from "../../sim/cluster";
import { Cluster, Healthcheck, KubernetesUpgrade, TalosUpgrade } from "../../sdk";
import { inlineStack, PulumiEnv, pulumiEnv, stateText } from "../support/pulumi";
import { countBoots, gateJob, gateRbac, leftoverRunners, setGate, testSim, nodeVersions } from "../support/sim";

interface Knobs {
  version: string;
  path?: string[];
  holdTimeout?: string;
  nodeTimeout?: string;
  interval?: string;
  /** Issue 24.3: a KubernetesUpgrade to this version after the TalosUpgrade, behind the same gate. */
  kubernetesVersion?: string;
}

function program(sim: SimCluster, knobs: Knobs) {
  return async () => {
    const cluster = new Cluster("sim", {
      clusterName: "sim",
      kubeconfig: pulumi.secret(sim.kubeconfig),
      talosconfig: pulumi.secret(sim.talosconfig),
      manifests: [gateRbac()],
    });
    // The job as a secret (it may name internal hosts or carry a token): what the provider composes from it is secret too.
    const gate = new Healthcheck("gate", { cluster, name: "gate", interval: knobs.interval ?? "5s", job: pulumi.secret(gateJob()) });
    const upgrade = new TalosUpgrade("talos", {
      cluster, version: knobs.version, path: knobs.path, healthchecks: [gate],
      holdTimeout: knobs.holdTimeout ?? "5m", nodeTimeout: knobs.nodeTimeout ?? "2m",
    });
    const kubernetes = knobs.kubernetesVersion === undefined ? undefined
      : new KubernetesUpgrade("kubernetes", { cluster, version: knobs.kubernetesVersion, healthchecks: [gate], nodeTimeout: "1m" }, { dependsOn: [upgrade] });
    return {
      status: upgrade.status, plan: upgrade.plan, checkId: gate.checkId,
      ...(kubernetes ? { kubernetesStatus: kubernetes.status, kubernetesPlan: kubernetes.plan } : {}),
    };
  };
}

const versions = nodeVersions;

describe("e2e: gated Talos upgrade through the real pulumi CLI on the sim", function () {
  this.timeout(600000);
  let sim: SimCluster;
  let env: PulumiEnv;
  let stack: Stack;
  let knobs: Knobs;
  let boots: Map<string, number>;

  before(async () => {
    // kube-proxy's DaemonSet as Talos bootstraps it: the KubernetesUpgrade step syncs it (issue 24.3).
    sim = await testSim({ controlPlanes: 1, workers: 2, version: "v1.12.4", kubernetesVersion: "v1.35.2", kubeProxy: true });
    await setGate(sim, false);
    env = await pulumiEnv();
    knobs = { version: "v1.13.2" };
    stack = await inlineStack(env, "upgrade", async () => program(sim, knobs)());
    boots = countBoots(sim);
  });

  /** The next `pulumi up` completes: phase Done, every node on `version`, each rebooted exactly once per step. */
  async function resumesTo(version: string, steps = 1): Promise<void> {
    const up = await stack.up();
    assert.equal(up.outputs.status.value.phase, "Done");
    assert.deepEqual(await versions(sim), { "cp-1": version, "w-1": version, "w-2": version });
    assert.deepEqual(Object.fromEntries(boots), { "cp-1": steps, "w-1": steps, "w-2": steps }, "no node upgraded twice in a step");
  }

  it("preview shows the rollout plan, control planes first, each wave gated", async () => {
    const preview = await stack.preview({ diff: true });
    const out = preview.stdout;
    assert.match(out, /1\. cp-1 \(controlplane\) v1\.12\.4 → v1\.13\.2, gated by: cluster-sim-gate/);
    assert.match(out, /2\. w-1 \(worker\) v1\.12\.4 → v1\.13\.2, gated by: cluster-sim-gate/);
    assert.match(out, /3\. w-2 \(worker\) v1\.12\.4 → v1\.13\.2, gated by: cluster-sim-gate/);
    assert.deepEqual(await versions(sim), { "cp-1": "v1.12.4", "w-1": "v1.12.4", "w-2": "v1.12.4" }, "preview touches no node");
  });

  it("preview rejects bad input naming the resource and the field, and touches nothing", async () => {
    const badCheck = await inlineStack(env, "bad-check", async () => {
      const cluster = new Cluster("sim", { clusterName: "sim", kubeconfig: pulumi.secret(sim.kubeconfig), talosconfig: pulumi.secret(sim.talosconfig) });
      new Healthcheck("gate", { cluster, name: "gate", interval: "1s", job: gateJob() });
    });
    await assert.rejects(badCheck.preview(), (err: Error) => {
      assert.match(err.message, /Healthcheck resource 'gate': property interval value \{1s\} has a problem: healthcheck "gate": healthcheck interval must be at least 5s/);
      return true;
    });
    const badUpgrade = await inlineStack(env, "bad-upgrade", async () => {
      const cluster = new Cluster("sim", { clusterName: "sim", kubeconfig: pulumi.secret(sim.kubeconfig), talosconfig: pulumi.secret(sim.talosconfig) });
      new TalosUpgrade("talos", { cluster, version: "v1.13", holdTimeout: "an hour" });
    });
    await assert.rejects(badUpgrade.preview(), (err: Error) => {
      assert.match(err.message, /TalosUpgrade resource 'talos': property version value \{v1\.13\} has a problem: version must be a Talos version like "v1\.13\.2", got "v1\.13"/);
      assert.match(err.message, /property holdTimeout value \{an hour\} has a problem: holdTimeout "an hour" is invalid/);
      return true;
    });
    // Issue 24.1: a skipped minor, and a Talos whose Kubernetes range excludes the cluster's (1.35.2), refused at preview.
    knobs = { version: "v1.15.1" };
    await assert.rejects(stack.preview(), (err: Error) => {
      assert.match(err.message, /TalosUpgrade resource 'talos': property version value \{v1\.15\.1\} has a problem: node cp-1: v1\.12\.4 cannot be upgraded to v1\.15\.1 \(Talos 1\.15 upgrades from ≥ 1\.13\.0\): go through v1\.14\.x first, e\.g\. `path: \["v1\.14\.0"\]`/);
      return true;
    });
    knobs = { version: "v1.9.6" };
    await assert.rejects(stack.preview(), (err: Error) => {
      assert.match(err.message, /Kubernetes v1\.35\.2 \(kube-apiserver on cp-1, .*kubelets of cp-1, w-1, w-2\) is outside Talos 1\.9's range 1\.27\.0 – 1\.32\.x/);
      return true;
    });
    knobs = { version: "v1.13.2" };
    assert.deepEqual(await versions(sim), { "cp-1": "v1.12.4", "w-1": "v1.12.4", "w-2": "v1.12.4" });
  });

  it("up holds at the closed gate with the check's stderr, then completes once it opens", async () => {
    let held = "";
    const lines: string[] = [];
    const up = await stack.up({
      onOutput: (o) => {
        lines.push(o);
        if (!held && /gate held .*gate is closed/.test(o)) { // the live line on the TalosUpgrade's row
          held = o;
          void setGate(sim, true);
        }
      },
    });
    assert.ok(held, `the gate held first; output:\n${lines.join("")}`);
    assert.match(held, /"cluster-sim-gate": gate is closed: configmap default\/talos-gate-demo has open=false/);
    assert.equal(up.summary.result, "succeeded");
    const status = up.outputs.status.value;
    assert.equal(status.phase, "Done");
    assert.equal(status.lastUpgradeVersion, "v1.13.2");
    assert.deepEqual(await versions(sim), { "cp-1": "v1.13.2", "w-1": "v1.13.2", "w-2": "v1.13.2" });
    // Checks ran before every node: at least one attempt per wave plus the held attempts.
    assert.ok(status.healthchecks[0].attempts >= 4, `attempts: ${status.healthchecks[0].attempts}`);
    // Kept progress lines show on the row as they happen, then again under Diagnostics at the end: read the live part.
    const order = lines.join("").split("Diagnostics:")[0].match(/node (cp-1|w-1|w-2): upgrading/g);
    assert.deepEqual(order, ["node cp-1: upgrading", "node w-1: upgrading", "node w-2: upgrading"]);
    assert.deepEqual(await leftoverRunners(sim), []);
    assert.deepEqual(Object.fromEntries(boots), { "cp-1": 1, "w-1": 1, "w-2": 1 }, "each node rebooted exactly once");
  });

  it("a second up changes nothing", async () => {
    const again = await stack.up({ diff: true });
    assert.deepEqual(again.summary.resourceChanges, { same: 4 }, again.stdout);
    const preview = await stack.preview({ diff: true });
    assert.deepEqual(preview.changeSummary, { same: 4 });
  });

  it("state holds neither the kubeconfig nor the talosconfig in plaintext", async () => {
    const kubeKey = /client-key-data: (\S+)/.exec(sim.kubeconfig)![1].slice(0, 40);
    const talosKey = /key: (\S+)/.exec(sim.talosconfig)![1].slice(0, 40);
    const leaks: string[] = [];
    // The state file itself, as the backend stores it (an export could decrypt secrets for display).
    const file = path.join(env.dir, "state", ".pulumi", "stacks", "upgrade", "test.json");
    const raw = fs.readFileSync(file, "utf8");
    for (const r of JSON.parse(raw).checkpoint.latest.resources) {
      for (const section of ["inputs", "outputs"]) {
        for (const [k, v] of Object.entries(r[section] ?? {})) {
          const text = JSON.stringify(v);
          if (text.includes(kubeKey) || text.includes(talosKey) || text.includes("BEGIN")) leaks.push(`${r.type} ${section}.${k}`);
        }
      }
    }
    assert.deepEqual(leaks, [], "no credential in plaintext");
    // A secret job stays secret in what is composed from it (the Healthcheck's composedJob).
    const check = JSON.parse(raw).checkpoint.latest.resources.find((r: { type: string }) => r.type.endsWith("Healthcheck"));
    assert.ok(JSON.stringify(check.outputs.composedJob).includes("ciphertext"), `composedJob: ${JSON.stringify(check.outputs.composedJob).slice(0, 200)}`);
    assert.ok(!raw.includes("-o jsonpath="), "the job's script is nowhere in plaintext");
    assert.ok(raw.includes("ciphertext"), "secrets are stored encrypted");
    assert.ok(!raw.includes(kubeKey) && !raw.includes(talosKey), "nowhere in the file");
  });

  it("refresh sees a node changed behind Pulumi's back, and the next up converges it again", async () => {
    const w1 = sim.machines.find((m) => m.name === "w-1")!;
    const talos = createTalosApi(sim.talosconfig);
    try {
      await talos.upgradeNode(w1.address, { image: "ghcr.io/siderolabs/installer:v1.12.4", targetVersion: "v1.12.4", nodeTimeoutMs: 60000 });
    } finally {
      talos.close();
    }
    await sim.settled();
    await waitFor(async () => (await versions(sim))["w-1"] === "v1.12.4");
    await stack.refresh();
    const refreshed = JSON.parse(await stateText(stack)).resources.find((r: { type: string }) => r.type.endsWith("TalosUpgrade"));
    assert.equal(refreshed.outputs.status.phase, "Upgrading");
    assert.equal(refreshed.outputs.status.status, "updating machines 3/3");
    const preview = await stack.preview();
    assert.equal(preview.changeSummary.update, 1, "the drift is an update to apply");
    const up = await stack.up();
    assert.equal(up.outputs.status.value.phase, "Done");
    assert.equal((await versions(sim))["w-1"], "v1.13.2");
  });

  it("an up through a path whose provider process is killed mid-node in step 2 is resumed in step 2 by the next up", async () => {
    boots.clear();
    // Issue 24.2: each step a full gated rollout; the kill lands in the second step.
    knobs = { version: "v1.13.5", path: ["v1.13.4"] };
    let killed = false;
    let inStep2 = false;
    await assert.rejects(stack.up({
      onOutput: (o) => {
        inStep2 ||= /path step 2\/2: → v1\.13\.5/.test(o);
        if (inStep2 && !killed && / w-1: (rebooting|waiting)/.test(o)) {
          killed = signalProvider(env.dir, "SIGKILL");
        }
      },
    }), (err: Error) => {
      // The engine's gRPC call into the provider fails when its process dies: the update fails for that reason and no other.
      assert.match(err.message, /code = Unavailable|error reading from server|connection refused|transport is closing/, err.message);
      return true;
    });
    assert.ok(killed, "the provider process was found and killed in step 2");
    await resumesTo("v1.13.5", 2);
  });

  it("Ctrl-C during an up stops before the next node, saves the status, and the next up resumes", async () => {
    boots.clear();
    knobs = { version: "v1.13.6" };
    // A terminal's Ctrl-C reaches the whole process group: the CLI (cancels the update) and the provider.
    const abort = new AbortController();
    let interrupted = false;
    await assert.rejects(stack.up({
      signal: abort.signal,
      onOutput: (o) => {
        if (!interrupted && / cp-1: (rebooting|waiting)/.test(o)) {
          interrupted = signalProvider(env.dir, "SIGINT");
          abort.abort();
        }
      },
    }), (err: Error) => {
      assert.match(err.message, /stopping before the next node|cancel/i);
      return true;
    });
    assert.ok(interrupted, "the provider process got SIGINT");
    const res = JSON.parse(await stateText(stack)).resources.find((r: { type: string }) => r.type.endsWith("TalosUpgrade"));
    assert.equal(res.outputs.status.phase, "Failed", "the cancelled run's status is saved");
    const after = await versions(sim);
    assert.equal(after["cp-1"], "v1.13.6", "the node in flight finished");
    assert.deepEqual([after["w-1"], after["w-2"]], ["v1.13.5", "v1.13.5"], "no further node was touched");
    await resumesTo("v1.13.6");
  });

  it("issue 24.3: a KubernetesUpgrade after the TalosUpgrade, 1.35 → 1.36: its plan in preview, control planes then kube-proxy then kubelets, the gate held then opened, a clean second preview", async () => {
    knobs = { ...knobs, version: "v1.13.6", kubernetesVersion: "v1.36.1" };
    const preview = await stack.preview({ diff: true });
    assert.match(preview.stdout, /1\. cp-1 \(control plane\): kube-apiserver, kube-controller-manager, kube-scheduler v1\.35\.2 → v1\.36\.1, gated by: cluster-sim-gate/);
    assert.match(preview.stdout, /2\. kube-proxy: cluster\.proxy\.image on every control plane, bootstrap manifests synced v1\.35\.2 → v1\.36\.1, gated by: cluster-sim-gate/);
    assert.match(preview.stdout, /3\. cp-1 \(kubelet\): kubelet v1\.35\.2 → v1\.36\.1, gated by: cluster-sim-gate/);
    await setGate(sim, false);
    const bootsBefore = Object.fromEntries(boots);
    let held = "";
    const lines: string[] = [];
    const up = await stack.up({
      onOutput: (o) => {
        lines.push(o);
        if (!held && /gate held .*gate is closed/.test(o)) {
          held = o;
          void setGate(sim, true);
        }
      },
    });
    assert.ok(held, `the gate held first; output:\n${lines.join("")}`);
    const status = up.outputs.kubernetesStatus.value;
    assert.equal(status.phase, "Done", status.error);
    assert.equal(status.lastUpgradeVersion, "v1.36.1");
    const order = lines.join("").split("Diagnostics:")[0].match(/node (\S+ \((control plane|kubelet)\)|kube-proxy): upgrading/g);
    assert.deepEqual(order, [
      "node cp-1 (control plane): upgrading", "node kube-proxy: upgrading", "node cp-1 (kubelet): upgrading",
      "node w-1 (kubelet): upgrading", "node w-2 (kubelet): upgrading",
    ]);
    assert.deepEqual(Object.fromEntries(sim.talos.nodes().map((n) => [n.name, n.kubernetes.kubelet.version])), { "cp-1": "v1.36.1", "w-1": "v1.36.1", "w-2": "v1.36.1" });
    assert.deepEqual(Object.fromEntries(boots), bootsBefore, "a Kubernetes upgrade reboots no node");
    const kc = new k8s.KubeConfig();
    kc.loadFromString(sim.kubeconfig);
    const proxy = await kc.makeApiClient(k8s.AppsV1Api).readNamespacedDaemonSet({ name: "kube-proxy", namespace: "kube-system" });
    assert.deepEqual([proxy.spec?.template.spec?.containers[0].image, proxy.status?.updatedNumberScheduled, proxy.status?.numberAvailable],
      ["registry.k8s.io/kube-proxy:v1.36.1", 3, 3], "kube-proxy's DaemonSet synced and rolled out");
    const again = await stack.preview({ diff: true });
    assert.deepEqual(again.changeSummary, { same: 5 }, again.stdout);
  });

  it("destroy leaves no runner Job and downgrades nothing", async () => {
    const destroy = await stack.destroy();
    assert.equal(destroy.summary.result, "succeeded");
    assert.deepEqual(await leftoverRunners(sim), []);
    assert.deepEqual(await versions(sim), { "cp-1": "v1.13.6", "w-1": "v1.13.6", "w-2": "v1.13.6" });
  });
});

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 30000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Signals the dynamic provider process serving programs under `dir` (found by its working directory). */
function signalProvider(dir: string, signal: NodeJS.Signals): boolean {
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      if (cmd.includes("dynamic-provider") && cwd.startsWith(path.resolve(dir))) {
        process.kill(Number(pid), signal);
        return true;
      }
    } catch {
      // process gone or not ours
    }
  }
  return false;
}
