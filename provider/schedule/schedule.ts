// A maintenance schedule once parsed (windows.ts parses it): whether a node may start now, when the window ends and
// when the next one begins. Kept apart from the parser so that a TalosUpgrade without windows, the usual case, never
// loads luxon and cron-parser: every provider process (each preview and up) parses its inputs, and the two took ~60 ms
// of its start. luxon is loaded here only to print an instant, which only a schedule with windows does. PURE.
import * as M from "./messages";

function luxon(): typeof import("luxon") {
  return require("luxon") as typeof import("luxon");
}

export interface Interval {
  start: number;
  end: number;
}

/** One window source: its occurrences in time. */
export interface Source {
  zone: string;
  /** Canonical form: two sources with the same key open at the same times. */
  key: string;
  /** Occurrences with start ≤ t < end; each cron step taken is counted off `work` when given. */
  containing(t: number, work?: { left: number }): Interval[];
  /** The earliest occurrence starting strictly after t, searching at most `horizonMs` ahead. */
  firstStartAfter(t: number, horizonMs: number): number | undefined;
}

export const DAY_MS = 86_400_000;
/** How far ahead a next window is searched, and how long a chain of adjoining windows is followed. */
export const HORIZON_DAYS = 366;
/**
 * Cron steps a chain of adjoining windows may take (a daily window is 366 over the horizon): `* * * * *` for 1m
 * adjoins every minute, half a million windows a year; past this the plan says "open at least until".
 */
const MAX_CHAIN_WORK = 20_000;

/** Maintenance windows: no node starts outside them. An empty schedule is always open. */
export class MaintenanceSchedule {
  constructor(private readonly sources: readonly Source[]) {}

  /** Canonical form of the windows (sorted, duplicates once), whatever their spelling. */
  get key(): string[] {
    return [...new Set(this.sources.map((s) => s.key))].sort();
  }

  /** True when there are no windows (no restriction). */
  get unrestricted(): boolean {
    return this.sources.length === 0;
  }

  isOpen(now: Date): boolean {
    const t = now.getTime();
    return this.unrestricted || this.sources.some((s) => s.containing(t).length > 0);
  }

  /**
   * When the window open at `now` closes (adjoining and overlapping windows merged), undefined when closed or
   * unrestricted. A chain longer than the horizon ends at the horizon.
   */
  currentWindowEnd(now: Date): Date | undefined {
    return this.windowEnd(now)?.end;
  }

  /** The current window's end, and whether the chain of adjoining windows was cut at MAX_CHAIN (then "at least"). */
  private windowEnd(now: Date): { end: Date; atLeast: boolean } | undefined {
    if (this.unrestricted) return undefined;
    const t = now.getTime();
    const limit = t + HORIZON_DAYS * DAY_MS;
    let end: number | undefined;
    const work = { left: MAX_CHAIN_WORK };
    for (let probe = t; probe < limit; ) {
      if (work.left <= 0 && end !== undefined) return { end: new Date(end), atLeast: true };
      const ends = this.sources.flatMap((s) => s.containing(probe, work)).map((i) => i.end);
      if (ends.length === 0) break;
      end = Math.max(...ends);
      probe = end;
    }
    return end === undefined ? undefined : { end: new Date(Math.min(end, limit)), atLeast: false };
  }

  /** The next window start strictly after `now` (within the horizon), and the zone of that window. */
  nextWindow(now: Date): { start: Date; timeZone: string } | undefined {
    const t = now.getTime();
    let best: { start: number; zone: string } | undefined;
    for (const s of this.sources) {
      const start = s.firstStartAfter(t, HORIZON_DAYS * DAY_MS);
      if (start !== undefined && (!best || start < best.start)) best = { start, zone: s.zone };
    }
    return best && { start: new Date(best.start), timeZone: best.zone };
  }

  nextWindowStart(now: Date): Date | undefined {
    return this.nextWindow(now)?.start;
  }

  /** Why no node may start now, or undefined when one may: "outside the maintenance window, resumes in ... at <time>". */
  closedReason(now: Date): string | undefined {
    if (this.isOpen(now)) return undefined;
    const next = this.nextWindow(now);
    return next ? M.outsideWindow(formatInstant(next.start, next.timeZone)) : M.noWindowAhead(HORIZON_DAYS);
  }

  /**
   * Why no node may start now, when a later run may (the next window opens within the horizon): "waiting for the
   * maintenance window: next opens <instant>, in 3h12m". Undefined when open, or when no window opens ahead (then
   * `closedReason` says so: waiting would never end).
   */
  waitingReason(now: Date): string | undefined {
    if (this.isOpen(now)) return undefined;
    const next = this.nextWindow(now);
    return next ? M.waitingForWindow(formatInstant(next.start, next.timeZone), formatRemaining(next.start.getTime() - now.getTime())) : undefined;
  }

  /** For the plan: until when the current window is open, or when the first node would start. */
  planLine(now: Date): string | undefined {
    if (this.unrestricted) return undefined;
    const open = this.windowEnd(now);
    if (open) {
      const text = formatInstant(open.end, this.zoneAt(now));
      return open.atLeast ? M.windowOpenAtLeastUntil(text) : M.windowOpenUntil(text);
    }
    const next = this.nextWindow(now);
    return next ? M.firstNodeAt(formatInstant(next.start, next.timeZone)) : M.noWindowAhead(HORIZON_DAYS);
  }

  private zoneAt(now: Date): string {
    const t = now.getTime();
    return this.sources.find((s) => s.containing(t).length > 0)?.zone ?? this.sources[0].zone;
  }
}

/** A wait ahead, to the minute (rounded up, so never "0m"): "45m", "3h12m", "2d4h". */
export function formatRemaining(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  const d = Math.floor(minutes / 1440), h = Math.floor((minutes % 1440) / 60), m = minutes % 60;
  if (d > 0) return `${d}d${h}h`;
  return h > 0 ? `${h}h${m}m` : `${m}m`;
}

/** `Sat 2026-08-08 02:00 Europe/Berlin (00:00 UTC)`; the UTC date is shown too when it differs; UTC zones once. */
export function formatInstant(at: Date, zone: string): string {
  const { DateTime } = luxon();
  const local = DateTime.fromJSDate(at, { zone });
  const text = local.toFormat("ccc yyyy-MM-dd HH:mm");
  if (local.offset === 0 && /^(Etc\/)?(UTC|GMT|UCT|Zulu)$/i.test(zone)) return `${text} ${zone}`;
  const utc = DateTime.fromJSDate(at, { zone: "UTC" });
  const utcText = utc.toISODate() === local.toISODate() ? utc.toFormat("HH:mm") : utc.toFormat("yyyy-MM-dd HH:mm");
  return M.instant(text, zone, utcText);
}
