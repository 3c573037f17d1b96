// The entry for parsing `maintenanceWindows`: windows.ts loads luxon and cron-parser (~60 ms of a provider process's
// start), which an input without windows, the usual case, does not need.
import { MaintenanceSchedule } from "./schedule";
import type * as Windows from "./windows";

/** windows.ts's parseMaintenanceWindows, loaded only for an input that has windows. */
export function parseMaintenanceWindows(input: unknown, field?: string): ReturnType<typeof Windows.parseMaintenanceWindows> {
  if (input === undefined || input === null) return { schedule: new MaintenanceSchedule([]), failures: [] };
  return (require("./windows") as typeof Windows).parseMaintenanceWindows(input, field);
}
