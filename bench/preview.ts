// `pulumi preview` of the rollout bench's program (a Cluster, a Healthcheck, a TalosUpgrade) over a 1,000-node sim
// started by `talos-gate sim up` in its own process: how long it takes against an empty program run the same way, and
// whether the plan it shows is complete — every wave and every node's installer image read from the node — or says
// "computed at apply time" / "read from the node at apply time" for some of it. Method in bench/README.md.
// Run alone: `node dist/bench/preview.js [nodes]` (prints JSON).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation";
import { toolsBin } from "../sim/tools";
import { cpuSpeedProbe, cpuWindow, machineNote, Metric, round, type MachineCpu } from "./metrics";
import { programDir, talosGate } from "./rollout";

const NODES = 1000;
const CONTROL_PLANES = 3;
const RUNS = 3;

export interface PreviewResult {
  nodes: number;
  /** Median of RUNS previews after a warm-up run, seconds. */
  previewS: number;
  emptyS: number;
  /** The plan's lines that name something left for apply time (none: the plan is complete). */
  deferred: string[];
  /** Nodes the plan's installer-image lines name. */
  imageNodes: number;
  load: [number, number];
  /** The cores' busy and steal shares during the previews, and the CPU probe before the sim started. */
  cpu: MachineCpu;
}

async function previews(workDir: string, envVars: Record<string, string>, runs: number): Promise<{ seconds: number; stdout: string }> {
  const stack = await LocalWorkspace.createOrSelectStack({ stackName: "bench", workDir }, {
    pulumiCommand: await PulumiCommand.get({ root: path.dirname(toolsBin) }), envVars,
  });
  const times: number[] = [];
  let stdout = "";
  for (let i = 0; i < runs + 1; i++) {
    const t = process.hrtime.bigint();
    stdout = (await stack.preview({ diff: true })).stdout;
    if (i > 0) times.push(Number(process.hrtime.bigint() - t) / 1e9); // the first run warms caches
  }
  return { seconds: times.sort((a, b) => a - b)[Math.floor(times.length / 2)], stdout };
}

export async function benchPreview(nodes = NODES): Promise<PreviewResult> {
  const cluster = `preview${nodes}`;
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-bench-preview-")));
  const simDir = path.join(work, "sim");
  // Before the sim starts, while nothing of the bench runs (see rollout.ts).
  const speedMs = cpuSpeedProbe();
  await talosGate(["sim", "up", "--dir", simDir, "--control-planes", String(CONTROL_PLANES), "--workers", String(nodes - CONTROL_PLANES),
    "--version", "v1.13.0", "--workload-pods", "0"]);
  try {
    fs.mkdirSync(path.join(work, "state"));
    const envVars = {
      PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`, PULUMI_HOME: path.join(work, "home"),
      PULUMI_CONFIG_PASSPHRASE: "bench", PULUMI_SKIP_UPDATE_CHECK: "true", PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      PULUMI_SUPPRESS_NEO_LINK: "true", PATH: `${toolsBin}:${process.env.PATH ?? ""}`,
    };
    // The empty program: the same runtime (JavaScript, no TypeScript compile), the same node_modules, no resources.
    const empty = path.join(work, "empty");
    fs.mkdirSync(path.join(empty, "node_modules", "@pulumi"), { recursive: true });
    fs.symlinkSync(fs.readlinkSync(path.join(programDir(path.join(work, "program"), cluster, simDir), "node_modules", "@pulumi", "pulumi")),
      path.join(empty, "node_modules", "@pulumi", "pulumi"));
    fs.writeFileSync(path.join(empty, "Pulumi.yaml"), "name: empty\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.js\n");
    fs.writeFileSync(path.join(empty, "index.js"), 'const pulumi = require("@pulumi/pulumi");\nexports.stack = pulumi.getStack();\n');
    const cores = cpuWindow();
    const load0 = os.loadavg()[0];
    const emptyRun = await previews(empty, envVars, RUNS);
    const run = await previews(path.join(work, "program"), envVars, RUNS);
    const load1 = os.loadavg()[0];
    const shares = cores();
    const lines = run.stdout.split("\n");
    const deferred = [...new Set(lines.filter((l) => /at apply time/.test(l)).map((l) => l.trim()))];
    // "installer <image>: cp-1, w-1, …" lines of the plan (provider/handlers/messages.ts planImage).
    const imageNodes = lines.map((l) => /installer \S+: (.*)$/.exec(l)?.[1]).filter((x): x is string => x !== undefined)
      .reduce((n, names) => n + names.split(", ").reduce((k, name) => k + (Number(/^and (\d+) more/.exec(name)?.[1]) || 1), 0), 0);
    return { nodes, previewS: run.seconds, emptyS: emptyRun.seconds, deferred, imageNodes, load: [round(load0, 2), round(load1, 2)],
      cpu: { ...shares, speedMs: round(speedMs) } };
  } finally {
    await talosGate(["sim", "down", "--dir", simDir], 120_000).catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** For bench/main.ts. */
export async function metrics(): Promise<Metric[]> {
  const r = await benchPreview();
  process.stderr.write(`bench preview ${r.nodes}: ${JSON.stringify(r)}\n`);
  const where = `pulumi preview --diff of a Cluster, a Healthcheck and a TalosUpgrade over a ${r.nodes}-node sim, median of ${RUNS} after a warm-up; ` +
    machineNote(r.load[0], r.load[1], r.cpu);
  return [
    { name: `preview_seconds_${r.nodes}`, value: round(r.previewS, 2), unit: "s", compared_with: where },
    { name: `preview_seconds_empty_js`, value: round(r.emptyS, 2), unit: "s", compared_with: "an empty JavaScript program, same CLI, same run" },
    { name: `preview_ratio_${r.nodes}`, value: round(r.previewS / r.emptyS, 2), unit: "x", compared_with: "target < 3 against the empty program, with a complete plan" },
    {
      name: `preview_plan_complete_${r.nodes}`, value: r.deferred.length === 0 ? 1 : 0, unit: "1 = complete",
      compared_with: r.deferred.length === 0
        ? `every wave and every node's installer image in the plan (${r.imageNodes} nodes named by the image lines)`
        : `left for apply time: ${r.deferred.join(" | ").slice(0, 300)}`,
    },
  ];
}

if (require.main === module) {
  const n = Number(process.argv[2]) || NODES;
  benchPreview(n).then(
    (r) => process.stdout.write(JSON.stringify(r, null, 2) + "\n"),
    (e) => {
      process.stderr.write(String(e?.stack ?? e) + "\n");
      process.exit(1);
    },
  );
}
