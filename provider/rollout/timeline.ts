// Each node's phase timestamps and each check's holds, kept in the status compactly so `talos-gate report` can draw the
// rollout from the status mirror alone. PURE: no clock, no I/O.
//
// Why a string and not objects: the mirror rewrites the whole status (a 1,000-node status is ~200 KB), so every byte
// per node counts a thousand times per write. A machine's `marks` is "g-1520 i0 d830 r1900 b4100": a letter per phase,
// then milliseconds since the run started (`startedAt`; negative cannot happen but parses). Only the first mark of each
// phase is kept (a step repeated with a new detail does not move it). Letters:
//   g  the gate before the node's wave started (first attempt)
//   i  install: the installer is pulled or installed (the Talos port's first "pulling" or "installing")
//   d  drain
//   r  reboot: the reboot was asked for (then the wait for the new boot id)
//   b  back: Talos runs the target; then the uncordon and the Node's Ready (the machine's `finished` ends it)
// A check's `holds` is "1200-5300 9000-": spans of the run (ms since `startedAt`) in which the check held the gate;
// a trailing "-" is a hold still open. At most MAX_HOLDS spans per check are kept (the latest).
// Older mirrors have neither field: readers treat both as absent (a report then shows totals only).

import type { HealthcheckStatus, MachineStatus, StatusEvent, UpgradeStatus } from "./status";
import { replaceMachine } from "./machineList";

export const PHASE_LETTERS = ["g", "i", "d", "r", "b"] as const;
export type PhaseLetter = (typeof PHASE_LETTERS)[number];

/** Spans kept per check: a check failing for hours at a short interval stays small. */
export const MAX_HOLDS = 64;

const STEP_LETTER: Record<string, PhaseLetter | undefined> = {
  pulling: "i", installing: "i", draining: "d", rebooting: "r", waiting: "r", back: "b",
};

/** The marks of a machine, by letter (absent or unreadable text: none). */
export function parseMarks(text: string | undefined): Partial<Record<PhaseLetter, number>> {
  const out: Partial<Record<PhaseLetter, number>> = {};
  for (const part of (text ?? "").split(" ")) {
    const letter = part[0] as PhaseLetter;
    const ms = Number(part.slice(1));
    if (PHASE_LETTERS.includes(letter) && part.length > 1 && Number.isFinite(ms) && out[letter] === undefined) out[letter] = ms;
  }
  return out;
}

function addMark(marks: string | undefined, letter: PhaseLetter, offset: number): string {
  if (parseMarks(marks)[letter] !== undefined) return marks!;
  return marks ? `${marks} ${letter}${offset}` : `${letter}${offset}`;
}

/** A check's hold spans (`end` undefined: still holding). */
export function parseHolds(text: string | undefined): Array<{ start: number; end?: number }> {
  const out: Array<{ start: number; end?: number }> = [];
  for (const part of (text ?? "").split(" ")) {
    const m = /^(-?\d+)-(\d*)$/.exec(part);
    if (!m) continue;
    out.push({ start: Number(m[1]), ...(m[2] !== "" ? { end: Number(m[2]) } : {}) });
  }
  return out;
}

const isOpen = (holds: string | undefined) => (holds ?? "").endsWith("-");

function openHold(holds: string | undefined, offset: number): string {
  if (isOpen(holds)) return holds!;
  const spans = holds ? holds.split(" ") : [];
  spans.push(`${offset}-`);
  return spans.slice(Math.max(0, spans.length - MAX_HOLDS)).join(" ");
}

function closeHold(holds: string | undefined, offset: number): string | undefined {
  return isOpen(holds) ? `${holds}${offset}` : holds;
}

function mapMachines(s: UpgradeStatus, f: (m: MachineStatus) => MachineStatus): UpgradeStatus {
  return { ...s, machines: s.machines.map(f) };
}

function mapChecks(s: UpgradeStatus, f: (h: HealthcheckStatus) => HealthcheckStatus): UpgradeStatus {
  return { ...s, healthchecks: s.healthchecks.map(f) };
}

function closeAllHolds(s: UpgradeStatus, offset: number): UpgradeStatus {
  if (!s.healthchecks.some((h) => isOpen(h.holds))) return s;
  return mapChecks(s, (h) => (isOpen(h.holds) ? { ...h, holds: closeHold(h.holds, offset) } : h));
}

/**
 * The timeline part of one event, applied to the status the reducer made of it (`s`, already after the event):
 * phase marks on machines, hold spans on checks. A run start forgets the previous run's spans (they were relative
 * to its start).
 */
export function recordTimeline(s: UpgradeStatus, e: StatusEvent): UpgradeStatus {
  if (e.type === "RunStarted") return mapChecks(s, ({ holds: _h, ...h }) => h);
  const started = s.startedAt !== undefined ? Date.parse(s.startedAt) : undefined;
  if (started === undefined || Number.isNaN(started)) return s;
  const offset = e.at - started;
  switch (e.type) {
    case "GateStarted":
      return mapMachines(s, (m) => (m.wave === e.wave && m.state === "pending" ? { ...m, marks: addMark(m.marks, "g", offset) } : m));
    case "NodeStarted":
      // A node started again (resumed in the same run) keeps only its gate mark.
      return { ...s, machines: replaceMachine(s.machines, e.node, keepGate) };
    case "NodeStep": {
      const letter = STEP_LETTER[e.step];
      if (!letter) return s;
      return { ...s, machines: replaceMachine(s.machines, e.node, (m) => ({ ...m, marks: addMark(m.marks, letter, offset) })) };
    }
    case "GateHeld":
      return mapChecks(s, (h) => (h.state !== "PASSED" ? { ...h, holds: openHold(h.holds, offset) } : h));
    case "CheckFinished":
      if (e.outcome.state !== "passed") return s;
      return mapChecks(s, (h) => (h.id === e.id && isOpen(h.holds) ? { ...h, holds: closeHold(h.holds, offset) } : h));
    case "GatePassed":
    case "RunFinished":
    case "RunFailed":
      return closeAllHolds(s, offset);
    default:
      return s;
  }
}

function keepGate({ marks, ...m }: MachineStatus): MachineStatus {
  const g = parseMarks(marks).g;
  return g === undefined ? m : { ...m, marks: `g${g}` };
}
