// `talos-gate plan` and `talos-gate status` as a user runs them (the real command in a child process, exit codes,
// stdout/stderr) against one simulated cluster (1 control plane, 2 workers): before any run, after a run cancelled
// mid-way (mixed versions → a change back is a revert), and after a completed run. The tests run in order.
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import * as YAML from "yaml";
import { RolloutError, runRollout } from "../../../provider/rollout/run";
import type { SimCluster } from "../../../sim/cluster";
import { adapters, FROM, runOptions, sim, TARGET } from "../rollout/helpers";

const CLUSTER = "clitest";
const MAIN = path.join(__dirname, "..", "..", "..", "cli", "main.js");

interface Result { code: number | null; stdout: string; stderr: string }

/** Runs `talos-gate <args>` (asynchronously: the sim's Talos nodes live in this process and must keep answering). */
function talosGate(args: string[], env: Record<string, string | undefined> = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const e: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: undefined, TALOSCONFIG: undefined, ...env };
    for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
    const child = spawn(process.execPath, ["--no-deprecation", MAIN, ...args], { env: e, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("integration: cli — talos-gate plan and status against the sim", function () {
  this.timeout(180000);
  let s: SimCluster;

  before(async () => {
    s = await sim({ controlPlanes: 1, workers: 2 });
  });

  after(async () => {
    await s?.stop();
  });

  describe("before any rollout", () => {
    it("status: no status yet → exit 1 saying to run pulumi up", async () => {
      const named = await talosGate(["status", "--kubeconfig", s.kubeconfigPath, "--cluster", CLUSTER]);
      assert.equal(named.code, 1);
      assert.equal(named.stdout, "");
      assert.equal(named.stderr, `talos-gate status: no upgrade status for cluster ${CLUSTER} yet: run \`pulumi up\` first\n`);
      const any = await talosGate(["status"], { KUBECONFIG: s.kubeconfigPath });
      assert.equal(any.code, 1);
      assert.match(any.stderr, /no upgrade status in this cluster yet .*run `pulumi up` first/);
    });

    it("stop and status print what others wrote in the cluster without terminal escapes", async () => {
      const kc = new k8s.KubeConfig();
      kc.loadFromString(s.kubeconfig);
      const evil = "\u001b]0;owned\u0007\u001b[2J\u009b2Jx";
      const now = new Date();
      await kc.makeApiClient(k8s.CoordinationV1Api).createNamespacedLease({ namespace: "kube-system", body: {
        metadata: { name: "talos-gate-escapes" },
        spec: { holderIdentity: `ci${evil}`, leaseDurationSeconds: 60, acquireTime: new k8s.V1MicroTime(now.getTime()), renewTime: new k8s.V1MicroTime(now.getTime()) },
      } });
      await kc.makeApiClient(k8s.CoreV1Api).createNamespacedConfigMap({ namespace: "kube-system", body: {
        metadata: { name: "talos-gate-status-escapes", labels: { "talos-gate.dev/cluster": "escapes" } },
        data: { "status.json": JSON.stringify({ cluster: "escapes", phase: "Upgrading", status: "", step: `held${evil}`, error: "", lastUpgradeVersion: "", currentUpgradeVersion: "", machines: [], healthchecks: [] }) },
      } });
      // eslint-disable-next-line no-control-regex
      const raw = /[\u001b\u0007\u009b]/;
      const stop = await talosGate(["stop", "--kubeconfig", s.kubeconfigPath, "--cluster", "escapes", "--no-wait"]);
      assert.equal(stop.code, 0, stop.stderr);
      assert.match(stop.stdout, /held by "ci2Jx"/);
      assert.doesNotMatch(stop.stdout, raw);
      for (const args of [[], ["--json"]]) {
        const status = await talosGate(["status", "--kubeconfig", s.kubeconfigPath, "--cluster", "escapes", ...args]);
        assert.equal(status.code, 0, status.stderr);
        assert.match(status.stdout, /held/);
        assert.doesNotMatch(status.stdout, raw);
      }
      // Gone again: the later tests find this file's one cluster without --cluster.
      await kc.makeApiClient(k8s.CoreV1Api).deleteNamespacedConfigMap({ name: "talos-gate-status-escapes", namespace: "kube-system" });
      await kc.makeApiClient(k8s.CoordinationV1Api).deleteNamespacedLease({ name: "talos-gate-escapes", namespace: "kube-system" });
    });

    it("status and plan: a missing or unreadable kubeconfig is a clear error", async () => {
      const none = await talosGate(["status"]);
      assert.equal(none.code, 1);
      assert.equal(none.stderr, "talos-gate status: no kubeconfig: pass --kubeconfig <file> or set KUBECONFIG to the kubeconfig of the workload cluster\n");
      const missing = path.join(os.tmpdir(), "talos-gate-no-such-kubeconfig");
      const bad = await talosGate(["plan", "--version", TARGET], { KUBECONFIG: missing });
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, new RegExp(`^talos-gate plan: cannot read kubeconfig ${missing}: .*no such file or directory.*; pass the path of a readable kubeconfig file with --kubeconfig\\n$`));
      const garbage = path.join(s.dir, "garbage-kubeconfig");
      fs.writeFileSync(garbage, "this: [is not a kubeconfig");
      const invalid = await talosGate(["status", "--kubeconfig", garbage]);
      assert.equal(invalid.code, 1);
      assert.match(invalid.stderr, /^talos-gate status: kubeconfig: cannot be read/);
      assert.ok(!/\n\s+at /.test(invalid.stderr), "no stack trace");
    });

    it("plan: control planes first, then workers with the given parallelism and order, gated by the checks", async () => {
      const r = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath, "--talosconfig", s.talosconfigPath, "--version", TARGET,
        "--worker-parallelism", "2", "--order", "w-2,w-1", "--healthcheck-ids", "cluster-clitest-ceph,cluster-clitest-gate"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, [
        "upgrade 3 of 3 machines to v1.13.2 in 2 waves",
        "1. cp-1 (controlplane) v1.12.4 → v1.13.2, gated by: cluster-clitest-ceph, cluster-clitest-gate",
        "2. w-2, w-1 (worker) v1.12.4 → v1.13.2, gated by: cluster-clitest-ceph, cluster-clitest-gate",
        "",
      ].join("\n"));
      assert.equal(r.stderr, "");
      const json = await talosGate(["plan", "--version", TARGET, "--json"], { KUBECONFIG: s.kubeconfigPath });
      assert.equal(json.code, 0, json.stderr);
      const plan = JSON.parse(json.stdout);
      assert.equal(plan.mode, "upgrading");
      assert.deepEqual(plan.waves.map((w: { machines: { name: string }[] }) => w.machines.map((m) => m.name)), [["cp-1"], ["w-1"], ["w-2"]]);
    });

    it("plan: bad input is refused with the reason (unknown node in --order, bad version, unknown option)", async () => {
      const order = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath, "--version", TARGET, "--order", "w-9"]);
      assert.equal(order.code, 1);
      assert.equal(order.stderr, 'talos-gate plan: strategy.order names node "w-9", which is not in the cluster; known nodes: cp-1, w-1, w-2\n');
      const version = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath, "--version", "latest"]);
      assert.equal(version.code, 2);
      assert.match(version.stderr, /invalid target version "latest": expected a semantic version/);
      const option = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath, "--versio", TARGET]);
      assert.equal(option.code, 2);
      assert.match(option.stderr, /unknown option --versio; see 'talos-gate plan --help'/);
      const noVersion = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath]);
      assert.equal(noVersion.code, 2);
      assert.match(noVersion.stderr, /--version is required/);
    });
  });

  describe("after a rollout cancelled mid-way", () => {
    before(async () => {
      const { kube, talos } = adapters(s);
      const abort = new AbortController();
      await assert.rejects(
        runRollout(kube, talos, runOptions(CLUSTER, {
          lastUpgradeVersion: FROM, signal: abort.signal,
          onProgress: (l) => { if (l.includes("node cp-1: back on")) abort.abort(); },
        })),
        RolloutError,
      );
      await kube.flush();
    });

    it("status prints the mirrored status like omnictl (phase 3 Failed, the reason, versions, machines)", async () => {
      const r = await talosGate(["status", "--kubeconfig", s.kubeconfigPath]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^metadata:\n {2}namespace: kube-system\n {2}type: TalosUpgradeStatuses\.talos-gate\.dev\n {2}id: clitest\n {2}version: \d+\n/);
      assert.match(r.stdout, /\nspec:\n {2}phase: 3 # Failed\n/);
      const doc = YAML.parse(r.stdout);
      assert.equal(doc.spec.phase, 3);
      assert.equal(doc.spec.phasename, "Failed");
      assert.match(doc.spec.error, /^upgrade cancelled before node w-1 \(1\/3 machines on the target\)/);
      assert.equal(doc.spec.lastupgradeversion, FROM);
      assert.equal(doc.spec.currentupgradeversion, TARGET);
      assert.deepEqual(doc.spec.upgradeversions, []);
      assert.deepEqual(doc.spec.machines.map((m: { name: string; state: string }) => [m.name, m.state]), [["cp-1", "done"], ["w-1", "pending"], ["w-2", "pending"]]);
    });

    it("plan back to the last converged version is an ungated revert of the mixed node", async () => {
      const r = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath, "--talosconfig", s.talosconfigPath, "--version", FROM,
        "--healthcheck-ids", "cluster-clitest-ceph"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, [
        "revert 1 of 3 machines to v1.12.4 in 1 wave, 2 already on v1.12.4, not gated by your checks (reverting to the last converged version; etcd is still asked before each control plane)",
        `(last converged version ${FROM}, from the upgrade status of cluster ${CLUSTER})`,
        "1. cp-1 (controlplane) v1.13.2 → v1.12.4, not gated by your checks",
        "skip w-1 (worker): already on v1.12.4",
        "skip w-2 (worker): already on v1.12.4",
        "",
      ].join("\n"));
      const forward = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath, "--version", TARGET, "--cluster", CLUSTER]);
      assert.equal(forward.code, 0, forward.stderr);
      assert.match(forward.stdout, /^upgrade 2 of 3 machines to v1\.13\.2 in 2 waves, 1 already on v1\.13\.2\n/);
    });
  });

  describe("after a completed rollout", () => {
    before(async () => {
      const { kube, talos } = adapters(s);
      await runRollout(kube, talos, runOptions(CLUSTER, { lastUpgradeVersion: FROM }));
      await kube.flush();
    });

    it("status: phase 2 Done, lastupgradeversion = target, empty status and step; --json is the same document", async () => {
      const y = await talosGate(["status", "--cluster", CLUSTER], { KUBECONFIG: s.kubeconfigPath });
      assert.equal(y.code, 0, y.stderr);
      const doc = YAML.parse(y.stdout);
      assert.deepEqual(
        { phase: doc.spec.phase, error: doc.spec.error, step: doc.spec.step, status: doc.spec.status, last: doc.spec.lastupgradeversion, current: doc.spec.currentupgradeversion },
        { phase: 2, error: "", step: "", status: "", last: TARGET, current: "" },
      );
      // talos-gate's addition: what the rollout asked of the API server (its port's counters at its last status write).
      assert.deepEqual(Object.keys(doc.spec.api), ["requests", "watches", "bytesread"]);
      assert.ok(doc.spec.api.requests > 0 && doc.spec.api.watches > 0 && doc.spec.api.bytesread > 0, JSON.stringify(doc.spec.api));
      const j = await talosGate(["status", "--cluster", CLUSTER, "--json"], { KUBECONFIG: s.kubeconfigPath });
      assert.equal(j.code, 0, j.stderr);
      assert.deepEqual(JSON.parse(j.stdout), doc);
    });

    it("plan: nothing to do", async () => {
      const r = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath, "--version", TARGET]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^nothing to do: 3 machines already on v1\.13\.2\n/);
    });
  });
});
