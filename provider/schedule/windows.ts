// Maintenance windows: when a node may start its upgrade. Two forms, freely mixed (a schedule is their union):
//   "Sat 02:00-06:00 Europe/Berlin"  days (Mon, Mon-Fri, Sat,Sun, Fri-Mon), a wall-clock range (an end before the
//                                     start crosses midnight; 24:00 is midnight) and an IANA zone
//   { cron: "0 2 * * 6", duration: "4h", timeZone: "Europe/Berlin" }   a start by cron, lasting an elapsed duration
// Wall-clock ranges follow the zone's clock across DST: "01:00-05:00" lasts 3 h on the spring-forward night and 5 h on
// the fall-back night; a start in the skipped hour begins when the clock jumps; an ambiguous wall time (the repeated
// hour) is the later of the two (luxon's choice, the shorter window). Cron starts are cron-parser's: in the skipped
// hour they fire at the jump, in the repeated hour once; `H` is seeded by the window, so it means the same minute in
// every preview and run. PURE (luxon for zones and calendars, cron-parser for cron).
import { CronExpressionParser } from "cron-parser";
import { DateTime, IANAZone } from "luxon";
import { parseDuration } from "../template/duration";
import * as M from "./messages";
import { DAY_MS, Interval, MaintenanceSchedule, Source } from "./schedule";

/** One window as a user writes it. */
export type WindowInput = string | { cron: string; duration: string; timeZone: string };

const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const FULL = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
function dayIndex(s: string): number | undefined {
  const l = s.toLowerCase();
  const i = DAYS.indexOf(l);
  if (i >= 0) return i + 1; // luxon weekday: Monday = 1
  const j = FULL.indexOf(l);
  return j >= 0 ? j + 1 : undefined;
}

function parseDays(text: string, field: string, failures: WindowFailure[]): Set<number> | undefined {
  const days = new Set<number>();
  for (const item of text.split(",")) {
    const [a, b, ...rest] = item.split("-");
    const from = dayIndex(a);
    const to = b === undefined ? from : dayIndex(b);
    if (from === undefined || to === undefined || rest.length > 0) {
      failures.push({ field, message: M.dayUnknown(item) });
      return undefined;
    }
    for (let d = from; ; d = (d % 7) + 1) {
      days.add(d);
      if (d === to) break;
    }
  }
  return days;
}

function parseClock(s: string): number | undefined {
  const m = /^([01]?\d|2[0-4]):([0-5]\d)$/.exec(s);
  if (!m) return undefined;
  const minutes = Number(m[1]) * 60 + Number(m[2]);
  return minutes <= 24 * 60 ? minutes : undefined;
}

/** Local wall-clock `minutes` after midnight of `day`, as an instant (24:00 = next midnight). */
function at(day: DateTime, minutes: number): number {
  const base = minutes >= 24 * 60 ? day.plus({ days: 1 }) : day;
  const m = minutes % (24 * 60);
  return DateTime.fromObject({ year: base.year, month: base.month, day: base.day, hour: Math.floor(m / 60), minute: m % 60 }, { zone: day.zone }).toMillis();
}

function weeklySource(days: Set<number>, startMin: number, endMin: number, zone: string): Source {
  const crosses = endMin <= startMin;
  const occurrence = (day: DateTime): Interval | undefined => {
    if (!days.has(day.weekday)) return undefined;
    const start = at(day, startMin);
    const end = at(crosses ? day.plus({ days: 1 }) : day, endMin);
    return end > start ? { start, end } : undefined;
  };
  const localDay = (t: number) => DateTime.fromMillis(t, { zone }).startOf("day");
  return {
    zone,
    key: `weekly ${[...days].sort().join(",")} ${startMin}-${endMin} ${zone}`,
    containing(t) {
      const out: Interval[] = [];
      for (let i = -2; i <= 0; i++) {
        const o = occurrence(localDay(t).plus({ days: i }));
        if (o && o.start <= t && t < o.end) out.push(o);
      }
      return out;
    },
    firstStartAfter(t, horizonMs) {
      const days = Math.ceil(horizonMs / DAY_MS) + 1;
      const first = localDay(t);
      for (let i = 0; i <= Math.min(days, 8); i++) {
        const o = occurrence(first.plus({ days: i }));
        if (o && o.start > t && o.start - t <= horizonMs) return o.start;
      }
      return undefined;
    },
  };
}

/**
 * cron-parser's `H` (a hashed value) is random per parse unless seeded: the plan said 02:02 and the run's closed
 * reason 02:29. Seeded by the window itself, it is the same in every preview and run.
 */
const hashSeedOf = (cron: string, zone: string) => `talos-gate ${cron} ${zone}`;

function cronSource(cron: string, durationMs: number, zone: string): Source {
  // Parsed once and moved with reset(): a parse per probe was most of the 41 s an every-minute window cost the plan.
  const it = CronExpressionParser.parse(cron, { tz: zone, hashSeed: hashSeedOf(cron, zone) });
  const from = (t: number) => {
    it.reset(new Date(t));
    return it;
  };
  return {
    zone,
    key: `cron ${cron.split(/\s+/).join(" ")} ${durationMs} ${zone}`,
    containing(t, work) {
      // Starts in (t - duration, t] contain t. Walked forward with next(): cron-parser's prev() skips a start that
      // fell into the spring-forward gap (it fires at the jump going forward, but prev() from after it misses it) and
      // sees the repeated fall-back hour twice.
      const starts = from(t - durationMs);
      let latest: number | undefined;
      for (let i = 0; i < 10_000; i++) {
        if (work) work.left--;
        const start = starts.next().getTime();
        if (start > t) break;
        latest = start;
      }
      return latest === undefined ? [] : [{ start: latest, end: latest + durationMs }];
    },
    firstStartAfter(t, horizonMs) {
      const start = from(t).next().getTime();
      return start > t && start - t <= horizonMs ? start : undefined;
    },
  };
}

function parseText(text: string, field: string, failures: WindowFailure[]): Source | undefined {
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 3) {
    failures.push({ field, message: M.windowParts(text) });
    return undefined;
  }
  const [daysText, range, zone] = parts;
  const before = failures.length;
  const days = parseDays(daysText, field, failures);
  const [a, b, ...rest] = range.split("-");
  const start = parseClock(a);
  const end = b === undefined ? undefined : parseClock(b);
  if (start === undefined || end === undefined || rest.length > 0 || start === 24 * 60) {
    failures.push({ field, message: M.timeRangeInvalid(range) });
  } else if (start === end) {
    failures.push({ field, message: M.timeRangeEmpty(range) });
  }
  if (!IANAZone.isValidZone(zone)) failures.push({ field, message: M.zoneInvalid(zone) });
  if (failures.length > before || !days || start === undefined || end === undefined) return undefined;
  return weeklySource(days, start, end, zone);
}

const CRON_KEYS = ["cron", "duration", "timeZone"];

function parseCron(v: Record<string, unknown>, field: string, failures: WindowFailure[]): Source | undefined {
  const before = failures.length;
  for (const k of Object.keys(v)) if (!CRON_KEYS.includes(k)) failures.push({ field, message: M.unknownKey(k) });
  const missing = CRON_KEYS.filter((k) => typeof v[k] !== "string" || v[k] === "");
  for (const k of missing) failures.push({ field: `${field}.${k}`, message: M.missingKey(k) });
  if (missing.length > 0) return undefined;
  const cron = (v.cron as string).trim(), zone = v.timeZone as string;
  let durationMs = 0;
  try {
    durationMs = parseDuration(v.duration as string);
    if (durationMs < 60_000) failures.push({ field: `${field}.duration`, message: M.durationTooShort() });
  } catch (err) {
    failures.push({ field: `${field}.duration`, message: M.durationInvalid(v.duration, (err as Error).message) });
  }
  const zoneOk = IANAZone.isValidZone(zone);
  if (!zoneOk) failures.push({ field: `${field}.timeZone`, message: M.zoneInvalid(zone) });
  const fields = cron.split(/\s+/).length;
  if (fields !== 5) failures.push({ field: `${field}.cron`, message: M.cronInvalid(cron, M.cronFields(fields)) });
  else {
    try {
      CronExpressionParser.parse(cron, zoneOk ? { tz: zone, hashSeed: hashSeedOf(cron, zone) } : {}).next();
    } catch (err) {
      failures.push({ field: `${field}.cron`, message: M.cronInvalid(cron, (err as Error).message) });
    }
  }
  return failures.length > before ? undefined : cronSource(cron, durationMs, zone);
}

export interface WindowFailure {
  /** `maintenanceWindows[i]` or `maintenanceWindows[i].cron` ... */
  field: string;
  message: string;
}

/**
 * Parses `maintenanceWindows` (undefined or [] = unrestricted). Every failure names `<field>[i]` and what is wrong.
 */
export function parseMaintenanceWindows(input: unknown, field = "maintenanceWindows"):
  { schedule: MaintenanceSchedule; failures: [] } | { schedule?: undefined; failures: WindowFailure[] } {
  if (input === undefined || input === null) return { schedule: new MaintenanceSchedule([]), failures: [] };
  if (!Array.isArray(input)) return { failures: [{ field, message: M.notAList() }] };
  const failures: WindowFailure[] = [];
  const sources: Source[] = [];
  input.forEach((w, i) => {
    const f = `${field}[${i}]`;
    let s: Source | undefined;
    if (typeof w === "string") s = parseText(w, f, failures);
    else if (w && typeof w === "object" && !Array.isArray(w)) s = parseCron(w as Record<string, unknown>, f, failures);
    else failures.push({ field: f, message: M.windowShape(w) });
    if (s) sources.push(s);
  });
  return failures.length > 0 ? { failures } : { schedule: new MaintenanceSchedule(sources), failures: [] };
}
