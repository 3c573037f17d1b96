#!/usr/bin/env node
// A Node.js language host for the Pulumi CLI (the `pulumi-language-nodejs` plugin).
//
// Why it exists: the upstream host is a Go module (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3)
// that the module proxy this project builds from does not serve, so the toolchain cannot build it. This host speaks
// the same LanguageRuntime gRPC protocol and runs programs the same way the upstream host does: it starts
// `node @pulumi/pulumi/cmd/run` in the program directory with the monitor/engine addresses, project, stack, config
// (PULUMI_CONFIG) and secret keys (PULUMI_CONFIG_SECRET_KEYS), TypeScript through the project's ts-node.
// Dependency installation, code generation and packing are not implemented (they are not used to run programs).
"use strict";
const path = require("path");
const { spawn } = require("child_process");

function fromHere(mod) {
  return require(require.resolve(mod, { paths: [process.cwd(), path.join(__dirname, "..", "..")] }));
}
const grpc = fromHere("@grpc/grpc-js");
const langrpc = fromHere("@pulumi/pulumi/proto/language_grpc_pb");
const langproto = fromHere("@pulumi/pulumi/proto/language_pb");
const plugproto = fromHere("@pulumi/pulumi/proto/plugin_pb");
const emptyproto = fromHere("google-protobuf/google/protobuf/empty_pb");
const VERSION = fromHere("@pulumi/pulumi/package.json").version;

// Exit code @pulumi/pulumi/cmd/run uses after it has already shown the user an actionable message.
const EXIT_AFTER_USER_MESSAGE = 32;

const args = process.argv.slice(2).filter((a) => !a.startsWith("-"));
let engineAddress = args[0] || "";
const running = new Set();

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

  const child = spawn(process.execPath, argv, { cwd: programDir, env, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
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
  call.on("cancelled", () => child.kill("SIGINT"));
}

const server = new grpc.Server({ "grpc.max_receive_message_length": 400 * 1024 * 1024 });
server.addService(langrpc.LanguageRuntimeService, {
  handshake(call, callback) {
    engineAddress = call.request.getEngineAddress() || engineAddress;
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
    for (const child of running) child.kill("SIGINT");
    callback(null, new emptyproto.Empty());
  },
});

server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    process.stderr.write(`could not start language host RPC server: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`${port}\n`);
});
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    for (const child of running) child.kill(sig);
    server.forceShutdown();
    process.exit(0);
  });
}
