// Pulumi-layer figures: the serialized provider each resource stores in state, and what talos-gate adds to a
// `pulumi preview` (the quickstart against the sim, relative to an empty program, same CLI, same run).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation";
import { shim } from "../provider/shim";
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

export async function metrics(): Promise<Metric[]> {
  const serialized = await pulumi.runtime.serializeFunction(() => shim, { allowSecrets: true });
  const out: Metric[] = [{
    name: "provider_state_bytes",
    value: Buffer.byteLength(serialized.text),
    unit: "bytes per resource (stored twice: input and output)",
    compared_with: "a provider that captures its implementation by value: tens to hundreds of KB",
  }];

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-bench-preview-"));
  const sim = await startSimCluster({ controlPlanes: 3, workers: 2, bootSeconds: 1, dir: path.join(work, "sim") });
  try {
    fs.mkdirSync(path.join(work, "state"));
    const envVars = {
      PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`, PULUMI_HOME: path.join(work, "home"),
      PULUMI_CONFIG_PASSPHRASE: "bench", PULUMI_SKIP_UPDATE_CHECK: "true", PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      TALOS_GATE_SIM_DIR: sim.dir, PATH: `${toolsBin}:${process.env.PATH ?? ""}`,
    };
    // An empty TypeScript program run the same way (language host, ts-node, node_modules of this checkout).
    const empty = path.join(work, "empty");
    fs.mkdirSync(path.join(empty, "node_modules", "@pulumi"), { recursive: true });
    fs.symlinkSync(path.join(packageRoot, "node_modules", "@pulumi", "pulumi"), path.join(empty, "node_modules", "@pulumi", "pulumi"));
    for (const dep of ["typescript", "ts-node"]) fs.symlinkSync(path.join(packageRoot, "node_modules", dep), path.join(empty, "node_modules", dep));
    fs.writeFileSync(path.join(empty, "Pulumi.yaml"), "name: empty\nruntime: nodejs\n");
    fs.writeFileSync(path.join(empty, "index.ts"), 'import * as pulumi from "@pulumi/pulumi";\nexport const stack = pulumi.getStack();\n');
    fs.writeFileSync(path.join(empty, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, module: "commonjs", target: "es2022" } }));
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
