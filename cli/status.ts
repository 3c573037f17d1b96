// `talos-gate status [--kubeconfig K] [--cluster NAME] [--json]`: the live upgrade status a rollout mirrors into the
// cluster, shaped like `omnictl get talosupgradestatus <cluster> -o yaml`: `metadata` (namespace, type, id, version,
// owner, phase, created, updated) and `spec` with Omni's TalosUpgradeStatusSpec fields in omnictl's rendering
// (lowercase Go field names, the phase enum as a number: 0 Unknown, 1 Upgrading, 2 Done, 3 Failed, 4 Reverting),
// followed by talos-gate's additions (phase name, target, wave, gate, per-machine and per-healthcheck state, and what
// the rollout asked of the Kubernetes API server: requests, watches, bytes read).
import * as YAML from "yaml";
import { decodeApiStats } from "../provider/kube/status";
import { withCliErrors, coreApi, MirroredStatus, parseOptions, printable, readKubeconfig, readMirroredStatus, resolveCluster } from "./common";
import { CliError, cliMsg, STATUS_USAGE } from "./messages";

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

export function run(argv: string[]): Promise<number> {
  return withCliErrors("status", () => body(argv));
}

async function body(argv: string[]): Promise<number> {
  const { values: o } = parseOptions("status", argv, {
    kubeconfig: { type: "string" },
    cluster: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (o.help) {
    process.stdout.write(STATUS_USAGE + "\n");
    return 0;
  }
  const kubeconfig = readKubeconfig(o.kubeconfig);
  const core = coreApi(kubeconfig.text);
  const cluster = await resolveCluster(core, o.cluster);
  if (cluster === undefined) throw new CliError(cliMsg.noStatusAtAll());
  const mirrored = await readMirroredStatus(core, cluster);
  if (!mirrored) throw new CliError(cliMsg.noStatus(cluster));
  const doc = statusDocument(mirrored);
  process.stdout.write(printable(o.json ? JSON.stringify(doc, null, 2) + "\n" : statusYaml(doc)));
  return 0;
}
