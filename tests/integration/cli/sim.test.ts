// `talos-gate sim up|status|down` as a user runs them: a background simulated cluster in a directory, its files, its
// status table, and clear messages for starting twice and stopping what is not running.
import * as assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createKubeApi } from "../../../provider/kube";
import * as k8s from "@kubernetes/client-node";
import { createTalosApi, kubernetesImagesOf, readMachineConfig } from "../../../provider/talos";
import { onFileEnd } from "../../support/fixtures";

/** A pull no test waits for: the knob's effect shows as an upgrade that cannot finish within its node timeout. */
const LONG_PULL_MS = 600_000;

const MAIN = path.join(__dirname, "..", "..", "..", "cli", "main.js");

function talosGate(...args: string[]) {
  const r = spawnSync(process.execPath, ["--no-deprecation", MAIN, ...args], { encoding: "utf8", timeout: 200000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("integration: cli — talos-gate sim up, status, down", function () {
  this.timeout(300000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-simcli-"));
  onFileEnd(async () => {
    talosGate("sim", "down", "--dir", dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("starts in the background, writes kubeconfig, talosconfig and state.json, and says how to use them", async () => {
    const up = talosGate("sim", "up", "--dir", dir, "--control-planes", "1", "--workers", "1", "--version", "v1.13.0", "--kubernetes", "v1.35.2",
      "--boot-seconds", "0.5", "--workload-pods", "0", "--pull-ms", String(LONG_PULL_MS), "--install-ms", "0");
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stdout, /simulated cluster up in [\d.]+s \(pid \d+\): 1 control plane, 1 worker, Talos v1\.13\.0, Kubernetes v1\.35\.2/);
    assert.match(up.stdout, /\n {2}upgrades: {4}600000 ms image pull, 0 ms install, 0\.5s reboot per node\n/);
    assert.match(up.stdout, /export KUBECONFIG=.*kubeconfig TALOSCONFIG=.*talosconfig/);
    for (const f of ["kubeconfig", "talosconfig", "state.json"]) assert.ok(fs.existsSync(path.join(dir, f)), f);
    // The files work with the real adapters.
    const kube = createKubeApi(fs.readFileSync(path.join(dir, "kubeconfig"), "utf8"));
    assert.deepEqual((await kube.listMachines()).map((m) => [m.name, m.role, m.talosVersion, m.ready]),
      [["cp-1", "controlplane", "v1.13.0", true], ["w-1", "worker", "v1.13.0", true]]);
    await kube.close();
    const talos = createTalosApi(fs.readFileSync(path.join(dir, "talosconfig"), "utf8"));
    const state = JSON.parse(fs.readFileSync(path.join(dir, "state.json"), "utf8"));
    assert.equal(await talos.version(state.machines[1].address), "v1.13.0");
    // issue 24: --kubernetes is the Kubernetes of the nodes' machine configs, and of kube-proxy as Talos deploys it
    assert.deepEqual(kubernetesImagesOf(await readMachineConfig(talos.client, state.machines[1].address)), { kubelet: "ghcr.io/siderolabs/kubelet:v1.35.2" });
    talos.close();
    const kc = new k8s.KubeConfig();
    kc.loadFromString(fs.readFileSync(path.join(dir, "kubeconfig"), "utf8"));
    const ds = await kc.makeApiClient(k8s.AppsV1Api).readNamespacedDaemonSet({ name: "kube-proxy", namespace: "kube-system" });
    assert.equal(ds.spec?.template.spec?.containers[0].image, "registry.k8s.io/kube-proxy:v1.35.2");
  });

  it("an upgrade's image pull takes --pull-ms: a 10-minute pull outlasts a 3 s node timeout, and the node stays as it was", async () => {
    const state = JSON.parse(fs.readFileSync(path.join(dir, "state.json"), "utf8"));
    assert.deepEqual([state.pullMs, state.installMs, state.bootSeconds], [LONG_PULL_MS, 0, 0.5]);
    const talos = createTalosApi(fs.readFileSync(path.join(dir, "talosconfig"), "utf8"));
    try {
      const node = state.machines[1].address;
      const boot = await talos.bootId(node);
      const steps: string[] = [];
      await assert.rejects(
        talos.upgradeNode(node, {
          image: "ghcr.io/siderolabs/installer:v1.13.2", targetVersion: "v1.13.2", nodeTimeoutMs: 3000, onStep: (s) => steps.push(s),
        }),
        /pull ghcr\.io\/siderolabs\/installer:v1\.13\.2: no answer in time/,
      );
      assert.equal(steps[0], "pulling", `steps seen: ${steps.join(", ")}`);
      assert.equal(await talos.bootId(node), boot, "not rebooted");
      assert.equal(await talos.version(node), "v1.13.0");
    } finally {
      talos.close();
    }
  });

  it("status lists the nodes with versions and readiness", () => {
    const st = talosGate("sim", "status", "--dir", dir);
    assert.equal(st.code, 0, st.stderr);
    assert.match(st.stdout, /NODE\s+ROLE\s+TALOS\s+READY\s+CORDONED\s+FAULTS\s+ADDRESS/);
    assert.match(st.stdout, /cp-1\s+controlplane\s+v1\.13\.0\s+yes\s+no\s+-\s/);
    assert.match(st.stdout, /w-1\s+worker\s+v1\.13\.0\s+yes\s+no\s+-\s/);
  });

  it("issue 18 point 10: sim fault sets rehearsal faults on the running daemon, status lists them, clear removes them", async () => {
    const state = JSON.parse(fs.readFileSync(path.join(dir, "state.json"), "utf8"));
    assert.equal(fs.statSync(path.join(dir, "state.json")).mode & 0o077, 0, "the control token is readable only by its owner");
    const talos = createTalosApi(fs.readFileSync(path.join(dir, "talosconfig"), "utf8"));
    try {
      const worker = state.machines[1].address;
      const set = talosGate("sim", "fault", "w-1", "pull-failure", "--dir", dir);
      assert.equal(set.code, 0, set.stderr);
      assert.equal(set.stdout, "node w-1: pull-failure\n");
      // The fault acts on the daemon's node: the pull fails at once instead of taking its 10 minutes.
      await assert.rejects(
        talos.upgradeNode(worker, { image: "ghcr.io/siderolabs/installer:v1.13.2", targetVersion: "v1.13.2", nodeTimeoutMs: 60_000 }),
        /node 10\.5\.0\.3: pull ghcr\.io\/siderolabs\/installer:v1\.13\.2: error pulling image/,
      );
      assert.equal(talosGate("sim", "fault", "10.5.0.3", "slow-boot=1m30s", "--dir", dir).stdout, "node w-1: slow-boot=1m30s, pull-failure\n");
      assert.equal(talosGate("sim", "fault", "cp-1", "etcd-unhealthy", "--dir", dir).code, 0);
      const st = talosGate("sim", "status", "--dir", dir);
      assert.match(st.stdout, /NODE\s+ROLE\s+TALOS\s+READY\s+CORDONED\s+FAULTS\s+ADDRESS/);
      assert.match(st.stdout, /cp-1\s+controlplane\s+v1\.13\.0\s+yes\s+no\s+etcd-unhealthy\s/);
      assert.match(st.stdout, /w-1\s+worker\s+v1\.13\.0\s+yes\s+no\s+slow-boot=1m30s,pull-failure\s/);
      assert.deepEqual((await talos.client.etcdStatus(state.machines[0].address)).errors, ["etcdserver: no leader"], "cp-1's member is unhealthy");
      for (const node of ["w-1", "cp-1"]) assert.equal(talosGate("sim", "fault", node, "clear", "--dir", dir).stdout, `node ${node}: no faults\n`);
      assert.match(talosGate("sim", "status", "--dir", dir).stdout, /w-1\s+worker\s+v1\.13\.0\s+yes\s+no\s+-\s/);
      assert.deepEqual((await talos.client.etcdStatus(state.machines[0].address)).errors, [], "cp-1's member is healthy again");
    } finally {
      talos.close();
    }
  });

  it("issue 18 point 10: a node that never comes back stays down until 'sim recover' boots it", async () => {
    const state = JSON.parse(fs.readFileSync(path.join(dir, "state.json"), "utf8"));
    const talos = createTalosApi(fs.readFileSync(path.join(dir, "talosconfig"), "utf8"), { probeTimeoutMs: 2000 });
    try {
      const worker = state.machines[1].address;
      const boot = await talos.bootId(worker);
      assert.equal(talosGate("sim", "fault", "w-1", "never-comes-back", "--dir", dir).code, 0);
      await talos.client.reboot(worker);
      // Down, and still down well after its 0.5 s reboot: polled until the node refuses, then once more later.
      const deadline = Date.now() + 20_000;
      while (await talos.bootId(worker).then(() => true, () => false)) {
        assert.ok(Date.now() < deadline, "the node went down");
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.match(talosGate("sim", "status", "--dir", dir).stdout, /w-1\s+worker\s+v1\.13\.0\s+\S+\s+no\s+never-comes-back\s/);
      await assert.rejects(talos.bootId(worker), /unreachable/);
      const rec = talosGate("sim", "recover", "w-1", "--dir", dir);
      assert.equal(rec.code, 0, rec.stderr);
      assert.equal(rec.stdout, "node w-1 is booting again\n");
      assert.notEqual(await talos.bootId(worker), boot, "booted again");
      const again = talosGate("sim", "recover", "w-1", "--dir", dir);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /node w-1 is not down, so there is nothing to recover/);
    } finally {
      talos.close();
    }
  });

  it("issue 18 point 10: sim fault names what it expected: the faults, the nodes, control planes for etcd", () => {
    const cases: [string[], RegExp][] = [
      [["w-1", "explode"], /unknown fault "explode"; faults: never-comes-back, rollback, slow-boot=<duration>, etcd-unhealthy, pull-failure, static-pod-never-ready, kubelet-never-returns, clear/],
      [["w-1", "slow-boot=soon"], /slow-boot needs a positive Go duration, e.g. slow-boot=30s; got "slow-boot=soon"/],
      [["w-9", "rollback"], /no simulated node "w-9"; nodes: cp-1, w-1/],
      [["w-1", "etcd-unhealthy"], /node w-1 is a worker and runs no etcd member; etcd-unhealthy applies to control planes/],
      [["w-1"], /usage: talos-gate sim fault <node> <never-comes-back\|rollback\|slow-boot=30s\|etcd-unhealthy\|pull-failure\|static-pod-never-ready\|kubelet-never-returns\|clear>/],
    ];
    for (const [args, expected] of cases) {
      const r = talosGate("sim", "fault", ...args, "--dir", dir);
      assert.equal(r.code, 1, args.join(" "));
      assert.match(r.stderr, expected);
    }
  });

  it("refuses to start twice, naming the running one", () => {
    const again = talosGate("sim", "up", "--dir", dir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /a simulated cluster is already running in .* \(pid \d+, started .*\); use it, or stop it first with 'talos-gate sim down --dir /);
  });

  it("rejects bad options with what it expected", () => {
    const bad = talosGate("sim", "up", "--dir", dir, "--workers", "two");
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--workers must be a whole number >= 0, got "two"/);
  });

  it("stops everything and removes its files; stopping again says nothing runs", () => {
    const state = JSON.parse(fs.readFileSync(path.join(dir, "state.json"), "utf8"));
    const down = talosGate("sim", "down", "--dir", dir);
    assert.equal(down.code, 0, down.stderr);
    assert.match(down.stdout, /stopped \(pid \d+\); its data is removed/);
    assert.throws(() => process.kill(state.pid, 0), "the daemon is gone");
    for (const f of ["kubeconfig", "talosconfig", "state.json"]) assert.ok(!fs.existsSync(path.join(dir, f)), f);
    const again = talosGate("sim", "down", "--dir", dir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no simulated cluster is running in .*; nothing to stop/);
  });
  it("down never signals a process that is not the sim daemon, even when state.json names its pid", async () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-simcli-stale-"));
    const bystander = spawn("sleep", ["60"], { stdio: "ignore" });
    try {
      fs.writeFileSync(path.join(other, "state.json"), JSON.stringify({ pid: bystander.pid, startedAt: new Date().toISOString() }));
      const down = talosGate("sim", "down", "--dir", other);
      assert.equal(down.code, 1);
      assert.match(down.stderr, /no simulated cluster is running in .*; nothing to stop/);
      assert.equal(bystander.exitCode, null, "the other process was not signalled");
      assert.doesNotThrow(() => process.kill(bystander.pid!, 0));
      assert.ok(!fs.existsSync(path.join(other, "state.json")), "the stale state file is removed");
    } finally {
      bystander.kill("SIGKILL");
      fs.rmSync(other, { recursive: true, force: true });
    }
  });
});
