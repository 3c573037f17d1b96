// A rollout's progress for Pulumi (issue 22.4): on the TalosUpgrade's row, the live line as ephemeral status and the
// kept transitions as info lines; outside the engine, every progress line on stdout (as before).
import { isKeptTransition, liveLine } from "../rollout/live";
import type { StatusEvent, UpgradeStatus } from "../rollout/status";
import { rowLog } from "./rowLog";

export interface RolloutProgress {
  onEvent(event: StatusEvent, status: UpgradeStatus, line: string | undefined): void;
  /** A kept line no transition carries (a path step starting, a leftover cordon lifted). */
  note(line: string): void;
  /** Bounded: the last lines reach the engine before the step ends. */
  flush(): Promise<void>;
}

export function rolloutProgress(urn: string | undefined): RolloutProgress {
  const row = rowLog(urn);
  return {
    onEvent(event, status, line) {
      if (!row.connected) {
        if (line !== undefined) row.info(line);
        return;
      }
      if (line !== undefined && isKeptTransition(event)) row.info(line);
      // Built when sent (coalesced), from the status of this event: statuses are never changed in place.
      row.status(() => liveLine(status, status.updatedAt ? Date.parse(status.updatedAt) : event.at));
    },
    note: (line) => row.info(line),
    flush: () => row.flush(),
  };
}
