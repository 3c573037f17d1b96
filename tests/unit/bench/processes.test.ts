import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { cpuSplitNote, cpuTotals, processKind, processSampler } from "../../../bench/processes";

describe("bench process split", () => {
  it("names the sim's processes only under the sim, and the provider's and Pulumi's by their command lines", () => {
    const bin = "/root/.cache/talos-gate/bin/kube-1/";
    assert.equal(processKind([`${bin}kube-apiserver`, "--etcd-servers=http://127.0.0.1:1"], true), "kube-apiserver");
    assert.equal(processKind([`${bin}kube-controller-manager`, "--kubeconfig=x"], true), "kube-controller-manager");
    assert.equal(processKind([`${bin}kube-scheduler`], true), "kube-scheduler");
    assert.equal(processKind([`${bin}etcd`, "--data-dir=x"], true), "etcd");
    assert.equal(processKind(["/usr/bin/node", "/work/dist/sim/daemon.js", "--dir", "/tmp/sim"], true), "sim");
    assert.equal(processKind(["/usr/bin/node", "/work/dist/sim/apiproxyProcess.js", "127.0.0.1", "1", "2"], true), "sim API proxy");
    // A check's process under the sim is not counted on its own; another cluster's API server is not the sim's.
    assert.equal(processKind(["/bin/sh", "-c", "exit 0"], true), undefined);
    assert.equal(processKind([`${bin}kube-apiserver`], false), undefined);
    const provider = ["/usr/bin/node", "/p/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js", "127.0.0.1:4000"];
    assert.equal(processKind(provider, false), "provider");
    assert.equal(processKind(["/usr/bin/node", "/p/node_modules/@pulumi/pulumi/cmd/dynamic-provider", "127.0.0.1:4000"], false), "provider");
    assert.equal(processKind(["/usr/bin/node", "-e", "require.resolve('x')"], false), undefined);
    assert.equal(processKind(["/tools/bin/pulumi", "up", "--yes"], false), "Pulumi");
    assert.equal(processKind(["/tools/bin/pulumi-language-nodejs", "127.0.0.1:1"], false), "Pulumi");
    assert.equal(processKind(["/usr/bin/node", "/p/node_modules/@pulumi/pulumi/cmd/run", "index.js"], false), "Pulumi");
    assert.equal(processKind(["/usr/bin/bash"], false), undefined);
  });

  it("sums each kind's CPU from its processes' first and last readings", () => {
    const t = cpuTotals([
      { kind: "kube-apiserver", first: 1000, last: 4000 },
      { kind: "provider", first: 0, last: 900 },
      { kind: "provider", first: 0, last: 100 },
      { kind: "etcd", first: 500, last: 400 }, // a reading that went backwards counts nothing
    ]);
    assert.deepEqual(t, { "kube-apiserver": 3000, provider: 1000, etcd: 0 });
  });

  it("says the split most first, leaves out kinds under 1 % and says how full the cores were", () => {
    const note = cpuSplitNote({ provider: 1300, "kube-apiserver": 3700, "kube-controller-manager": 2700, etcd: 50, sim: 850 }, 5000, 2);
    assert.equal(note, "CPU during pulumi up 8.6 s (1.72 of 2 cores): kube-apiserver 43 %, kube-controller-manager 31 %, " +
      "talos-gate's provider 15 %, the sim's kubelets and Talos nodes 10 %");
    assert.equal(cpuSplitNote({}, 5000, 2), "");
    assert.equal(cpuSplitNote({ provider: 10 }, 0, 2), "");
  });

  it("samples a process started in the window from its start, in the program's directory or under the sim", async function () {
    if (process.platform !== "linux") this.skip();
    this.timeout(60_000);
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-procs-")));
    // 300 ms of CPU (CPU time, not wall time: the machine may be busy), then "burnt" on stdout, then idle until killed.
    const busy = "const c=process.cpuUsage();for(let u=c;u.user+u.system<300000;u=process.cpuUsage(c)){}console.log('burnt');setInterval(()=>{},1000)";
    const burnt = (c: ChildProcess) => new Promise<void>((resolve) => c.stdout!.on("data", (d) => String(d).includes("burnt") && resolve()));
    // A "provider" in the program's directory, and a "kube-apiserver" below a stand-in for the sim's daemon.
    const sim = spawn("bash", ["-c", `(exec -a kube-apiserver ${process.execPath} -e "${busy}") & wait`], { stdio: ["ignore", "pipe", "ignore"], detached: true });
    const sampler = processSampler(dir, sim.pid, 100);
    const script = path.join(dir, "cmd", "dynamic-provider", "index.js");
    const provider = spawn(process.execPath, ["-e", busy, script], { cwd: dir, stdio: ["ignore", "pipe", "ignore"] });
    // Another process with the same command line outside the program's directory is someone else's.
    const stranger = spawn(process.execPath, ["-e", busy, script], { cwd: os.tmpdir(), stdio: ["ignore", "pipe", "ignore"] });
    try {
      await Promise.all([burnt(sim), burnt(provider), burnt(stranger)]);
      await new Promise((r) => setTimeout(r, 300)); // at least one sample after the work
      const s = sampler.stop();
      assert.ok((s.cpuByKind.provider ?? 0) >= 300 && (s.cpuByKind.provider ?? 0) < 600, `provider ${s.cpuByKind.provider} ms`);
      assert.ok((s.cpuByKind["kube-apiserver"] ?? 0) >= 250, `kube-apiserver ${s.cpuByKind["kube-apiserver"]} ms`);
      assert.deepEqual([...s.providerPeaks.keys()], [provider.pid]);
      assert.ok((s.providerPeaks.get(provider.pid!) ?? 0) > 10 << 20);
    } finally {
      for (const c of [provider, stranger]) c.kill("SIGKILL");
      process.kill(-sim.pid!, "SIGKILL"); // the stand-in and its child: their own process group
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
