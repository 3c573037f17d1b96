// Where each wave of a rollout bench run goes (bench/rollout.ts, issue 23.2): the provider's mirrored status (each
// machine's wave, started/finished and phase marks: provider/rollout/timeline.ts), the sim's own span per node (first
// upgrade call → booted again, `GET /node-times`) and, when traced, the provider's Kubernetes requests (the gate's Job
// POST, and the DELETE it sends at the pass) are put on one clock (epoch ms: the provider, the sim and the bench run on
// one machine). Each wave is followed along its critical node (the one that finished last). Method in bench/README.md.
// Offline: `node dist/bench/waves.js <file>.waves.json` (kept beside a BENCH_KUBE_TRACE=<file> run).
import * as fs from "node:fs";
import { percentile, round } from "./metrics";

/** A machine of the mirrored status, as far as the breakdown reads it. */
export interface StatusMachine {
  name: string;
  role?: string;
  wave?: number;
  started?: string;
  finished?: string;
  marks?: string;
}

/**
 * One upgrade as the sim measured it: its first upgrade call (epoch ms) → booted again (ms later), and of that the
 * node's own time (pull, install, reboot: not the caller's drain between install and Reboot).
 */
export interface SimSpan {
  node: string;
  at: number;
  ms: number;
  ownMs: number;
  /** Booted → the kubelet's Ready report of that boot in the API server (the sim's; absent on older sims). */
  reportedMs?: number;
}

export interface WaveInputs {
  /** The status's startedAt / finishedAt (ISO) and machines. */
  startedAt: string;
  finishedAt?: string;
  machines: StatusMachine[];
  spans: SimSpan[];
  /** TALOS_GATE_KUBE_TRACE lines ("<epoch ms> <METHOD> <path>"), when traced. */
  trace?: string[];
}

/** The parts of one wave, in ms, in the order they happen (a part is undefined when its inputs are missing). */
export interface WaveParts {
  wave: number;
  nodes: number;
  /** A control plane's wave (its gate asks etcd, its node holds the Lease through the reboot). */
  controlPlane: boolean;
  /** GateStarted → the wave's first NodeStarted: the whole gate (with the re-plan after it). */
  gate: number;
  /** …of which GateStarted → the Job's POST, the POST → the pass (its Job's DELETE), the pass → NodeStarted. */
  gateToPost?: number;
  postToPass?: number;
  passToStart?: number;
  /**
   * NodeStarted → the sim's first upgrade call: the pull, sent at once when the image was read during the gate (else
   * after the first look: Version and boot id, the installer image facts, the event stream).
   */
  startToCall: number;
  /** The first upgrade call → the drain (pull, beside the first look; install). */
  callToDrain: number;
  /**
   * The drain → the reboot asked (the cordon, sent as the pull began, landed; pod listing, VolumeAttachments; a control
   * plane's etcd and Lease).
   */
  drain: number;
  /** The reboot asked → booted again (the Reboot call and the sim's down time). */
  rebootToBooted: number;
  /** Booted again → Talos is seen back on the target (the look at the rebooting node). */
  bootedToBack: number;
  /** Back → NodeBack (the Node Ready on the target, the uncordon). */
  backToDone: number;
  /**
   * After the boot, on the critical node (when the sim and the trace give them): booted → the kubelet's Ready report in
   * the API server (the sim's kubelet: node time on a real cluster), that report → the uncordon's PATCH sent (the Node
   * watch and the provider), and that PATCH → NodeBack (its round trip, and the look if still out).
   */
  bootedToReported?: number;
  reportedToUncordon?: number;
  uncordonToDone?: number;
  /** The wave's last NodeBack → the next GateStarted (or the run's end). */
  doneToNext: number;
  /** GateStarted → the next GateStarted (or the run's end). */
  total: number;
  /** The critical node's own sim time (`ownMs`), and the slowest one's of the wave. */
  simCritical: number;
  simSlowest: number;
}

const MARK = /^([gidrb])(-?\d+)$/;

function marksOf(text: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (text ?? "").split(" ")) {
    const m = MARK.exec(part);
    if (m && out[m[1]] === undefined) out[m[1]] = Number(m[2]);
  }
  return out;
}

const JOB_POST = /^\/apis\/batch\/v1\/namespaces\/[^/]+\/jobs(\?|$)/;
const JOB_DELETE = /^\/apis\/batch\/v1\/namespaces\/[^/]+\/jobs\/[^/?]+(\?|$)/;

/** The trace's requests of one kind, by time. */
function traced(trace: string[] | undefined, method: string, path: RegExp): number[] {
  const out: number[] = [];
  for (const line of trace ?? []) {
    const [t, m, where] = line.split(" ");
    if (m === method && where && path.test(where)) out.push(Number(t));
  }
  return out.sort((a, b) => a - b);
}

const firstAtOrAfter = (sorted: number[], t: number, before: number) => sorted.find((x) => x >= t && x <= before);

/** Each wave's parts; waves whose machines lack marks or a sim span (a node not upgraded) are left out. */
export function waveParts(inp: WaveInputs): WaveParts[] {
  const run0 = Date.parse(inp.startedAt);
  const runEnd = inp.finishedAt ? Date.parse(inp.finishedAt) : NaN;
  // A node's last span: the upgrade of this run (an earlier one, e.g. of a previous run, started before it).
  const span = new Map<string, SimSpan>();
  for (const s of [...inp.spans].sort((a, b) => a.at - b.at)) if (s.at >= run0) span.set(s.node, s);
  const byWave = new Map<number, StatusMachine[]>();
  for (const m of inp.machines) {
    if (m.wave === undefined || !m.started || !m.finished) continue;
    byWave.set(m.wave, [...(byWave.get(m.wave) ?? []), m]);
  }
  const posts = traced(inp.trace, "POST", JOB_POST);
  const deletes = traced(inp.trace, "DELETE", JOB_DELETE);
  const waves = [...byWave.keys()].sort((a, b) => a - b);
  const gateOf = (w: number) => {
    const g = byWave.get(w)!.map((m) => marksOf(m.marks).g).find((x) => x !== undefined);
    return g === undefined ? undefined : run0 + g;
  };
  const out: WaveParts[] = [];
  for (const [i, w] of waves.entries()) {
    const ms = byWave.get(w)!;
    const g = gateOf(w);
    const start = Math.min(...ms.map((m) => Date.parse(m.started!)));
    const done = Math.max(...ms.map((m) => Date.parse(m.finished!)));
    const crit = ms.find((m) => Date.parse(m.finished!) === done)!;
    const s = span.get(crit.name);
    const k = marksOf(crit.marks);
    const next = i + 1 < waves.length ? gateOf(waves[i + 1]) : runEnd;
    if (g === undefined || !s || k.d === undefined || k.r === undefined || k.b === undefined || next === undefined || Number.isNaN(next)) continue;
    const spans = ms.map((m) => span.get(m.name)?.ownMs).filter((x): x is number => x !== undefined);
    const post = firstAtOrAfter(posts, g, start);
    const booted = s.at + s.ms;
    const reported = s.reportedMs === undefined ? undefined : booted + s.reportedMs;
    const nodePatches = traced(inp.trace, "PATCH", new RegExp(`^/api/v1/nodes/${crit.name}(\\?|$)`));
    const uncordon = firstAtOrAfter(nodePatches, booted, done);
    const pass = post === undefined ? undefined : firstAtOrAfter(deletes, post, start);
    out.push({
      wave: w, nodes: ms.length, controlPlane: ms.some((m) => m.role === "controlplane"),
      gate: start - g,
      ...(post !== undefined ? { gateToPost: post - g } : {}),
      ...(post !== undefined && pass !== undefined ? { postToPass: pass - post, passToStart: start - pass } : {}),
      startToCall: s.at - start,
      callToDrain: run0 + k.d - s.at,
      drain: k.r - k.d,
      rebootToBooted: s.at + s.ms - (run0 + k.r),
      bootedToBack: run0 + k.b - (s.at + s.ms),
      backToDone: done - (run0 + k.b),
      ...(reported !== undefined ? { bootedToReported: reported - booted } : {}),
      ...(reported !== undefined && uncordon !== undefined ? { reportedToUncordon: uncordon - reported } : {}),
      ...(uncordon !== undefined ? { uncordonToDone: done - uncordon } : {}),
      doneToNext: next - done,
      total: next - g,
      simCritical: s.ownMs,
      simSlowest: Math.max(...spans),
    });
  }
  return out;
}

/**
 * The overhead per wave with each wave's slowest node subtracted (a wave of parallel nodes lasts as long as its
 * slowest one): (rollout − Σ waves' slowest own node time) / waves. Undefined when a wave has no span.
 */
export function overheadSlowest(rolloutMs: number, waves: number, machines: StatusMachine[], spans: SimSpan[], startedAt: string): number | undefined {
  const run0 = Date.parse(startedAt);
  const spanOf = new Map<string, number>();
  for (const s of [...spans].sort((a, b) => a.at - b.at)) if (s.at >= run0) spanOf.set(s.node, s.ownMs);
  const slowest = new Map<number, number>();
  for (const m of machines) {
    const ms = spanOf.get(m.name);
    if (m.wave === undefined || ms === undefined) continue;
    slowest.set(m.wave, Math.max(slowest.get(m.wave) ?? 0, ms));
  }
  if (slowest.size !== waves) return undefined;
  return (rolloutMs - [...slowest.values()].reduce((a, b) => a + b, 0)) / waves;
}

const COLUMNS: Array<[keyof WaveParts, string]> = [
  ["gate", "gate (GateStarted → NodeStarted)"],
  ["gateToPost", "  GateStarted → Job POST"],
  ["postToPass", "  Job POST → pass (pod Succeeded seen, Job read)"],
  ["passToStart", "  pass → NodeStarted"],
  ["startToCall", "NodeStarted → first upgrade call (the pull; image read during the gate)"],
  ["callToDrain", "first call → drain (pull beside the first look, install) [sim node time]"],
  ["drain", "drain → reboot asked (the cordon sent at the pull, pods, VolumeAttachments)"],
  ["rebootToBooted", "reboot asked → booted (Reboot, down time) [sim node time]"],
  ["bootedToBack", "booted → seen back on the target (Talos looks)"],
  ["backToDone", "back → NodeBack (Ready on the target, uncordon)"],
  ["bootedToReported", "booted → the kubelet's Ready report in the API server [sim kubelet]"],
  ["reportedToUncordon", "  the report → the uncordon PATCH sent (Node watch, provider)"],
  ["uncordonToDone", "  the uncordon PATCH sent → NodeBack"],
  ["doneToNext", "last NodeBack → next GateStarted"],
  ["total", "wave (GateStarted → next GateStarted)"],
  ["simCritical", "sim node time of the critical node (pull, install, reboot)"],
  ["simSlowest", "sim node time of the wave's slowest node (pull, install, reboot)"],
];

/** The table of p50 (and p90) per part over the waves given: one line per part. */
export function partsTable(parts: WaveParts[], title: string): string {
  const lines = [`${title}: ${parts.length} waves, ms per wave, p50 / p90`];
  for (const [key, label] of COLUMNS) {
    const values = parts.map((p) => p[key]).filter((v): v is number => typeof v === "number").sort((a, b) => a - b);
    if (values.length === 0) continue;
    lines.push(`  ${label.padEnd(78)} ${String(round(percentile(values, 50), 0)).padStart(6)} ${String(round(percentile(values, 90), 0)).padStart(6)}`);
  }
  return lines.join("\n") + "\n";
}

/** The tables a bench run prints: every wave, and the worker waves only (control planes have etcd and Lease steps). */
export function breakdown(inp: WaveInputs): string {
  const parts = waveParts(inp);
  return partsTable(parts, "all waves") + partsTable(parts.filter((p) => !p.controlPlane), "worker waves");
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write("usage: node dist/bench/waves.js <file>.waves.json\n");
    process.exit(2);
  }
  const saved = JSON.parse(fs.readFileSync(file, "utf8")) as WaveInputs & { traceFile?: string };
  const trace = saved.traceFile && fs.existsSync(saved.traceFile) ? fs.readFileSync(saved.traceFile, "utf8").split("\n") : undefined;
  process.stdout.write(breakdown({ ...saved, ...(trace ? { trace } : {}) }));
}
