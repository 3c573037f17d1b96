// `npm run demo`: the main job on the embedded default. Starts a simulated cluster (3 control planes + 2 workers on
// Talos v1.12.4), runs a real `pulumi up` of the quickstart (the repository's root Pulumi.yaml) with its gate closed,
// opens the gate once the upgrade is seen holding, and prints the progress and a final table.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "../provider/kube/k8s";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation";
import { startSimCluster } from "../sim/cluster";
import { packageRoot, toolsBin } from "../sim/tools";
import { formatDuration } from "../provider/rollout/messages";
import { CliError, cliMsg } from "./messages";

const GATE = { name: "talos-gate-demo", namespace: "default" };

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((c, i) => (c ?? "").padEnd(widths[i])).join("  ").trimEnd()).join("\n");
}

async function setGate(kubeconfig: string, open: boolean): Promise<void> {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const body = { metadata: { ...GATE }, data: { open: String(open) } };
  try {
    await core.replaceNamespacedConfigMap({ ...GATE, body });
  } catch {
    await core.createNamespacedConfigMap({ namespace: GATE.namespace, body });
  }
}

export async function run(argv: string[]): Promise<number> {
  // The demo's program is the repository's quickstart (root Pulumi.yaml), which the published package does not carry.
  if (!fs.existsSync(path.join(packageRoot, "Pulumi.yaml"))) throw new CliError(cliMsg.demoNeedsClone());
  const version = argv[argv.indexOf("--version") + 1] && argv.includes("--version") ? argv[argv.indexOf("--version") + 1] : "v1.13.2";
  const t0 = Date.now();
  const say = (line: string) => process.stdout.write(cliMsg.demoLine((Date.now() - t0) / 1000, line));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-demo-"));
  say(cliMsg.demoStarting());
  const sim = await startSimCluster({ controlPlanes: 3, workers: 2, version: "v1.12.4", bootSeconds: 3, dir: path.join(work, "sim") });
  try {
    say(cliMsg.demoClusterUp(sim.kubeconfigPath, sim.talosconfigPath));
    await setGate(sim.kubeconfig, false);
    say(cliMsg.demoGateClosed(`${GATE.namespace}/${GATE.name}`));

    fs.mkdirSync(path.join(work, "state"));
    const envVars = {
      PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`,
      PULUMI_HOME: path.join(work, "home"),
      PULUMI_CONFIG_PASSPHRASE: "talos-gate-demo",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      TALOS_GATE_SIM_DIR: sim.dir,
      PATH: `${toolsBin}:${process.env.PATH ?? ""}`,
    };
    const stack = await LocalWorkspace.createOrSelectStack({ stackName: "demo", workDir: packageRoot }, {
      pulumiCommand: await PulumiCommand.get({ root: path.dirname(toolsBin) }),
      envVars,
    });
    await stack.setConfig("version", { value: version });
    await stack.setConfig("interval", { value: "5s" });

    say(cliMsg.demoPreview());
    const preview = await stack.preview({ diff: true });
    // The plan is the TalosUpgrade's `plan` property in the diff (shown once as input, once as output).
    const planLines = [...new Set([...preview.stdout.matchAll(/"((?:upgrade|revert)[^"]*waves?[^"]*|\d+\. [^"]+)"/g)].map((m) => m[1]))];
    for (const line of planLines) say(`  ${line}`);

    say(cliMsg.demoUp(version));
    let opened = false;
    // The status clears a check's reason once it passes (as Omni does); the demo keeps the last one it saw.
    const lastFailure = new Map<string, string>();
    let lastLive = "";
    const up = await stack.up({
      // The rollout reports on the TalosUpgrade's row: kept lines per transition, and one live (ephemeral) line that
      // replaces itself; the demo prints the kept ones and each new live line that shows the gate held.
      onEvent: (event) => {
        const d = event.diagnosticEvent;
        if (!d || !/:TalosUpgrade::/.test(d.urn ?? "")) return;
        const text = d.message.trim();
        if (!d.ephemeral) {
          const m = /\[talos-gate\/[^\]]+\] (.*)$/.exec(text);
          if (m) say(m[1].trim());
          return;
        }
        if (!/gate held/.test(text) || text === lastLive) return;
        lastLive = text;
        say(text);
        for (const held of text.matchAll(/"([^"]+)": (.*?)(?=; "| \(wave \d|$)/g)) lastFailure.set(held[1], held[2].trim());
        if (!opened) {
          opened = true;
          setTimeout(() => {
            say(cliMsg.demoOpening(`${GATE.namespace}/${GATE.name}`));
            void setGate(sim.kubeconfig, true);
          }, 4000);
        }
      },
    });
    const status = up.outputs.status?.value ?? {};
    say(cliMsg.demoUpDone(up.summary.result, status.phase, status.lastUpgradeVersion));
    process.stdout.write("\n" + table([
      ["NODE", "ROLE", "FROM", "TO", "DURATION"],
      ...(status.machines ?? []).map((m: any) => [m.name, m.role, m.from, m.to, m.durationMs ? formatDuration(m.durationMs) : "-"]),
    ]) + "\n\n" + table([
      ["HEALTHCHECK", "ATTEMPTS", "STATE", "LAST FAILURE"],
      ...(status.healthchecks ?? []).map((h: any) =>
        [h.id, String(h.attempts), h.state, (h.lastReason || lastFailure.get(h.id) || "-").replace(/\s+/g, " ")]),
    ]) + "\n\n");
    const again = await stack.preview();
    say(cliMsg.demoSecondPreview(JSON.stringify(again.changeSummary)));
    await stack.workspace.removeStack("demo", { force: true }).catch(() => undefined);
    return status.phase === "Done" ? 0 : 1;
  } finally {
    await sim.stop();
    fs.rmSync(work, { recursive: true, force: true });
    say(cliMsg.demoStopped());
  }
}
