// What `talos-gate report` draws, derived from a mirrored status alone (PURE): per node its phase spans (gate hold,
// install, drain, reboot, back) from the compact marks the rollout stores (provider/rollout/timeline.ts), per check
// its holds. A mirror written before the marks existed still reads: its nodes have one "upgrade" span (start to end)
// and their phase durations are unknown.
import { parseHolds, parseMarks, type PhaseLetter } from "../provider/rollout/timeline";

export type ReportPhase = "gate" | "install" | "drain" | "reboot" | "back" | "upgrade";
/** The phases a report's columns and legend show, in a node's usual order. */
export const REPORT_PHASES: readonly ReportPhase[] = ["gate", "drain", "install", "reboot", "back"];

const LETTER_PHASE: Record<Exclude<PhaseLetter, "g">, ReportPhase> = { i: "install", d: "drain", r: "reboot", b: "back" };

export interface Span { phase: ReportPhase; start: number; end: number }

export interface NodeReport {
  name: string;
  role: string;
  from: string;
  to: string;
  state: string;
  wave?: number;
  error?: string;
  /** Time in each phase (ms); absent: unknown (an older mirror) or the node never reached it. */
  durations: Partial<Record<ReportPhase, number>>;
  /** Start of the node's upgrade to its end (ms); the gate wait is not in it. */
  totalMs?: number;
  spans: Span[];
  /** The mirror has this node's phase marks (written by a release that stores them). */
  detailed: boolean;
}

export interface CheckReport {
  id: string;
  state: string;
  attempts: number;
  lastReason: string;
  holds: Array<{ start: number; end: number; open: boolean }>;
}

export interface RolloutReport {
  cluster: string;
  phase: string;
  target: string;
  lastUpgradeVersion: string;
  error: string;
  /** Epoch ms; undefined when the mirror has no start (nothing ran). */
  startedAt?: number;
  /** The run's end, or the mirror's last update while it runs. */
  endAt?: number;
  running: boolean;
  nodes: NodeReport[];
  checks: CheckReport[];
}

const str = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v));
const time = (v: unknown): number | undefined => {
  const t = typeof v === "string" ? Date.parse(v) : NaN;
  return Number.isNaN(t) ? undefined : t;
};

/** A report of the mirrored status `s` (as decoded from the ConfigMap: untrusted shape, every field checked). */
export function buildReport(s: Record<string, unknown>): RolloutReport {
  const startedAt = time(s.startedAt);
  const finishedAt = time(s.finishedAt);
  const endAt = finishedAt ?? time(s.updatedAt) ?? startedAt;
  const machines = Array.isArray(s.machines) ? (s.machines as Array<Record<string, unknown>>).filter((m) => m && typeof m === "object") : [];
  const checks = Array.isArray(s.healthchecks) ? (s.healthchecks as Array<Record<string, unknown>>).filter((h) => h && typeof h === "object") : [];
  return {
    cluster: str(s.cluster),
    phase: str(s.phase) || "Unknown",
    target: str(s.target),
    lastUpgradeVersion: str(s.lastUpgradeVersion),
    error: str(s.error),
    ...(startedAt !== undefined ? { startedAt } : {}),
    ...(endAt !== undefined ? { endAt } : {}),
    running: finishedAt === undefined && startedAt !== undefined,
    nodes: machines.map((m) => nodeReport(m, startedAt, endAt)),
    checks: checks.map((h) => checkReport(h, startedAt, endAt)),
  };
}

function nodeReport(m: Record<string, unknown>, runStart: number | undefined, runEnd: number | undefined): NodeReport {
  const started = time(m.started);
  const end = time(m.finished) ?? (str(m.state) === "upgrading" ? runEnd : undefined);
  const marks = parseMarks(typeof m.marks === "string" ? m.marks : undefined);
  const base = {
    name: str(m.name), role: str(m.role), from: str(m.from), to: str(m.to), state: str(m.state),
    ...(typeof m.wave === "number" ? { wave: m.wave } : {}),
    ...(m.error ? { error: str(m.error) } : {}),
  };
  const spans: Span[] = [];
  const detailed = runStart !== undefined && Object.keys(marks).length > 0;
  if (runStart !== undefined && marks.g !== undefined) {
    const gateEnd = started ?? end ?? runEnd;
    if (gateEnd !== undefined) spans.push({ phase: "gate", start: runStart + marks.g, end: Math.max(runStart + marks.g, gateEnd) });
  }
  if (started !== undefined && end !== undefined) {
    const points = (Object.keys(LETTER_PHASE) as Array<keyof typeof LETTER_PHASE>)
      .filter((l) => marks[l] !== undefined && runStart !== undefined)
      .map((l) => ({ phase: LETTER_PHASE[l], at: runStart! + marks[l]! }))
      .sort((a, b) => a.at - b.at);
    if (points.length === 0) spans.push({ phase: "upgrade", start: started, end });
    // The first phase starts with the node (reading its installer image and version belongs to it).
    points.forEach((p, i) => {
      const from = i === 0 ? started : p.at;
      const to = i + 1 < points.length ? points[i + 1].at : end;
      spans.push({ phase: p.phase, start: from, end: Math.max(from, to) });
    });
  }
  const durations: Partial<Record<ReportPhase, number>> = {};
  for (const sp of spans) durations[sp.phase] = (durations[sp.phase] ?? 0) + (sp.end - sp.start);
  const totalMs = typeof m.durationMs === "number" ? m.durationMs : started !== undefined && end !== undefined ? end - started : undefined;
  return { ...base, durations, ...(totalMs !== undefined ? { totalMs } : {}), spans, detailed };
}

function checkReport(h: Record<string, unknown>, runStart: number | undefined, runEnd: number | undefined): CheckReport {
  const holds = runStart === undefined ? [] : parseHolds(typeof h.holds === "string" ? h.holds : undefined).map((x) => ({
    start: runStart + x.start,
    end: x.end !== undefined ? runStart + x.end : Math.max(runStart + x.start, runEnd ?? runStart + x.start),
    open: x.end === undefined,
  }));
  return {
    id: str(h.id), state: str(h.state), attempts: typeof h.attempts === "number" ? h.attempts : 0, lastReason: str(h.lastReason), holds,
  };
}

/** A duration for a report cell: tenths of a second below a minute ("0.4s", "12.3s"), else "2m5s", "1h0m12s". */
export function reportDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 60_000) return `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), sec = total % 60;
  return h > 0 ? `${h}h${m}m${sec}s` : `${m}m${sec}s`;
}
