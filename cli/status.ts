// `talos-gate status [--kubeconfig K] [--cluster NAME] [-o table|yaml|json] [--watch]`: the live upgrade status a rollout
// mirrors into the cluster: by default a table of the machines (node, role, from → to, state, duration) above the
// document shaped like `omnictl get talosupgradestatus <cluster> -o yaml`: `metadata` (namespace, type, id, version,
// owner, phase, created, updated) and `spec` with Omni's TalosUpgradeStatusSpec fields in omnictl's rendering
// (lowercase Go field names, the phase enum as a number: 0 Unknown, 1 Upgrading, 2 Done, 3 Failed, 4 Reverting),
// followed by talos-gate's additions (phase name, target, wave, gate, per-machine and per-healthcheck state, and what
// the rollout asked of the Kubernetes API server: requests, watches, bytes read). `--watch` redraws on each change of
// the mirror ConfigMap, observed by a Kubernetes watch (cli/watch.ts), not by polling.
import * as path from "node:path";
import * as YAML from "yaml";
import { decodeApiStats } from "../provider/kube/status";
import { withCliErrors, coreApi, MirroredStatus, parseOptions, printable, readKubeconfig, readMirroredStatus, resolveCluster } from "./common";
import { CliError, cliMsg, STATUS_USAGE } from "./messages";
import { reportDuration } from "./reportModel";

/** Omni's TalosUpgradeStatusSpec.Phase numbers. */
// Waiting (a closed maintenance window) is not an Omni phase: shown as Upgrading, the upgrade is under way; phasename says Waiting.
export const PHASES: Record<string, number> = { Unknown: 0, Upgrading: 1, Done: 2, Failed: 3, Reverting: 4, UpdatingMachineSchematics: 5, Waiting: 1 };

const str = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v));

/** The omnictl-shaped document of a mirrored status. */
export function statusDocument(m: MirroredStatus): { metadata: Record<string, unknown>; spec: Record<string, unknown> } {
  const s = m.status;
  const meta = m.configMap.metadata ?? {};
  const created = meta.creationTimestamp ? new Date(meta.creationTimestamp as unknown as string).toISOString() : "";
  const phaseName = str(s.phase) || "Unknown";
  const api = decodeApiStats(m.configMap);
  const spec: Record<string, unknown> = {
    phase: Object.hasOwn(PHASES, phaseName) ? PHASES[phaseName] : 0,
    error: str(s.error),
    step: str(s.step),
    status: str(s.status),
    lastupgradeversion: str(s.lastUpgradeVersion),
    currentupgradeversion: str(s.currentUpgradeVersion),
    upgradeversions: [],
    // talos-gate's additions
    phasename: phaseName,
    target: str(s.target),
    wave: s.waves ? `${s.wave ?? 0}/${s.waves}` : "",
    gate: str(s.gate),
    ...(s.heldSince ? { heldsince: str(s.heldSince) } : {}),
    ...(s.nextRetryAt ? { nextretryat: str(s.nextRetryAt) } : {}),
    ...(s.startedAt ? { startedat: str(s.startedAt) } : {}),
    ...(s.finishedAt ? { finishedat: str(s.finishedAt) } : {}),
    machines: (Array.isArray(s.machines) ? s.machines : []).map((x: Record<string, unknown>) => ({
      name: str(x.name),
      role: str(x.role),
      from: str(x.from),
      to: str(x.to),
      state: str(x.state),
      ...(x.step ? { step: str(x.step) } : {}),
      ...(x.started ? { started: str(x.started) } : {}),
      ...(x.durationMs !== undefined ? { durationms: x.durationMs } : {}),
      ...(x.error ? { error: str(x.error) } : {}),
    })),
    healthchecks: (Array.isArray(s.healthchecks) ? s.healthchecks : []).map((h: Record<string, unknown>) => ({
      id: str(h.id),
      state: str(h.state),
      attempts: typeof h.attempts === "number" ? h.attempts : 0,
      ...(h.lastReason ? { lastreason: str(h.lastReason) } : {}),
      ...(h.lastRun ? { lastrun: str(h.lastRun) } : {}),
    })),
    ...(api ? { api: { requests: api.requests, watches: api.watches, bytesread: api.bytesRead } } : {}),
  };
  return {
    metadata: {
      namespace: meta.namespace ?? "kube-system",
      type: "TalosUpgradeStatuses.talos-gate.dev",
      id: m.cluster,
      version: Number(meta.resourceVersion) || str(meta.resourceVersion),
      owner: "talos-gate",
      phase: "running",
      created,
      updated: str(meta.annotations?.["talos-gate.dev/updated-at"]) || str(s.updatedAt) || created,
    },
    spec,
  };
}

/** YAML like omnictl's, with the phase name as a comment next to the phase number. */
export function statusYaml(doc: ReturnType<typeof statusDocument>): string {
  const d = new YAML.Document(doc);
  const phase = (d.get("spec") as YAML.YAMLMap).get("phase", true) as YAML.Scalar;
  phase.comment = ` ${Object.keys(PHASES).find((k) => PHASES[k] === phase.value) ?? "Unknown"}`;
  return d.toString({ lineWidth: 0 });
}

/** How `status` prints: the table above the YAML (the default), or one of them, or JSON. */
export type StatusOutput = "default" | "table" | "yaml" | "json";

/**
 * The machines as a kubectl-style table: node, role, from → to, state, and how long its upgrade took (or has taken so
 * far, at `now`, while it runs).
 */
export function statusTable(doc: ReturnType<typeof statusDocument>, now: number): string {
  const spec = doc.spec as { machines: Array<Record<string, unknown>>; phasename: string; status: string; step: string; error: string };
  const rows = spec.machines.map((m) => {
    const started = typeof m.started === "string" ? Date.parse(m.started) : NaN;
    const duration = typeof m.durationms === "number" ? reportDuration(m.durationms)
      : m.state === "upgrading" && !Number.isNaN(started) ? reportDuration(now - started) : "";
    return [str(m.name), str(m.role), `${str(m.from) || "?"} → ${str(m.to)}`, str(m.state) + (m.step && m.state === "upgrading" ? ` (${str(m.step)})` : ""), duration];
  });
  const head = cliMsg.statusTableColumns;
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("   ").trimEnd();
  const summary = cliMsg.statusTableSummary(doc.metadata.id as string, spec.phasename, spec.status, spec.error || spec.step);
  return [summary, line(head), ...rows.map(line)].join("\n") + "\n";
}

/** The status printed in the chosen output (a table, YAML, both, or JSON), made safe for a terminal. */
export function renderStatus(m: MirroredStatus, output: StatusOutput, now = Date.now()): string {
  const doc = statusDocument(m);
  if (output === "json") return printable(JSON.stringify(doc, null, 2) + "\n");
  if (output === "yaml") return printable(statusYaml(doc));
  if (output === "table") return printable(statusTable(doc, now));
  return printable(statusTable(doc, now) + "\n" + statusYaml(doc));
}

export function run(argv: string[]): Promise<number> {
  return withCliErrors("status", () => body(argv));
}

/** The output `-o` / `--json` ask for. */
export function outputOf(o: { output?: string; json?: boolean }): StatusOutput {
  if (o.json) return "json";
  if (o.output === undefined) return "default";
  if (o.output === "table" || o.output === "yaml" || o.output === "json") return o.output;
  throw new CliError(cliMsg.badOutput(o.output), 2);
}

async function body(argv: string[]): Promise<number> {
  const { values: o } = parseOptions("status", argv, {
    kubeconfig: { type: "string" },
    cluster: { type: "string" },
    output: { type: "string", short: "o" },
    json: { type: "boolean" },
    watch: { type: "boolean", short: "w" },
    help: { type: "boolean", short: "h" },
  });
  if (o.help) {
    process.stdout.write(STATUS_USAGE + "\n");
    return 0;
  }
  const output = outputOf(o);
  const kubeconfig = readKubeconfig(o.kubeconfig);
  const core = coreApi(kubeconfig.text);
  const cluster = await resolveCluster(core, o.cluster);
  if (cluster === undefined) throw new CliError(cliMsg.noStatusAtAll());
  if (o.watch) {
    const { watchStatus } = require("./watch") as typeof import("./watch");
    return watchStatus({ kubeconfigText: kubeconfig.text, kubeconfigDir: path.dirname(path.resolve(kubeconfig.file)), cluster, output });
  }
  const mirrored = await readMirroredStatus(core, cluster);
  if (!mirrored) throw new CliError(cliMsg.noStatus(cluster));
  process.stdout.write(renderStatus(mirrored, output));
  return 0;
}
