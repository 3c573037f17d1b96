// Pulumi-layer figures: the serialized provider each resource stores in state, and what talos-gate adds to a
// `pulumi preview` (the quickstart against the sim, relative to an empty program, same CLI, same run).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation";
import { startSimCluster } from "../sim/cluster";
import { packageRoot, toolsBin } from "../sim/tools";
import { Metric, round } from "./metrics";

async function previewSeconds(workDir: string, envVars: Record<string, string>, runs: number): Promise<number> {
  const stack = await LocalWorkspace.createOrSelectStack({ stackName: "bench", workDir }, {
    pulumiCommand: await PulumiCommand.get({ root: path.dirname(toolsBin) }), envVars,
  });
  const times: number[] = [];
  for (let i = 0; i < runs + 1; i++) {
    const t = process.hrtime.bigint();
    await stack.preview();
    if (i > 0) times.push(Number(process.hrtime.bigint() - t) / 1e9); // the first run warms caches
  }
  await stack.workspace.removeStack("bench", { force: true }).catch(() => undefined);
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}

/** A program directory as a user's project has it (node_modules with @pulumi/pulumi, typescript, ts-node, talos-gate). */
function programDir(dir: string, index: string, withTalosGate: boolean): string {
  fs.mkdirSync(path.join(dir, "node_modules", "@pulumi"), { recursive: true });
  fs.symlinkSync(path.join(packageRoot, "node_modules", "@pulumi", "pulumi"), path.join(dir, "node_modules", "@pulumi", "pulumi"));
  for (const dep of ["typescript", "ts-node"]) fs.symlinkSync(path.join(packageRoot, "node_modules", dep), path.join(dir, "node_modules", dep));
  if (withTalosGate) fs.symlinkSync(packageRoot, path.join(dir, "node_modules", "talos-gate"));
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), `name: ${path.basename(dir)}\nruntime: nodejs\n`);
  fs.writeFileSync(path.join(dir, "index.ts"), index);
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, module: "commonjs", target: "es2022", esModuleInterop: true } }));
  return dir;
}

/**
 * The serialized provider as a real stack stores it: `pulumi up` of a program with one Cluster, then the `__provider`
 * of that resource read from the backend's state file (JSON-escaped, as it sits in the file), not re-serialized here.
 */
async function stateProviderBytes(work: string, envVars: Record<string, string>, simDir: string): Promise<number> {
  const dir = programDir(path.join(work, "state-program"), [
    'import * as fs from "fs";',
    'import * as pulumi from "@pulumi/pulumi";',
    'import * as gate from "talos-gate";',
    `const read = (f: string) => pulumi.secret(fs.readFileSync(${JSON.stringify(simDir)} + "/" + f, "utf8"));`,
    'new gate.Cluster("sim", { clusterName: "sim", kubeconfig: read("kubeconfig"), talosconfig: read("talosconfig") });',
    "",
  ].join("\n"), true);
  const stack = await LocalWorkspace.createOrSelectStack({ stackName: "state", workDir: dir }, {
    pulumiCommand: await PulumiCommand.get({ root: path.dirname(toolsBin) }), envVars,
  });
  try {
    await stack.up();
    const file = path.join(work, "state", ".pulumi", "stacks", "state-program", "state.json");
    const raw = fs.readFileSync(file, "utf8");
    const cluster = (JSON.parse(raw).checkpoint.latest.resources as Array<{ type: string; inputs: Record<string, unknown> }>)
      .find((r) => r.type.endsWith(":Cluster"))!;
    return Buffer.byteLength(JSON.stringify(cluster.inputs.__provider));
  } finally {
    await stack.destroy().catch(() => undefined);
    await stack.workspace.removeStack("state", { force: true }).catch(() => undefined);
  }
}

export async function metrics(): Promise<Metric[]> {
  const out: Metric[] = [];
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-bench-preview-"));
  const sim = await startSimCluster({ controlPlanes: 3, workers: 2, bootSeconds: 1, dir: path.join(work, "sim") });
  try {
    fs.mkdirSync(path.join(work, "state"));
    const envVars = {
      PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`, PULUMI_HOME: path.join(work, "home"),
      PULUMI_CONFIG_PASSPHRASE: "bench", PULUMI_SKIP_UPDATE_CHECK: "true", PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      TALOS_GATE_SIM_DIR: sim.dir, PATH: `${toolsBin}:${process.env.PATH ?? ""}`,
    };
    out.push({
      name: "provider_state_bytes",
      value: await stateProviderBytes(work, envVars, sim.dir),
      unit: "bytes of __provider per resource in a real stack's state (stored twice: inputs and outputs)",
      compared_with: "target < 2,048 (0.1.0: 2,176); a provider that captures its implementation by value: tens to hundreds of KB",
    });
    // An empty TypeScript program run the same way (language host, ts-node, node_modules of this checkout).
    const empty = programDir(path.join(work, "empty"), 'import * as pulumi from "@pulumi/pulumi";\nexport const stack = pulumi.getStack();\n', false);
    const emptyS = await previewSeconds(empty, envVars, 3);
    const quickstartS = await previewSeconds(packageRoot, envVars, 3);
    out.push(
      { name: "preview_seconds_empty", value: round(emptyS, 2), unit: "s (median of 3)", compared_with: "baseline: an empty TypeScript program" },
      { name: "preview_seconds_quickstart", value: round(quickstartS, 2), unit: "s (median of 3)", compared_with: "4 resources, plan read from the live sim" },
      { name: "preview_ratio_vs_empty", value: round(quickstartS / emptyS, 2), unit: "x", compared_with: "1.0 = no cost over an empty program" },
    );
  } finally {
    await sim.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
  return out;
}
