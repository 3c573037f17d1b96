#!/usr/bin/env node
// A Node.js language host for the Pulumi CLI (the `pulumi-language-nodejs` plugin).
//
// Why it exists: the upstream host is a Go module (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3)
// that the module proxy this project builds from does not serve, so the toolchain cannot build it. This host speaks
// the same LanguageRuntime gRPC protocol and runs programs the same way the upstream host does: it starts
// `node @pulumi/pulumi/cmd/run` in the program directory with the monitor/engine addresses, project, stack, config
// (PULUMI_CONFIG) and secret keys (PULUMI_CONFIG_SECRET_KEYS), TypeScript through the project's ts-node.
//
// Lifetime (checked against upstream main.go and sdk/go/common/util/{rpcutil/health.go,cmdutil/child_unix.go},
// sdk/go/common/resource/plugin/plugin.go, pulumi/pulumi at 1b59498, Aug 2026):
// - Nothing of ours outlives the engine. The CLI starts every plugin in its own process group (RegisterProcessGroup)
//   and, when it closes normally, SIGINTs that group and SIGKILLs it 5 s later; a CLI killed outright does neither.
//   So this host watches the engine it was started for (the address in its arguments or handshake), its parent (the
//   CLI) and its stdout/stderr (EPIPE): when one is gone it ends the programs it started and its process group, and
//   exits. Not a run's monitor address: the engine closes that monitor once the program has signalled shutdown, while
//   the program may still take seconds to exit on a loaded machine (taking it for a dead engine failed good updates). The rule is the provider's
//   (dist/provider/handlers/engineWatch.js, so this host needs `npm run build`): upstream instead asks the engine's
//   health service every 5 minutes and does not watch its parent.
// - Ending a program: SIGINT, then SIGKILL after a grace (upstream: exec.CommandContext's Cancel sends os.Interrupt,
//   WaitDelay 5 s kills). Then, when this host leads its process group (as the CLI starts it), every other process
//   of the group is SIGKILLed: what the program started and left behind, as the CLI's own close would have done.
//   Processes that moved to another group or session are out of reach (upstream does not reach them either).
// - Cancel: as upstream, every running program gets SIGINT, SIGKILL after 5 s, and later runs are refused. A run
//   whose request ends (the CLI cancelled the call or its connection dropped) ends its program the same way.
// - Signals: SIGINT or SIGTERM (the CLI's close sends SIGINT to the group) ends the programs as above and exits.
//   Upstream stops serving on SIGINT and dies on SIGTERM (Go's default), relying on the CLI to kill the group.
// Deliberately not implemented:
// - A bound on a program that never exits: as upstream, the host waits for it while the engine lives (the engine and
//   the user decide: Ctrl-C is Cancel).
// - Dependency installation, code generation, packing, the debugger attach, the resource-monitor proxy and the
//   synchronous invoke pipes upstream puts between the program and the engine (not used to run these programs), the
//   OOM sniffer on the program's stderr. Process-group handling is Linux (/proc); elsewhere only the program process
//   itself is ended.
"use strict";
const fs = require("fs");
const path = require("path");
const { spawn } = require("child_process");

const packageRoot = path.join(__dirname, "..", "..");
function fromHere(mod) {
  return require(require.resolve(mod, { paths: [process.cwd(), packageRoot] }));
}
const grpc = fromHere("@grpc/grpc-js");
const langrpc = fromHere("@pulumi/pulumi/proto/language_grpc_pb");
const langproto = fromHere("@pulumi/pulumi/proto/language_pb");
const plugproto = fromHere("@pulumi/pulumi/proto/plugin_pb");
const emptyproto = fromHere("google-protobuf/google/protobuf/empty_pb");
const VERSION = fromHere("@pulumi/pulumi/package.json").version;
const engineWatch = builtModule("dist/provider/handlers/engineWatch.js");

// Exit code @pulumi/pulumi/cmd/run uses after it has already shown the user an actionable message.
const EXIT_AFTER_USER_MESSAGE = 32;
/** How long a program has to exit after SIGINT before it is killed: upstream's WaitDelay. */
const CANCEL_GRACE_MS = 5_000;
/** The same when the engine is gone: nothing can receive the program's results, so the grace is short. */
const GONE_GRACE_MS = 1_000;

const args = process.argv.slice(2).filter((a) => !a.startsWith("-"));
let engineAddress = args[0] || "";
/** Running programs: child process -> ends it (SIGINT, then SIGKILL after a grace); resolves once it has exited. */
const running = new Map();
const engineWatches = new Map();
let cancelled = false;
let ending = false;

/** A module of this checkout's compiled TypeScript; without a build, says how to make one. */
function builtModule(rel) {
  const file = path.join(packageRoot, rel);
  if (!fs.existsSync(file)) {
    process.stderr.write(`pulumi-language-nodejs (scripts/langhost): ${file} is missing: run 'npm run build' in ${packageRoot}\n`);
    process.exit(1);
  }
  return require(file);
}

/** Watches an engine address for the host's whole life (the one it was started or handshaken with). */
function watchEngine(address) {
  if (!address || !engineWatch.isAddress(address) || engineWatches.has(address)) return;
  engineWatches.set(address, engineWatch.watchAddress(address, () => endAll(`the Pulumi engine at ${address} is gone`)));
}

function optionsOf(info) {
  const raw = info && info.getOptions() ? info.getOptions().toJavaScript() : {};
  const typescript = raw.typescript === undefined ? true : raw.typescript;
  if (typeof typescript !== "boolean") throw new Error("typescript option must be a boolean");
  return { typescript, tsconfig: raw.tsconfig, nodeargs: raw.nodeargs };
}

// Config keys arrive as <namespace>:<name>; @pulumi/pulumi reads <namespace>:config:<name>, as the Go host sends.
function configJson(req) {
  const out = {};
  for (const [k, v] of req.getConfigMap().entries()) {
    const i = k.indexOf(":");
    out[i < 0 ? k : `${k.slice(0, i)}:config:${k.slice(i + 1)}`] = v;
  }
  return JSON.stringify(out);
}

function run(call, callback) {
  const req = call.request;
  const resp = new langproto.RunResponse();
  if (cancelled || ending) {
    // Upstream: exec.CommandContext on the cancelled context refuses to start.
    resp.setError("Problem executing program (could not run language executor): the update was cancelled");
    return callback(null, resp);
  }
  let info, opts, runPath;
  try {
    info = req.getInfo();
    opts = optionsOf(info);
    const programDir = info.getProgramDirectory() || req.getPwd();
    runPath = require.resolve(process.env.PULUMI_LANGUAGE_NODEJS_RUN_PATH || "@pulumi/pulumi/cmd/run", { paths: [programDir] });
  } catch (err) {
    resp.setError(`could not find @pulumi/pulumi/cmd/run from the program directory: ${err.message}. Run 'npm install' in the project.`);
    return callback(null, resp);
  }
  const programDir = info.getProgramDirectory() || req.getPwd();
  const argv = [];
  if (opts.nodeargs) argv.push(...String(opts.nodeargs).split(/\s+/).filter(Boolean));
  argv.push(runPath);
  const add = (k, v) => { if (v) argv.push(`--${k}`, String(v)); };
  add("monitor", req.getMonitorAddress());
  add("engine", engineAddress);
  add("organization", req.getOrganization());
  add("project", req.getProject());
  add("root-directory", info.getRootDirectory());
  add("stack", req.getStack());
  add("pwd", programDir);
  if (req.getDryrun()) argv.push("--dry-run");
  add("parallel", req.getParallel());
  argv.push(info.getEntryPoint() || ".");
  argv.push(...req.getArgsList());

  const env = { ...process.env, PULUMI_CONFIG: configJson(req), PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(req.getConfigsecretkeysList()) };
  if (opts.typescript) env.PULUMI_NODEJS_TYPESCRIPT = "true";
  if (opts.tsconfig) env.PULUMI_NODEJS_TSCONFIG_PATH = opts.tsconfig;

  // The program stays in this host's process group (as upstream), which the CLI signals when it closes.
  const child = spawn(process.execPath, argv, { cwd: programDir, env, stdio: ["ignore", "pipe", "pipe"] });
  // "exit", not "close": a process the program started may hold its stdout long after the program is gone.
  const exited = new Promise((resolve) => child.once("exit", resolve));
  running.set(child, (graceMs) => endProgram(child, exited, graceMs));
  child.stdout.pipe(process.stdout, { end: false });
  child.stderr.pipe(process.stderr, { end: false });
  let done = false;
  const finish = (error, bail) => {
    if (done) return;
    done = true;
    running.delete(child);
    resp.setError(error || "");
    resp.setBail(!!bail);
    callback(null, resp);
  };
  child.on("error", (err) => finish(`Problem executing program (could not run language executor): ${err.message}`));
  child.on("exit", (code, signal) => {
    if (code === 0) finish("");
    else if (code === EXIT_AFTER_USER_MESSAGE) finish("", true);
    else finish(`Program exited with non-zero exit code: ${code === null ? signal : code}`);
  });
  // Upstream: the program's context ends with the request's (context.AfterFunc(ctx, cmdCancel)).
  call.on("cancelled", () => void endProgram(child, exited, CANCEL_GRACE_MS));
}

/** SIGINT, then SIGKILL if the program has not exited after `graceMs`; resolves once it has exited. */
function endProgram(child, exited, graceMs) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  child.kill("SIGINT");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  return exited.then(() => clearTimeout(timer));
}

/**
 * Ends every program, then the rest of this host's process group, then the host. `reason` is said on stderr when the
 * engine is gone (for whoever still reads it); a signal is the CLI closing us as usual, and says nothing.
 */
function endAll(reason, graceMs = GONE_GRACE_MS) {
  if (ending) return;
  ending = true;
  for (const unwatch of engineWatches.values()) unwatch();
  if (reason) process.stderr.write(`pulumi-language-nodejs: ${reason}: ending ${running.size} program(s) and exiting\n`);
  server.forceShutdown();
  const programsEnded = Promise.all([...running.values()].map((end) => end(graceMs)));
  const bound = new Promise((resolve) => setTimeout(resolve, graceMs + 1_000)); // a SIGKILL is not refused, but bound it
  Promise.race([programsEnded, bound]).then(() => {
    killRestOfGroup();
    process.exit(0);
  });
}

/** SIGKILLs the other members of this host's process group, when it leads one (as the CLI starts it); Linux only. */
function killRestOfGroup() {
  let ours;
  try {
    ours = procStat("self");
  } catch {
    return; // no /proc
  }
  if (ours.pgrp !== process.pid) return; // not a group of our own: it is someone else's to end
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).map(Number)) {
    if (pid === process.pid) continue;
    try {
      if (procStat(pid).pgrp === ours.pgrp) process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** The process group of a process, from /proc/<pid>/stat (fields after the parenthesised command). */
function procStat(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pgrp: Number(fields[2]) };
}

const server = new grpc.Server({ "grpc.max_receive_message_length": 400 * 1024 * 1024 });
server.addService(langrpc.LanguageRuntimeService, {
  handshake(call, callback) {
    engineAddress = call.request.getEngineAddress() || engineAddress;
    watchEngine(engineAddress);
    callback(null, new langproto.LanguageHandshakeResponse());
  },
  getRequiredPlugins(call, callback) {
    const resp = new langproto.GetRequiredPluginsResponse();
    resp.setPluginsList([]);
    callback(null, resp);
  },
  getRequiredPackages(call, callback) {
    const resp = new langproto.GetRequiredPackagesResponse();
    resp.setPackagesList([]);
    callback(null, resp);
  },
  run,
  getPluginInfo(call, callback) {
    const resp = new plugproto.PluginInfo();
    resp.setVersion(VERSION);
    callback(null, resp);
  },
  installDependencies(call) {
    // Dependencies are installed by the project's own `npm ci`; nothing to do here.
    call.end();
  },
  runtimeOptionsPrompts(call, callback) {
    callback(null, new langproto.RuntimeOptionsResponse());
  },
  about(call, callback) {
    const resp = new langproto.AboutResponse();
    resp.setExecutable(process.execPath);
    resp.setVersion(process.version);
    callback(null, resp);
  },
  getProgramDependencies(call, callback) {
    callback(null, new langproto.GetProgramDependenciesResponse());
  },
  cancel(call, callback) {
    cancelled = true;
    for (const end of running.values()) void end(CANCEL_GRACE_MS);
    callback(null, new emptyproto.Empty());
  },
});

watchEngine(engineAddress);
engineWatch.watchParent(() => endAll("the Pulumi CLI that started this language host is gone"));
engineWatch.onBrokenPipe([process.stdout, process.stderr], () => endAll("the Pulumi CLI stopped reading this language host's output"));
server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    process.stderr.write(`could not start language host RPC server: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`${port}\n`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => endAll("", CANCEL_GRACE_MS));
