// Runs Pulumi programs with the Automation API and the real CLI from .tools/bin, against a local file:// backend in a
// temp dir: no network, no update check, a fixed passphrase, plugins only from .tools/bin.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, PulumiCommand, PulumiFn, Stack } from "@pulumi/pulumi/automation";
import { devToolPath, packageRoot, toolsBin } from "../../sim/tools";
import { onFileEnd } from "./fixtures";

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

/** An inline program as a stack, run from its own program directory. */
export async function inlineStack(env: PulumiEnv, projectName: string, program: PulumiFn, stackName = "test"): Promise<Stack> {
  return LocalWorkspace.createOrSelectStack(
    { stackName, projectName, program },
    {
      workDir: programDir(env, `${projectName}-${stackName}`),
      pulumiCommand: env.command,
      envVars: env.envVars,
      projectSettings: { name: projectName, runtime: "nodejs", backend: { url: env.envVars.PULUMI_BACKEND_URL } },
    },
  );
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
  return LocalWorkspace.createOrSelectStack({ stackName, workDir }, { pulumiCommand: env.command, envVars: env.envVars });
}

/** Exported stack state as text, to assert on what Pulumi stored. */
export async function stateText(stack: Stack): Promise<string> {
  return JSON.stringify((await stack.exportStack()).deployment);
}
