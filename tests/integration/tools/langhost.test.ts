// This checkout's Node.js language host (scripts/langhost) outlives neither the engine nor the CLI that started it:
// started as the CLI starts plugins (its own process group), with a program that ignores SIGINT and starts a process
// of its own, it ends all of it when the engine stops answering or its parent dies; Cancel ends a program as
// upstream does (SIGINT, then SIGKILL). No CLI here: the engine is a TCP listener the test closes.
import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { PROBE_EVERY_MS } from "../../../provider/handlers/engineWatch";
import { packageRoot } from "../../../sim/tools";
import { killAll, Proc, processTree, waitGone } from "../../support/processes";

const HOST = path.join(packageRoot, "scripts", "langhost", "pulumi-language-nodejs.js");
const pulumiDir = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
const grpc = require(require.resolve("@grpc/grpc-js", { paths: [pulumiDir] })) as typeof import("@grpc/grpc-js");
const langrpc = require("@pulumi/pulumi/proto/language_grpc_pb");
const langproto = require("@pulumi/pulumi/proto/language_pb");
const emptyproto = require("google-protobuf/google/protobuf/empty_pb");

/** A program for the host to run in @pulumi/pulumi/cmd/run's place: starts `sleep`, ignores SIGINT, never exits. */
const STUBBORN_PROGRAM = `
const { spawn } = require("child_process");
const sleeper = spawn("sleep", ["1000"], { stdio: "ignore" });
process.on("SIGINT", () => {});
require("fs").writeFileSync(process.env.LANGHOST_TEST_READY, String(sleeper.pid));
setInterval(() => {}, 1000);
`;

/** A program that has finished its work and takes its time to exit: it exits 0 once the file `exit` appears. */
const SLOW_EXIT_PROGRAM = `
const fs = require("fs");
const path = require("path");
fs.writeFileSync(process.env.LANGHOST_TEST_READY, String(process.pid));
const exitFile = path.join(path.dirname(process.env.LANGHOST_TEST_READY), "exit");
setInterval(() => { if (fs.existsSync(exitFile)) process.exit(0); }, 50);
`;

/** Where the processes of one test end up, for the assertions and the cleanup. */
let recorded: Proc[] = [];

describe("integration: tools — the language host ends with the engine and the CLI", function () {
  this.timeout(60000);
  let dir: string;
  let engine: net.Server;
  let engineAddress: string;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-langhost-"));
    fs.writeFileSync(path.join(dir, "run.js"), STUBBORN_PROGRAM);
    engine = net.createServer((s) => s.destroy());
    await new Promise<void>((resolve) => engine.listen(0, "127.0.0.1", resolve));
    engineAddress = `127.0.0.1:${(engine.address() as net.AddressInfo).port}`;
  });

  afterEach(async () => {
    killAll(recorded);
    recorded = [];
    await new Promise((resolve) => engine.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function hostEnv(): NodeJS.ProcessEnv {
    return { ...process.env, PULUMI_LANGUAGE_NODEJS_RUN_PATH: path.join(dir, "run.js"), LANGHOST_TEST_READY: path.join(dir, "ready") };
  }

  /** Starts the program through the host's Run; resolves with Run's answer (or the call's failure). */
  function runProgram(port: number, monitor?: string): { client: any; answer: Promise<{ error?: string; status?: string }> } {
    const client = new langrpc.LanguageRuntimeClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const info = new langproto.ProgramInfo();
    info.setRootDirectory(dir);
    info.setProgramDirectory(dir);
    info.setEntryPoint(".");
    const req = new langproto.RunRequest();
    req.setProject("p");
    req.setStack("s");
    req.setPwd(dir);
    req.setInfo(info);
    if (monitor) req.setMonitorAddress(monitor);
    const answer = new Promise<{ error?: string; status?: string }>((resolve) => {
      client.run(req, (err: Error | null, resp: any) => resolve(err ? { status: err.message } : { error: resp.getError() }));
    });
    return { client, answer };
  }

  /** Waits (bounded) until the program has started its own process. */
  async function programStarted(): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!fs.existsSync(path.join(dir, "ready"))) {
      if (Date.now() > deadline) throw new Error("the program did not start within 30 s");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  function lines(child: ChildProcess): AsyncIterator<string> {
    const queue: string[] = [];
    const waiting: ((l: string) => void)[] = [];
    let buf = "";
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        const w = waiting.shift();
        if (w) w(line);
        else queue.push(line);
      }
    });
    return {
      next: () => new Promise((resolve, reject) => {
        const l = queue.shift();
        if (l !== undefined) return resolve({ value: l, done: false });
        const timer = setTimeout(() => reject(new Error("no line from the host within 30 s")), 30_000);
        waiting.push((line) => {
          clearTimeout(timer);
          resolve({ value: line, done: false });
        });
      }),
    };
  }

  /** The host as the CLI starts it: its own process group, the engine's address as its argument. */
  async function startHost(): Promise<{ pid: number; port: number; stderr: () => string }> {
    const host = spawn(process.execPath, [HOST, engineAddress], { detached: true, env: hostEnv(), stdio: ["ignore", "pipe", "pipe"] });
    host.unref();
    const stderr = collect(host);
    const port = Number((await lines(host).next()).value);
    return { pid: host.pid!, port, stderr };
  }

  function collect(child: ChildProcess): () => string {
    let text = "";
    child.stderr!.on("data", (d: Buffer) => (text += d.toString()));
    return () => text;
  }

  it("the engine gone: the host ends a program that ignores SIGINT and what that program started, and exits", async () => {
    const host = await startHost();
    const run = runProgram(host.port);
    await programStarted();
    recorded = processTree(host.pid);
    assert.equal(recorded.length, 3, `host, program and its sleep: ${JSON.stringify(recorded)}`);
    await new Promise((resolve) => engine.close(resolve));
    const left = await waitGone(recorded, 30_000);
    assert.deepEqual(left, [], "nothing of the host's is left once the engine stops answering");
    assert.match(host.stderr(), new RegExp(`the Pulumi engine at ${engineAddress} is gone: ending 1 program\\(s\\) and exiting`));
    run.client.close();
  });

  it("the parent gone (the CLI killed, the engine still answering): the host ends its program and exits", async () => {
    // A parent shell in the CLI's place; the host leads its own group as the CLI makes it (setsid, no fork: not a leader).
    const parent = spawn("sh", ["-c", `setsid "${process.execPath}" "${HOST}" ${engineAddress} & echo "pid $!"; wait`],
      { detached: true, env: hostEnv(), stdio: ["ignore", "pipe", "pipe"] });
    parent.unref();
    const stderr = collect(parent);
    const out = lines(parent);
    const first = (await out.next()).value;
    const second = (await out.next()).value;
    const [pidLine, portLine] = first.startsWith("pid ") ? [first, second] : [second, first];
    const hostPid = Number(pidLine.slice(4));
    const run = runProgram(Number(portLine));
    await programStarted();
    recorded = processTree(hostPid);
    assert.equal(recorded.length, 3, `host, program and its sleep: ${JSON.stringify(recorded)}`);
    process.kill(parent.pid!, "SIGKILL");
    const left = await waitGone(recorded, 30_000);
    assert.deepEqual(left, [], "nothing of the host's is left once its parent is gone");
    assert.match(stderr(), /the Pulumi CLI that started this language host is gone: ending 1 program\(s\) and exiting/);
    run.client.close();
  });

  it("the run's monitor closing before its program has exited (the end of every update) is not a dead engine: the run answers", async () => {
    fs.writeFileSync(path.join(dir, "run.js"), SLOW_EXIT_PROGRAM);
    const monitor = net.createServer((sock) => sock.destroy());
    await new Promise<void>((resolve) => monitor.listen(0, "127.0.0.1", resolve));
    const host = await startHost();
    const run = runProgram(host.port, `127.0.0.1:${(monitor.address() as net.AddressInfo).port}`);
    await programStarted();
    recorded = processTree(host.pid);
    // The engine closes the monitor once the program signalled shutdown; the program exits some seconds later. Before
    // the fix the host took the refused monitor (twice, 2 s apart) for a dead engine and killed the program.
    await new Promise((resolve) => monitor.close(resolve));
    await new Promise((r) => setTimeout(r, 3 * PROBE_EVERY_MS));
    fs.writeFileSync(path.join(dir, "exit"), "");
    assert.deepEqual(await run.answer, { error: "" }, host.stderr());
    assert.doesNotMatch(host.stderr(), /is gone/);
    run.client.close();
  });

  it("Cancel ends a program that ignores SIGINT (SIGKILL after the grace), Run answers, later runs are refused; SIGTERM ends the rest", async () => {
    const host = await startHost();
    const run = runProgram(host.port);
    await programStarted();
    recorded = processTree(host.pid);
    const program = recorded.filter((p) => /run\.js/.test(p.cmd));
    assert.equal(program.length, 1, `the program runs: ${JSON.stringify(recorded)}`);
    await new Promise<void>((resolve, reject) => run.client.cancel(new emptyproto.Empty(), (err: Error | null) => (err ? reject(err) : resolve())));
    const answer = await Promise.race([run.answer, new Promise<{ error?: string }>((resolve) =>
      setTimeout(() => resolve({ error: "Run did not answer within 20 s of Cancel: the program was not ended" }), 20_000))]);
    assert.match(answer.error ?? "", /Program exited with non-zero exit code: SIGKILL/);
    assert.deepEqual(await waitGone(program, 1_000), [], "the program is gone");
    const again = await runProgram(host.port).answer;
    assert.match(again.error ?? "", /the update was cancelled/);
    run.client.close();
    // The CLI's close: the program's own process, left in the host's group, goes with the host.
    process.kill(host.pid, "SIGTERM");
    assert.deepEqual(await waitGone(recorded, 30_000), [], "nothing of the host's is left after SIGTERM");
  });
});
