// Runs Pulumi programs with the Automation API and the real CLI from .tools/bin, against a local file:// backend in a
// temp dir: no network, no update check, a fixed passphrase, plugins only from .tools/bin.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { EngineEvent, LocalWorkspace, OutputMap, PulumiCommand, PulumiFn, Stack, UpdateKind, UpdateSummary } from "@pulumi/pulumi/automation";
import { devToolPath, packageRoot, toolsBin } from "../../sim/tools";
import { onFileEnd } from "./fixtures";

/**
 * Every Pulumi runtime client in this process gets its own subchannels. An inline program's runtime never closes its
 * run's monitor and engine clients (@pulumi/pulumi 3.276.0 runtime/settings.js: `disconnectSync` closes the
 * module-level ones, an Automation API run uses `store.settings.monitor`/`engine`), and grpc-js shares a subchannel
 * between channels of equal address, options and credentials (insecure ones are all equal). A run whose CLI went away
 * under an RPC (Ctrl-C, a killed provider) leaves its channel retrying the dead port, its subchannel in backoff; a
 * later run whose CLI binds that port got that subchannel, and its first RPCs failed at once with `14 UNAVAILABLE: No
 * connection established. Last error: null`, which the inline language server reports instead of the program's error.
 */
(require("@pulumi/pulumi/runtime/settings") as { grpcClientOptions: Record<string, unknown> }).grpcClientOptions["grpc.use_local_subchannel_pool"] = 1;

export interface PulumiEnv {
  dir: string;
  envVars: Record<string, string>;
  command: PulumiCommand;
}

/** A fresh backend + PULUMI_HOME, removed at the end of the suite. */
export async function pulumiEnv(): Promise<PulumiEnv> {
  devToolPath("pulumi");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-pulumi-"));
  fs.mkdirSync(path.join(dir, "state"));
  fs.mkdirSync(path.join(dir, "home"));
  onFileEnd(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const envVars: Record<string, string> = {
    PULUMI_BACKEND_URL: `file://${path.join(dir, "state")}`,
    PULUMI_HOME: path.join(dir, "home"),
    PULUMI_CONFIG_PASSPHRASE: "talos-gate-tests",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_SUPPRESS_NEO_LINK: "true",
    PATH: `${toolsBin}:${process.env.PATH ?? ""}`,
  };
  const command = await PulumiCommand.get({ root: path.dirname(toolsBin) });
  return { dir, envVars, command };
}

/**
 * A program directory as a user's project has it: node_modules holding @pulumi/pulumi and talos-gate (links to this
 * checkout), so the provider process, which runs there, resolves the shim's `require("talos-gate/...")`.
 */
export function programDir(env: PulumiEnv, name: string): string {
  const dir = path.join(env.dir, "programs", name);
  fs.mkdirSync(path.join(dir, "node_modules", "@pulumi"), { recursive: true });
  fs.symlinkSync(path.join(packageRoot, "node_modules", "@pulumi", "pulumi"), path.join(dir, "node_modules", "@pulumi", "pulumi"));
  fs.symlinkSync(packageRoot, path.join(dir, "node_modules", "talos-gate"));
  return dir;
}

/**
 * The stack with `up`, `refresh` and `destroy` answered from the engine's own event stream. The Automation API runs
 * `pulumi stack output` and `pulumi stack history` after each of them (two more CLI processes, ~0.6 CPU-s each: a
 * third of the suite's CLI calls); the run's summary and its stack outputs are in the events it already streams.
 * An output the events show only as "[secret]" is read with `stack output` after all.
 */
export function withEventResults(stack: Stack): Stack {
  const run = <O extends { onEvent?: (e: EngineEvent) => void }, R>(kind: UpdateKind, op: (opts: O) => Promise<R>) =>
    async (opts?: O): Promise<R> => {
      const events: EngineEvent[] = [];
      const own = stack as unknown as { outputs?: () => Promise<OutputMap>; info?: () => Promise<UpdateSummary | undefined> };
      own.outputs = async () => (await outputsFromEvents(events)) ?? Stack.prototype.outputs.call(stack);
      own.info = async () => summaryFromEvents(kind, events);
      try {
        return await op({ ...opts, onEvent: (e: EngineEvent) => { events.push(e); opts?.onEvent?.(e); } } as O);
      } finally {
        delete own.outputs;
        delete own.info;
      }
    };
  stack.up = run("update", Stack.prototype.up.bind(stack));
  stack.refresh = run("refresh", Stack.prototype.refresh.bind(stack));
  stack.destroy = run("destroy", Stack.prototype.destroy.bind(stack));
  return stack;
}

/** The root stack resource's outputs as the last event showed them; undefined when one is masked as a secret. */
async function outputsFromEvents(events: EngineEvent[]): Promise<OutputMap | undefined> {
  const last = events.filter((e) => e.resOutputsEvent?.metadata.type === "pulumi:pulumi:Stack").pop();
  const outputs: Record<string, unknown> = last?.resOutputsEvent?.metadata.new?.outputs ?? {};
  if (Object.values(outputs).some((v) => v === "[secret]")) return undefined;
  return Object.fromEntries(Object.entries(outputs).map(([k, value]) => [k, { value, secret: false }]));
}

/** What `stack history` would say of a run that succeeded (a failed one throws before this is asked). */
function summaryFromEvents(kind: UpdateKind, events: EngineEvent[]): UpdateSummary {
  const summary = events.find((e) => e.summaryEvent)?.summaryEvent;
  if (!summary) throw new Error(`pulumi ${kind}: the engine sent no summary event`);
  const end = new Date();
  return {
    kind, result: "succeeded", message: "", environment: {}, config: {}, version: 0,
    startTime: new Date(end.getTime() - summary.durationSeconds * 1000), endTime: end,
    resourceChanges: summary.resourceChanges as UpdateSummary["resourceChanges"],
  };
}

/** An inline program as a stack, run from its own program directory. */
export async function inlineStack(env: PulumiEnv, projectName: string, program: PulumiFn, stackName = "test"): Promise<Stack> {
  return withEventResults(await LocalWorkspace.createOrSelectStack(
    { stackName, projectName, program },
    {
      workDir: programDir(env, `${projectName}-${stackName}`),
      pulumiCommand: env.command,
      envVars: env.envVars,
      projectSettings: { name: projectName, runtime: "nodejs", backend: { url: env.envVars.PULUMI_BACKEND_URL } },
    },
  ));
}

/**
 * A program directory with `files` (index.js and what it reads), run by the CLI through the Node.js language host in
 * .tools/bin, as `pulumi up` in a user's project does: inline programs (inlineStack) never start a language host.
 */
export async function directoryStack(env: PulumiEnv, projectName: string, stackName: string, files: Record<string, string>): Promise<Stack> {
  const workDir = programDir(env, `${projectName}-${stackName}`);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(workDir, name), text);
  fs.writeFileSync(path.join(workDir, "Pulumi.yaml"), [
    `name: ${projectName}`,
    "runtime:",
    "  name: nodejs",
    "  options:",
    "    typescript: false",
    "main: index.js",
    `backend:`,
    `  url: ${env.envVars.PULUMI_BACKEND_URL}`,
    "",
  ].join("\n"));
  return withEventResults(await LocalWorkspace.createOrSelectStack({ stackName, workDir }, { pulumiCommand: env.command, envVars: env.envVars }));
}

/** Exported stack state as text, to assert on what Pulumi stored. */
export async function stateText(stack: Stack): Promise<string> {
  return JSON.stringify((await stack.exportStack()).deployment);
}
