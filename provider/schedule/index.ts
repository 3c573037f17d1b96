// Maintenance windows (PURE): parse `maintenanceWindows`, ask whether a node may start now, when the window ends and
// when the next one begins.
export { formatInstant, formatRemaining, HORIZON_DAYS, MaintenanceSchedule, parseMaintenanceWindows, type WindowFailure, type WindowInput } from "./windows";
export { outsideWindow } from "./messages";
