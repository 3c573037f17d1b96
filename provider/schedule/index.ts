// Maintenance windows (PURE): parse `maintenanceWindows`, ask whether a node may start now, when the window ends and
// when the next one begins. Importing this loads neither luxon nor cron-parser (parse.ts, schedule.ts).
export { formatInstant, formatRemaining, HORIZON_DAYS, MaintenanceSchedule } from "./schedule";
export { parseMaintenanceWindows } from "./parse";
export type { WindowFailure, WindowInput } from "./windows";
export { outsideWindow } from "./messages";
