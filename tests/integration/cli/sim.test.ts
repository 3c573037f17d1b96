// `talos-gate sim up|status|down` as a user runs them: a background simulated cluster in a directory, its files, its
// status table, and clear messages for starting twice and stopping what is not running.
import * as assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createKubeApi } from "../../../provider/kube";
import { createTalosApi } from "../../../provider/talos";
import { onSuiteEnd } from "../../support/fixtures";

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
  onSuiteEnd(async () => {
    talosGate("sim", "down", "--dir", dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("starts in the background, writes kubeconfig, talosconfig and state.json, and says how to use them", async () => {
    const up = talosGate("sim", "up", "--dir", dir, "--control-planes", "1", "--workers", "1", "--version", "v1.13.0", "--boot-seconds", "0.5",
      "--workload-pods", "0", "--pull-ms", String(LONG_PULL_MS), "--install-ms", "0");
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stdout, /simulated cluster up in [\d.]+s \(pid \d+\): 1 control plane, 1 worker, Talos v1\.13\.0/);
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
    talos.close();
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
    assert.match(st.stdout, /NODE\s+ROLE\s+TALOS\s+READY\s+CORDONED\s+ADDRESS/);
    assert.match(st.stdout, /cp-1\s+controlplane\s+v1\.13\.0\s+yes\s+no/);
    assert.match(st.stdout, /w-1\s+worker\s+v1\.13\.0\s+yes\s+no/);
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
