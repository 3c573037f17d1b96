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
    // The language host as scripts/langhost runs it: node with the host's script.
    assert.equal(processKind(["node", "/work/main/scripts/langhost/pulumi-language-nodejs.js", "127.0.0.1:1"], false), "Pulumi");
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

  // CPU time, not wall time (the machine may be busy); getrusage itself costs system time, so both count.
  const burn = (ms: number) => `const b=()=>{const c=process.cpuUsage();for(let u={user:0,system:0};u.user+u.system<${ms * 1000};u=process.cpuUsage(c)){}};`;
  const said = (c: ChildProcess, word: string) =>
    new Promise<void>((resolve) => c.stdout!.on("data", function on(d) {
      if (String(d).includes(word)) {
        c.stdout!.off("data", on);
        resolve();
      }
    }));
  const piped = { stdio: ["ignore", "pipe", "ignore"] as ("ignore" | "pipe")[] };

  it("counts a process running at the start from then, one started later from its start, only in the program's directory or under the sim", async function () {
    if (process.platform !== "linux") this.skip();
    this.timeout(60_000);
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-procs-")));
    // A "kube-apiserver" (the sim's root here) that burns 300 ms before the sampler starts and 300 ms after SIGUSR2.
    const apiserver = spawn(process.execPath, ["-e", `${burn(300)}b();console.log('burnt');process.on('SIGUSR2',()=>{b();console.log('again')});setInterval(()=>{},1000)`],
      { ...piped, argv0: "kube-apiserver" });
    const script = path.join(dir, "cmd", "dynamic-provider", "index.js");
    const started: ChildProcess[] = [apiserver];
    let sampler: ReturnType<typeof processSampler> | undefined;
    try {
      await said(apiserver, "burnt");
      sampler = processSampler(dir, apiserver.pid!, { discoverMs: 100, readMs: 50 });
      // Started after the sampler: a provider, and the same command line outside the program's directory.
      const provider = spawn(process.execPath, ["-e", `${burn(300)}b();console.log('burnt');setInterval(()=>{},1000)`, script], { ...piped, cwd: dir });
      const stranger = spawn(process.execPath, ["-e", `${burn(300)}b();console.log('burnt');setInterval(()=>{},1000)`, script], { ...piped, cwd: os.tmpdir() });
      started.push(provider, stranger);
      apiserver.kill("SIGUSR2");
      await Promise.all([said(apiserver, "again"), said(provider, "burnt"), said(stranger, "burnt")]);
      await new Promise((r) => setTimeout(r, 300)); // a reading after the work
      const s = sampler.stop();
      const api = s.cpuByKind["kube-apiserver"] ?? 0;
      assert.ok(api >= 250 && api < 550, `kube-apiserver ${api} ms: its second 300 ms, not its first`);
      const prov = s.cpuByKind.provider ?? 0;
      assert.ok(prov >= 300 && prov < 600, `provider ${prov} ms: from its start, once`);
      assert.deepEqual([...s.providerPeaks.keys()], [provider.pid]);
      assert.ok((s.providerPeaks.get(provider.pid!) ?? 0) > 10 << 20);
    } finally {
      sampler?.stop();
      for (const c of started) c.kill("SIGKILL");
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("counts the sim's reaped children with it, and keeps what a process that ended did before its last reading", async function () {
    if (process.platform !== "linux") this.skip();
    this.timeout(60_000);
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-procs-")));
    // A stand-in for the sim's daemon: idle, until SIGUSR2 has it run a pod's process (300 ms of CPU) and reap it.
    const child = JSON.stringify(`${burn(300)}b()`);
    const daemon = spawn(process.execPath, ["-e",
      `const cp=require('child_process');console.log('ready');process.on('SIGUSR2',()=>cp.spawn(process.execPath,['-e',${child}]).on('exit',()=>console.log('reaped')));setInterval(()=>{},1000)`,
      path.join(dir, "sim", "daemon.js")], piped);
    let sampler: ReturnType<typeof processSampler> | undefined;
    try {
      await said(daemon, "ready");
      sampler = processSampler(dir, daemon.pid!, { discoverMs: 100, readMs: 50 });
      daemon.kill("SIGUSR2");
      // A provider that burns 400 ms and exits between two readings.
      const provider = spawn(process.execPath, ["-e", `${burn(400)}b()`, path.join(dir, "cmd", "dynamic-provider", "index.js")], { cwd: dir, stdio: "ignore" });
      await Promise.all([said(daemon, "reaped"), new Promise((r) => provider.on("exit", r))]);
      await new Promise((r) => setTimeout(r, 200));
      const s = sampler.stop();
      assert.ok((s.cpuByKind.sim ?? 0) >= 250, `sim ${s.cpuByKind.sim} ms: its pod's process`);
      assert.ok((s.cpuByKind.provider ?? 0) >= 250, `provider ${s.cpuByKind.provider} ms`);
    } finally {
      sampler?.stop();
      daemon.kill("SIGKILL");
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
