// Every user-visible message of maintenance windows: check-time failures (each names `maintenanceWindows[i]` and what
// is wrong) and the run/plan texts. PURE.

export const FORMS =
  'use "<days> <HH:MM>-<HH:MM> <IANA time zone>" (e.g. "Sat 02:00-06:00 Europe/Berlin", "Mon-Fri 22:00-02:00 UTC", ' +
  '"Sat,Sun 01:00-05:00 America/New_York") or { cron: "0 2 * * 6", duration: "4h", timeZone: "Europe/Berlin" }';

export const notAList = () => `must be a list of maintenance windows; ${FORMS}`;
export const windowShape = (got: unknown) =>
  `${JSON.stringify(got)} is not a maintenance window; ${FORMS}`;
export const windowParts = (text: string) =>
  `"${text}" must have three parts, days, time range and time zone; ${FORMS}`;
export const dayUnknown = (day: string) =>
  `"${day}" is not a day; use Mon, Tue, Wed, Thu, Fri, Sat, Sun (or full names), ranges like Mon-Fri and lists like Sat,Sun`;
export const timeRangeInvalid = (range: string) =>
  `"${range}" is not a time range; use 24-hour HH:MM-HH:MM, e.g. 02:00-06:00 (an end before the start crosses midnight, 24:00 is midnight)`;
export const timeRangeEmpty = (range: string) =>
  `"${range}" starts and ends at the same time; a window needs a length`;
export const zoneInvalid = (zone: string) =>
  `"${zone}" is not an IANA time zone; use a name such as Europe/Berlin, America/New_York or UTC`;
export const cronInvalid = (cron: string, detail: string) =>
  `"${cron}" is not a cron expression (${detail}); use five fields: minute hour day-of-month month day-of-week, e.g. "0 2 * * 6"`;
export const cronFields = (n: number) => `it has ${n} field${n === 1 ? "" : "s"}, not five`;
export const durationInvalid = (v: unknown, detail: string) =>
  `${JSON.stringify(v)} is not a duration (${detail}); use a Go duration such as "4h" or "90m"`;
export const durationTooShort = () => `a window must last at least 1m`;
export const unknownKey = (key: string) =>
  `unknown field "${key}"; a cron window has cron, duration and timeZone`;
export const missingKey = (key: string) => `${key} is required`;

/** An instant in a window's zone, with UTC beside it: `Sat 2026-08-08 02:00 Europe/Berlin (00:00 UTC)`. */
export const instant = (local: string, zone: string, utc: string) => `${local} ${zone} (${utc} UTC)`;

// --- run and plan
export const outsideWindow = (next: string) => `outside the maintenance window, resumes in the next one at ${next}`;
export const noWindowAhead = (days: number) =>
  `outside the maintenance window, and none opens within ${days} days; check maintenanceWindows`;
export const windowOpenUntil = (end: string) => `maintenance window open until ${end}`;
export const windowOpenAtLeastUntil = (end: string) => `maintenance window open until at least ${end} (adjoining windows without a gap)`;
export const firstNodeAt = (start: string) => `first node starts at ${start}, when the next maintenance window opens`;

// --- waiting for a window (issue 22.3). Omni has no maintenance windows (siderolabs/omni b1ea5df, client
// v1.10.0-beta.0-70: no "window" in controllers/omni/talosupgrade); the wording follows its step form
// "waiting for <what>: <detail>" (talosupgrade/status.go: "waiting for the cluster to be ready").
export const waitingForWindow = (next: string, remaining: string) =>
  `waiting for the maintenance window: next opens ${next}, in ${remaining}`;
