// `talos-gate plan` and `talos-gate status` as a user runs them (the real command in a child process, exit codes,
// stdout/stderr) against one simulated cluster (1 control plane, 2 workers): before any run, after a run cancelled
// mid-way (mixed versions → a change back is a revert), and after a completed run (gated by a check that holds once):
// its status as a table and under --watch, and its report as Markdown and as an HTML page in a real browser. The tests
// run in order.
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import * as YAML from "yaml";
import { RolloutError, runRollout } from "../../../provider/rollout/run";
import type { SimCluster } from "../../../sim/cluster";
import { artifactPath, openFile } from "../../support/browser";
import { kubeConfigOf } from "../../support/kube";
import { adapters, FROM, runOptions, shellCheck, sim, TARGET } from "../rollout/helpers";

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

    it("status without --cluster among several rollouts' statuses names each with its kind (TalosUpgrade, KubernetesUpgrade)", async () => {
      const core = kubeConfigOf(s).makeApiClient(k8s.CoreV1Api);
      const names = ["several", "several.kubernetes"];
      for (const name of names) {
        await core.createNamespacedConfigMap({ namespace: "kube-system", body: {
          metadata: { name: `talos-gate-status-${name}`, labels: { "talos-gate.dev/cluster": name } },
          data: { "status.json": JSON.stringify({ cluster: name, phase: "Done", status: "", step: "", error: "", lastUpgradeVersion: "", currentUpgradeVersion: "", machines: [], healthchecks: [] }) },
        } });
      }
      try {
        const any = await talosGate(["status"], { KUBECONFIG: s.kubeconfigPath });
        assert.equal(any.code, 1);
        assert.equal(any.stderr, "talos-gate status: the cluster has the upgrade statuses of several rollouts " +
          "(several: TalosUpgrade, several.kubernetes: KubernetesUpgrade); choose one with --cluster\n");
      } finally {
        // Gone again: the later tests find this file's one cluster without --cluster.
        for (const name of names) await core.deleteNamespacedConfigMap({ name: `talos-gate-status-${name}`, namespace: "kube-system" });
      }
    });

    it("status and plan: a missing or unreadable kubeconfig is a clear error", async () => {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-home-"));
      const none = await talosGate(["status"], { HOME: home });
      assert.equal(none.code, 1);
      assert.equal(none.stderr, "talos-gate status: no kubeconfig: pass --kubeconfig <file>, set KUBECONFIG to the kubeconfig of the " +
        `workload cluster, or put it at ${path.join(home, ".kube", "config")}\n`);
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
      // --path: the step the live nodes are in, then every later step from the one before, as preview shows them.
      const path = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath, "--version", TARGET, "--path", "v1.12.11"]);
      assert.equal(path.code, 0, path.stderr);
      assert.equal(path.stdout, [
        "path step 1/2: → v1.12.11 (from the live nodes)",
        "upgrade 3 of 3 machines to v1.12.11 in 3 waves",
        "1. cp-1 (controlplane) v1.12.4 → v1.12.11",
        "2. w-1 (worker) v1.12.4 → v1.12.11",
        "3. w-2 (worker) v1.12.4 → v1.12.11",
        "path step 2/2: → v1.13.2 (from v1.12.11)",
        "path step 2/2: → v1.13.2: every node, planned from the live cluster once the step before it is done",
        "upgrade 3 of 3 machines to v1.13.2 in 3 waves",
        "1. cp-1 (controlplane) v1.12.11 → v1.13.2",
        "2. w-1 (worker) v1.12.11 → v1.13.2",
        "3. w-2 (worker) v1.12.11 → v1.13.2",
        "",
      ].join("\n"));
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
      const path = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath, "--version", TARGET, "--path", "1.12"]);
      assert.deepEqual([path.code, path.stderr], [2, 'talos-gate plan: --path takes the intermediate Talos versions, comma-separated, e.g. --path v1.12.11; got "1.12"\n']);
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
      const r = await talosGate(["status", "--kubeconfig", s.kubeconfigPath, "-o", "yaml"]);
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

    it("status: a table of the machines above the YAML by default, the table alone with -o table", async () => {
      const r = await talosGate(["status", "--kubeconfig", s.kubeconfigPath]);
      assert.equal(r.code, 0, r.stderr);
      const [table, yaml] = r.stdout.split(/\n\n(?=metadata:)/);
      assert.match(table, /^cluster clitest: Failed, updating machines 2\/3 \(.+\)\n/);
      const lines = table.split("\n").slice(1);
      assert.match(lines[0], /^NODE +ROLE +FROM → TO +STATE +DURATION$/);
      assert.match(lines[1], /^cp-1 +controlplane +v1\.12\.4 → v1\.13\.2 +done +\d+\.\ds$/);
      assert.match(lines[2], /^w-1 +worker +v1\.12\.4 → v1\.13\.2 +pending$/);
      assert.equal(YAML.parse(yaml).spec.phasename, "Failed");
      const only = await talosGate(["status", "--kubeconfig", s.kubeconfigPath, "-o", "table"]);
      assert.equal(only.code, 0, only.stderr);
      assert.equal(only.stdout, table + "\n");
    });

    it("status finds the kubeconfig as kubectl does: $KUBECONFIG's files merged (missing ones skipped, the first value wins)", async () => {
      const sim = YAML.parse(s.kubeconfig);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-kubeconfigs-"));
      // The first file only picks a context over the second file's cluster and user; the second file's own
      // current-context names no context at all: were it taken (the last file winning), the command would fail.
      const picker = path.join(dir, "picker");
      fs.writeFileSync(picker, YAML.stringify({ apiVersion: "v1", kind: "Config", "current-context": "picked",
        contexts: [{ name: "picked", context: { cluster: sim.clusters[0].name, user: sim.users[0].name } }] }));
      const base = path.join(dir, "base");
      fs.writeFileSync(base, YAML.stringify({ ...sim, "current-context": "nowhere" }));
      const list = [path.join(dir, "missing"), picker, base].join(path.delimiter);
      const merged = await talosGate(["status", "-o", "json"], { KUBECONFIG: list });
      assert.equal(merged.code, 0, merged.stderr);
      assert.equal(JSON.parse(merged.stdout).metadata.id, CLUSTER);
      // ~/.kube/config when KUBECONFIG is unset: tests/unit/cli/kubeconfig.test.ts.
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
    /** The HTML report the Markdown test writes too. */
    const reportFile = () => path.join(s.dir, "report.html");
    before(async () => {
      const { kube, talos } = adapters(s);
      // Fails its first run (the file does not exist yet), passes afterwards: the first gate holds once.
      const flag = path.join(s.dir, "flaky-check-ran");
      const flaky = shellCheck(CLUSTER, "flaky", `if [ ! -e ${flag} ]; then touch ${flag}; echo "replicas not ready: 2/3" >&2; exit 1; fi; echo ok`, 300);
      await runRollout(kube, talos, runOptions(CLUSTER, { lastUpgradeVersion: FROM, healthchecks: [flaky] }));
      await kube.flush();
    });

    it("status: phase 2 Done, lastupgradeversion = target, empty status and step; --json is the same document", async () => {
      const y = await talosGate(["status", "--cluster", CLUSTER, "-o", "yaml"], { KUBECONFIG: s.kubeconfigPath });
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

    it("report --markdown: per node the gate wait, drain, install, reboot, back and total; per check its attempts, holds and last failure", async () => {
      // One call for both (a CLI process costs about a CPU-second): the Markdown on stdout, the page for the next test.
      const r = await talosGate(["report", "--kubeconfig", s.kubeconfigPath, "--markdown", "--html", reportFile()]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, `wrote ${reportFile()}: 3 node lanes, 1 check lane\n`);
      const md = r.stdout;
      assert.match(md, /^### talos-gate rollout of cluster clitest\n\nDone · target v1\.13\.2 · 3 machines · [\dms.]+ · started \S+Z\n/);
      assert.match(md, /\n\| node \| role \| from → to \| state \| gate wait \| drain \| install \| reboot \| back \| total \|\n/);
      const row = (node: string) => md.split("\n").find((l) => l.startsWith(`| ${node} |`))!.split(" | ").slice(1);
      const time = /^(\d+\.\ds|\d+m\d+s)$/; // a phase past a minute on a loaded machine reads "1m2s"
      for (const node of ["w-1", "w-2"]) {
        const [role, versions, state, ...times] = row(node);
        assert.deepEqual([role, versions, state], ["worker", "v1.12.4 → v1.13.2", "done"], node);
        // Every phase of the LifecycleService path was seen, each with its time.
        times[times.length - 1] = times[times.length - 1].replace(/ \|$/, "");
        assert.equal(times.length, 6);
        for (const t of times) assert.match(t, time, `${node}: ${times.join(", ")}`);
      }
      assert.deepEqual(row("cp-1").slice(0, 3), ["controlplane", "v1.13.2 → v1.13.2", "skipped"], "cp-1 was upgraded by the cancelled run");
      assert.match(md, /\n\| cluster-clitest-flaky \| PASSED \| 3 \| 1 \([\d.]+s\) \| — \|\n/);
    });

    it("report --html: one self-contained page that loads in a real browser without an error, with a lane per node and per check, and a screenshot", async function () {
      this.timeout(120_000);
      const { page, errors, requests } = await openFile(reportFile());
      const lanes = await page.$$eval("g.node-lane", (gs) => gs.map((g) => ({
        node: g.getAttribute("data-node"),
        phases: [...g.querySelectorAll("g.span")].map((sp) => sp.getAttribute("data-phase")),
        widths: [...g.querySelectorAll("g.span rect")].map((rc) => rc.getBoundingClientRect().width),
      })));
      assert.deepEqual(lanes.map((l) => l.node), ["w-1", "w-2", "cp-1"]);
      for (const l of lanes.slice(0, 2)) {
        assert.deepEqual([...l.phases].sort(), ["back", "drain", "gate", "install", "reboot"], `${l.node}: ${l.phases}`);
        assert.ok(l.widths.every((w) => w >= 2), `${l.node}: every span is drawn (${l.widths})`);
      }
      assert.deepEqual(lanes[2].phases, [], "cp-1 (skipped) has no span");
      const checks = await page.$$eval("g.check-lane", (gs) => gs.map((g) => [g.getAttribute("data-check"), g.querySelectorAll('g.span[data-phase="hold"]').length]));
      assert.deepEqual(checks, [["cluster-clitest-flaky", 1]]);
      assert.equal(await page.locator(".legend li").count(), 6);
      assert.ok((await page.locator("text.tick").count()) >= 4, "an axis with ticks");
      const shot = artifactPath("report-timeline.png");
      await page.screenshot({ path: shot, fullPage: true });
      assert.ok(fs.statSync(shot).size > 10_000, `a screenshot at ${shot}`);
      assert.deepEqual(errors, []);
      assert.deepEqual(requests, [], "the page fetches nothing");
      await page.context().close();
    });

    it("status --watch prints the status again on each change of the mirror (a watch), until interrupted", async () => {
      const e: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: s.kubeconfigPath };
      const child = spawn(process.execPath, ["--no-deprecation", MAIN, "status", "--watch", "-o", "json"], { env: e, stdio: ["ignore", "pipe", "pipe"] });
      const frames: Array<{ at: number; doc: { spec: { step: string } } }> = [];
      let buffered = "", stderr = "";
      let wake: (() => void) | undefined;
      child.stdout.on("data", (d) => {
        buffered += d;
        for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
          frames.push({ at: Date.now(), doc: JSON.parse(buffered.slice(0, i)) });
          buffered = buffered.slice(i + 1);
          wake?.();
        }
      });
      child.stderr.on("data", (d) => (stderr += d));
      const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
      const frame = async (n: number) => {
        const bound = setTimeout(() => wake?.(), 30_000);
        while (frames.length < n && Date.now() - start < 30_000) await new Promise<void>((r) => (wake = r));
        clearTimeout(bound);
        assert.ok(frames.length >= n, `frame ${n} within 30 s; stderr: ${stderr}`);
      };
      const start = Date.now();
      try {
        await frame(1);
        assert.equal(frames[0].doc.spec.step, "");
        const kc = new k8s.KubeConfig();
        kc.loadFromString(s.kubeconfig);
        const core = kc.makeApiClient(k8s.CoreV1Api);
        const name = `talos-gate-status-${CLUSTER}`;
        const cm = await core.readNamespacedConfigMap({ name, namespace: "kube-system" });
        const status = JSON.parse(cm.data!["status.json"]);
        const written = Date.now();
        await core.replaceNamespacedConfigMap({ name, namespace: "kube-system", body: { ...cm, data: { ...cm.data, "status.json": JSON.stringify({ ...status, step: "watched" }) } } });
        await frame(2);
        assert.equal(frames[1].doc.spec.step, "watched");
        console.log(`      the change was printed ${frames[1].at - written} ms after it was written`);
        // Back as it was (the next test reads it).
        const now = await core.readNamespacedConfigMap({ name, namespace: "kube-system" });
        await core.replaceNamespacedConfigMap({ name, namespace: "kube-system", body: { ...now, data: cm.data } });
        await frame(3);
        assert.equal(frames[2].doc.spec.step, "");
      } finally {
        child.kill("SIGINT");
      }
      assert.equal(await closed, 0, stderr);
      assert.equal(frames.length, 3, "one frame per change");
    });

    it("plan: nothing to do", async () => {
      const r = await talosGate(["plan", "--kubeconfig", s.kubeconfigPath, "--version", TARGET]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^nothing to do: 3 machines already on v1\.13\.2\n/);
    });
  });
});
