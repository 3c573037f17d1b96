// What a pipeline relies on, end to end with the real pulumi CLI on the sim: every wait ends at its bound (a check that
// never finishes ends the update at holdTimeout), a cancelled pipeline stops before the next node (SIGTERM to the CLI
// alone, the CLI killed outright, `talos-gate stop` from another shell), and previews are clean: no input change —
// in whatever spelling — previews no change, a credentials rotation updates state without a rollout, and problems the
// rollout survives show as warnings on the resource's row.
import * as assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { EngineEvent, Stack } from "@pulumi/pulumi/automation";
import * as YAML from "yaml";
import { createKubeApi } from "../../provider/kube";
import { packageRoot } from "../../sim/tools";
import type { SimCluster } from "../../sim/cluster";
import { Cluster, Healthcheck, TalosUpgrade } from "../../sdk";
import { killCli, Proc, processesUnder, waitGone } from "../support/processes";
import { directoryStack, inlineStack, PulumiEnv, pulumiEnv, stateText } from "../support/pulumi";
import { coreApi, countBoots, credentialLeaks, leftoverRunners, setGate, testSim, nodeVersions } from "../support/sim";

const FROM = "v1.12.4";

/** The gate's RBAC and Job: the check reads ConfigMap default/talos-gate-demo with its own service account. */
const GATE_RBAC = [
  { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "talos-gate-demo", namespace: "default" } },
  {
    apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: "talos-gate-demo", namespace: "default" },
    rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: ["talos-gate-demo"], verbs: ["get"] }],
  },
  {
    apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name: "talos-gate-demo", namespace: "default" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "talos-gate-demo" },
    subjects: [{ kind: "ServiceAccount", name: "talos-gate-demo", namespace: "default" }],
  },
];

function jobObject(script: string): Record<string, unknown> {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          serviceAccountName: "talos-gate-demo",
          restartPolicy: "Never",
          containers: [{ name: "check", image: "bitnami/kubectl", command: ["sh", "-c", script] }],
        },
      },
    },
  };
}

/** The pipeline's stack as a directory program (index.js), its inputs in knobs.json beside it. */
const DIRECTORY_PROGRAM = `
const pulumi = require("@pulumi/pulumi");
const { Cluster, Healthcheck, TalosUpgrade } = require("talos-gate");
const k = require("./knobs.json");
const cluster = new Cluster("sim", {
  clusterName: "sim", kubeconfig: pulumi.secret(k.kubeconfig), talosconfig: pulumi.secret(k.talosconfig),
  manifests: [{ name: "gate-rbac", inline: k.rbac }],
});
const gate = new Healthcheck("gate", { cluster, name: "gate", interval: "5s", job: k.job });
const upgrade = new TalosUpgrade("talos", { cluster, version: k.version, healthchecks: [gate], holdTimeout: "5m", nodeTimeout: "2m" });
exports.status = upgrade.status;
`;

const MARKER = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "spell-marker", namespace: "default" }, data: { a: "1" } };

const GATE_SCRIPT = [
  "open=$(kubectl -n default get configmap talos-gate-demo -o jsonpath='{.data.open}')",
  'if [ "$open" != "true" ]; then echo "gate is closed: open=${open:-<unset>}" >&2; exit 1; fi',
].join("\n");

/** The same Job as a YAML string (another spelling of `jobObject(script)`). */
function jobYaml(script: string): string {
  return (require("yaml") as typeof import("yaml")).stringify(jobObject(script));
}

interface Knobs {
  version: string;
  holdTimeout?: string;
  nodeTimeout?: string;
  /** The gate's script; "sleep" makes a check that never finishes. */
  script?: string;
  clusterName?: string;
  kubeconfig?: string;
}

describe("e2e: bounded, cancellable, clean (the real pulumi CLI on the sim)", function () {
  this.timeout(900000);
  let sim: SimCluster;
  let env: PulumiEnv;
  let stack: Stack;
  let knobs: Knobs;
  let boots: Map<string, number>;

  before(async () => {
    sim = await testSim({ controlPlanes: 1, workers: 2, version: FROM });
    await setGate(sim, true);
    env = await pulumiEnv();
    knobs = { version: "v1.13.2" };
    stack = await inlineStack(env, "pipeline", async () => {
      const cluster = new Cluster("sim", {
        clusterName: knobs.clusterName ?? "sim",
        kubeconfig: pulumi.secret(knobs.kubeconfig ?? sim.kubeconfig),
        talosconfig: pulumi.secret(sim.talosconfig),
        manifests: [{ name: "gate-rbac", inline: GATE_RBAC }],
      });
      const gate = new Healthcheck("gate", { cluster, name: "gate", interval: "5s", job: jobObject(knobs.script ?? GATE_SCRIPT) });
      const upgrade = new TalosUpgrade("talos", {
        cluster, version: knobs.version, healthchecks: [gate],
        holdTimeout: knobs.holdTimeout ?? "5m", nodeTimeout: knobs.nodeTimeout ?? "2m",
      });
      // Every key of a resource's props is an output at run time: the stored kubeconfig, to check a rotation.
      return { status: upgrade.status, kubeconfig: (upgrade as unknown as { kubeconfig: pulumi.Output<string> }).kubeconfig };
    });
    boots = countBoots(sim);
  });

  const versions = () => nodeVersions(sim);

  async function leaseHolder(cluster = "sim"): Promise<string | undefined> {
    const kube = createKubeApi(sim.kubeconfig);
    try {
      return (await kube.runningRollout(cluster))?.holder;
    } finally {
      await kube.close();
    }
  }

  function upgradeState(state: string): { outputs: any; initErrors?: string[] } {
    return JSON.parse(state).resources.find((r: { type: string }) => r.type.endsWith("TalosUpgrade"));
  }

  it("a check that never finishes ends the update at holdTimeout, saying it was waiting to complete", async function () {
    // Before the fix this `up` never ended (it ran for 13 minutes until killed): a hang fails the test.
    this.timeout(180_000);
    knobs = { version: "v1.13.2", holdTimeout: "10s", script: "sleep 100000" };
    const output: string[] = [];
    let error = "";
    await assert.rejects(stack.up({ onOutput: (o) => output.push(o) }), (err: Error) => {
      assert.match(err.message, /held the upgrade longer than holdTimeout 10s before wave 1\/3: "cluster-sim-gate": waiting to complete/);
      error = err.message;
      return true;
    });
    const res = upgradeState(await stateText(stack));
    assert.equal(res.outputs.status.phase, "Failed", "partial state is saved");
    assert.deepEqual(await versions(), { "cp-1": FROM, "w-1": FROM, "w-2": FROM }, "no node touched");
    assert.deepEqual(await leftoverRunners(sim), [], "the runner Job of the cut-short check is deleted");
    assert.equal(await leaseHolder(), undefined, "the lease is released");
    // Secrets after a failed run: nothing of the kubeconfig or talosconfig in the state file, the error, the update's
    // output or the mirrored status.
    const mirror = await coreApi(sim).readNamespacedConfigMap({ name: "talos-gate-status-sim", namespace: "kube-system" });
    assert.deepEqual(credentialLeaks(sim, {
      state: fs.readFileSync(path.join(env.dir, "state", ".pulumi", "stacks", "pipeline", "test.json"), "utf8"),
      error, output: output.join(""), "status.error": String(res.outputs.status.error ?? ""), mirror: JSON.stringify(mirror.data),
    }), []);
  });

  it("SIGTERM to the pulumi CLI alone stops the rollout before the next node; the next up resumes", async () => {
    knobs = { version: "v1.13.2" };
    boots.clear();
    let signalled = false;
    await assert.rejects(stack.up({
      onOutput: (o) => {
        if (!signalled && / cp-1: (rebooting|waiting)/.test(o)) signalled = signalCli(env.dir, "SIGTERM");
      },
    }), (err: Error) => {
      assert.match(err.message, /upgrade cancelled before node w-1 \(1\/3 machines on the target\): the Pulumi engine cancelled the update/);
      return true;
    });
    assert.ok(signalled, "the CLI process was found and sent SIGTERM");
    const after = await versions();
    assert.equal(after["cp-1"], "v1.13.2", "the node in flight finished");
    assert.deepEqual([after["w-1"], after["w-2"]], [FROM, FROM], "no further node was touched");
    assert.equal(upgradeState(await stateText(stack)).outputs.status.phase, "Failed", "resumable partial state");
    const up = await stack.up();
    assert.equal(up.outputs.status.value.phase, "Done");
    assert.deepEqual(await versions(), { "cp-1": "v1.13.2", "w-1": "v1.13.2", "w-2": "v1.13.2" });
    assert.deepEqual(Object.fromEntries(boots), { "cp-1": 1, "w-1": 1, "w-2": 1 }, "no node upgraded twice");
  });

  it("the CLI killed outright: nothing started for the update outlives it; the provider stops before the next node", async () => {
    // A directory program, as a pipeline runs one: only then does the CLI start a language host, and it the program.
    const killedStack = await directoryStack(env, "pipeline", "killed", {
      "index.js": DIRECTORY_PROGRAM,
      "knobs.json": JSON.stringify({
        kubeconfig: sim.kubeconfig, talosconfig: sim.talosconfig, rbac: GATE_RBAC, job: jobObject(GATE_SCRIPT), version: "v1.13.3",
      }),
    });
    boots.clear();
    let killed: { at: number; procs: Proc[] } | undefined;
    await assert.rejects(killedStack.up({
      onOutput: (o) => {
        if (!killed && / cp-1: (rebooting|waiting)/.test(o)) killed = killCli(killedStack.workspace.workDir!);
      },
    }));
    assert.ok(killed && killed.procs.length > 0, "the CLI process was found and killed");
    const started = killed.procs.map((p) => p.cmd).join("\n");
    for (const what of [/pulumi-language-nodejs/, /@pulumi\/pulumi\/cmd\/run/, /dynamic-provider/]) {
      assert.match(started, what, "the update's language host, program and provider were recorded");
    }
    const left = await waitGone(killed.procs, killed.at + 10_000 - Date.now());
    assert.deepEqual(left.map((p) => `${p.pid} ${p.cmd}`), [], "no process started for the update is left 10 s after the CLI was killed");
    // The killed CLI left its lock (and a pending operation): what a user does next is `pulumi cancel`.
    await killedStack.cancel();
    const after = await versions();
    assert.equal(after["cp-1"], "v1.13.3", "the node in flight finished");
    assert.deepEqual([after["w-1"], after["w-2"]], ["v1.13.2", "v1.13.2"], "it stopped before the next node");
    const mirrored = await mirroredStatus(sim);
    assert.match(mirrored.error, /cancelled before node w-1.*the Pulumi CLI is gone/);
    assert.equal(await leaseHolder(), undefined, "the lease is released");
    const up = await killedStack.up();
    assert.equal(up.outputs.status.value.phase, "Done");
    assert.deepEqual(Object.fromEntries(boots), { "cp-1": 1, "w-1": 1, "w-2": 1 }, "no node upgraded twice");
  });

  it("talos-gate stop from another shell stops a held rollout; the next up is not stopped by the old request", async () => {
    await setGate(sim, false);
    knobs = { version: "v1.13.4" };
    boots.clear();
    let stopper: Promise<{ code: number; out: string }> | undefined;
    const kubeconfigFile = path.join(env.dir, "kubeconfig");
    fs.writeFileSync(kubeconfigFile, sim.kubeconfig);
    await assert.rejects(stack.up({
      onOutput: (o) => {
        if (!stopper && /gate held (\S+ )?by "cluster-sim-gate": gate is closed/.test(o)) {
          stopper = talosGate(["stop", "--kubeconfig", kubeconfigFile, "--cluster", "sim", "--timeout", "2m"]);
        }
      },
    }), (err: Error) => {
      assert.match(err.message, /upgrade cancelled before node cp-1 \(0\/3 machines on the target\): stop requested by \S+@\S+ at \S+ \(talos-gate stop\)/);
      return true;
    });
    assert.ok(stopper, "talos-gate stop was run while the gate held");
    const stop = await stopper!;
    assert.equal(stop.code, 0, stop.out);
    assert.match(stop.out, /asked the rollout of cluster sim \(held by "pulumi:pipeline\/test\/talos"\) to stop before its next node/);
    assert.match(stop.out, /the rollout of cluster sim stopped: upgrade cancelled before node cp-1/);
    assert.deepEqual(Object.fromEntries(boots), {}, "no node touched");
    const again = await talosGate(["stop", "--kubeconfig", kubeconfigFile, "--cluster", "sim"]);
    assert.equal(again.code, 0);
    assert.match(again.out, /no rollout is running on cluster sim: nothing to stop/);
    await setGate(sim, true);
    const up = await stack.up();
    assert.equal(up.outputs.status.value.phase, "Done");
    assert.deepEqual(await versions(), { "cp-1": "v1.13.4", "w-1": "v1.13.4", "w-2": "v1.13.4" });
  });

  it("a credentials-only change stores the new credentials and rolls nothing", async () => {
    const rotated = `${sim.kubeconfig}\n# rotated ${Date.now()}\n`;
    knobs = { version: "v1.13.4", kubeconfig: rotated };
    boots.clear();
    const preview = await stack.preview();
    assert.equal(preview.changeSummary.update, 3, "Cluster, Healthcheck and TalosUpgrade take the new kubeconfig");
    const lines: string[] = [];
    const up = await stack.up({ onOutput: (o) => lines.push(o) });
    assert.equal(up.outputs.status.value.phase, "Done");
    assert.doesNotMatch(lines.join(""), /upgrading|gate before wave/, "no rollout ran");
    assert.match(lines.join(""), /credentials updated/);
    assert.deepEqual(Object.fromEntries(boots), {});
    const stored = (await stack.outputs()).kubeconfig;
    assert.ok(stored.secret, "still a secret");
    assert.ok(String(stored.value).includes("# rotated"), "the state holds the new kubeconfig");
    await stack.preview({ expectNoChanges: true });
  });

  it("a cluster name Kubernetes cannot use is rejected at preview, naming the field and a valid name", async () => {
    for (const [name, suggestion] of [["Prod", "prod"], ["prod_eu", "prod-eu"]]) {
      knobs = { version: "v1.13.4", clusterName: name };
      await assert.rejects(stack.preview(), (err: Error) => {
        assert.match(err.message, new RegExp(`Cluster resource 'sim': property clusterName value \\{${name}\\} has a problem: clusterName "${name}" cannot name the cluster's Kubernetes objects`));
        assert.match(err.message, new RegExp(`e\\.g\\. "${suggestion}"`));
        return true;
      });
    }
    knobs = { version: "v1.13.4" };
  });

  it("a status mirror the rollout cannot write is a warning on the TalosUpgrade's row, and the rollout goes on", async () => {
    // An immutable ConfigMap in the status mirror's place: every write is refused, the rollout must not care.
    const core = coreApi(sim);
    await core.deleteNamespacedConfigMap({ name: "talos-gate-status-sim", namespace: "kube-system" }).catch(() => undefined);
    await core.createNamespacedConfigMap({
      namespace: "kube-system",
      body: { metadata: { name: "talos-gate-status-sim" }, immutable: true, data: {} },
    });
    try {
      knobs = { version: "v1.13.5" };
      const events: EngineEvent[] = [];
      const up = await stack.up({ onEvent: (e) => events.push(e) });
      assert.equal(up.outputs.status.value.phase, "Done");
      const warnings = events.map((e) => e.diagnosticEvent).filter((d) => d?.severity === "warning");
      const mirror = warnings.find((d) => /could not mirror|status/.test(d!.message) && /immutable/.test(d!.message));
      assert.ok(mirror, `a warning about the mirror; warnings: ${JSON.stringify(warnings)}`);
      assert.match(mirror!.urn ?? "", /::pulumi-nodejs:dynamic\/talos-gate:TalosUpgrade::talos$/, "on the resource's row");
      assert.doesNotMatch(JSON.stringify(warnings), /BEGIN|client-key-data|certificate-authority-data/, "no secrets");
    } finally {
      await core.deleteNamespacedConfigMap({ name: "talos-gate-status-sim", namespace: "kube-system" }).catch(() => undefined);
    }
  });

  it("no input change previews no change, whatever the spelling; a label change on a check is no upgrade", async () => {
    type Spelling = { a: object; b: object; c: object; version: string; hold?: string; node?: string; manifests: "yaml" | "objects"; labels?: Record<string, string> };
    let sp: Spelling;
    const spelled = await inlineStack(env, "spellings", async () => {
      const cluster = new Cluster("sim", {
        clusterName: "spell",
        kubeconfig: pulumi.secret(sim.kubeconfig),
        talosconfig: pulumi.secret(sim.talosconfig),
        manifests: [{ name: "marker", inline: sp.manifests === "yaml" ? (require("yaml") as typeof import("yaml")).stringify(MARKER) : [MARKER] }],
      });
      const a = new Healthcheck("a", { cluster, name: "a", ...sp.a, ...(sp.labels ? { labels: sp.labels } : {}) });
      const b = new Healthcheck("b", { cluster, name: "b", ...sp.b });
      const c = new Healthcheck("c", { cluster, name: "c", ...sp.c });
      new TalosUpgrade("talos", {
        cluster, version: sp.version, healthchecks: [a, b, c],
        ...(sp.hold ? { holdTimeout: sp.hold } : {}), ...(sp.node ? { nodeTimeout: sp.node } : {}),
      });
    });
    // A file-based check, as a program keeps it beside its index.ts.
    fs.mkdirSync(path.join(env.dir, "programs", "spellings-test", "checks"));
    fs.writeFileSync(path.join(env.dir, "programs", "spellings-test", "checks", "c.yaml"), jobYaml("true"));
    const relFile = "checks/c.yaml";
    sp = {
      a: { interval: "1m", job: jobYaml("true") }, b: { job: jobObject("true") }, c: { file: relFile },
      version: "1.13.5", hold: "1h", manifests: "yaml",
    };
    const up = await spelled.up();
    assert.equal(up.summary.result, "succeeded");
    await spelled.preview({ expectNoChanges: true });
    // Every input in another spelling of the same meaning.
    sp = {
      a: { interval: "60s", job: jobObject("true") }, b: { interval: "30s", job: jobYaml("true") }, c: { job: jobObject("true") },
      version: "v1.13.5", hold: "60m", node: "15m", manifests: "objects",
    };
    await spelled.preview({ expectNoChanges: true });
    // A label on one check changes that check only, not the upgrade.
    sp = { ...sp, labels: { team: "storage" } };
    const labelled = await spelled.preview();
    assert.deepEqual(labelled.changeSummary, { same: 5, update: 1 }, "only Healthcheck a");
    // The content of a check is what the upgrade depends on.
    sp = { ...sp, labels: undefined, b: { job: jobObject("exit 0") } };
    const content = await spelled.preview();
    assert.deepEqual(content.changeSummary, { same: 4, update: 2 }, "Healthcheck b and the TalosUpgrade");
  });

  it("a whole `pulumi up` runs with a kubeconfig bound to exactly the shipped role (`talos-gate rbac`): Done, nothing refused", async () => {
    // The pipeline's identity as the README sets it up: a ServiceAccount, the output of `talos-gate rbac` applied by an
    // administrator with kubectl, and a kubeconfig holding the account's token instead of admin credentials.
    const admin = ["--kubeconfig", sim.kubeconfigPath];
    const kubectl = (args: string[], input?: string) =>
      execFileSync("kubectl", [...admin, ...args], { encoding: "utf8", ...(input ? { input } : {}) });
    kubectl(["create", "namespace", "ci"]);
    kubectl(["-n", "ci", "create", "serviceaccount", "pipeline"]);
    const role = execFileSync(process.execPath, [path.join(packageRoot, "bin", "talos-gate"), "rbac", "--service-account", "ci/pipeline"], { encoding: "utf8" });
    kubectl(["apply", "-f", "-"], role);
    const token = kubectl(["-n", "ci", "create", "token", "pipeline"]).trim();
    const cfg = YAML.parse(sim.kubeconfig) as { users: { name: string; user: unknown }[] };
    const kubeconfig = YAML.stringify({ ...cfg, users: [{ name: cfg.users[0]!.name, user: { token } }] });
    const current = (await versions())["cp-1"]!;
    const next = current.replace(/\d+$/, (patch) => String(Number(patch) + 1));
    const rbacStack = await inlineStack(env, "rbac", async () => {
      // No supporting manifests: creating RBAC for a check needs rights beyond the role (the README says to add them).
      const cluster = new Cluster("sim", { clusterName: "sim", kubeconfig: pulumi.secret(kubeconfig), talosconfig: pulumi.secret(sim.talosconfig) });
      const check = new Healthcheck("ok", {
        cluster, name: "ok", interval: "5s",
        job: { apiVersion: "batch/v1", kind: "Job", spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", containers: [{ name: "check", image: "busybox", command: ["true"] }] } } } },
      });
      const upgrade = new TalosUpgrade("talos", { cluster, version: next, healthchecks: [check], holdTimeout: "5m", nodeTimeout: "2m" });
      return { status: upgrade.status };
    });
    const output: string[] = [];
    const up = await rbacStack.up({ onOutput: (o) => output.push(o) });
    assert.equal(up.outputs.status.value.phase, "Done", output.join(""));
    assert.deepEqual(await versions(), { "cp-1": next, "w-1": next, "w-2": next });
    assert.deepEqual(output.join("").split("\n").filter((l) => /forbidden|\b403\b/i.test(l)), [], "nothing the rollout asked for was refused");
  });
  // No `pulumi destroy` of this file's stacks at its end (~3 CPU-s and ~5 s each, nothing asserted): their state goes
  // with the Pulumi environment's folder and what they made in the cluster with the sim's reset (tests/support/sim.ts).
});

/** Signals the pulumi CLI running `up` under `dir`, and nothing else (what `timeout` and CI runners do). */
function signalCli(dir: string, signal: NodeJS.Signals): boolean {
  const pids = processesUnder(dir, (cmd) => /(^|\/)pulumi up /.test(cmd));
  for (const pid of pids) process.kill(pid, signal);
  return pids.length > 0;
}

function talosGate(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(packageRoot, "bin", "talos-gate"), ...args], { timeout: 300_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

async function mirroredStatus(sim: SimCluster): Promise<{ error: string; step: string }> {
  const kube = createKubeApi(sim.kubeconfig);
  try {
    return (await kube.readStatus("sim")) as { error: string; step: string };
  } finally {
    await kube.close();
  }
}
