// What a rollout shows while it runs (issue 22.4), PURE: which transitions are worth a permanent line, and the one
// live line that replaces itself ("[3/12 25%] w-2: draining (wave 3/7)").
import type { StatusEvent, UpgradeStatus } from "./status";
import { countMachines } from "./machineList";
import * as msg from "./messages";

/**
 * Transitions kept as permanent lines: a node started, done or failed, the gate open, a wave done, the run's start
 * and end. A node's steps, a held gate and the soak are live only.
 */
const KEPT: ReadonlySet<StatusEvent["type"]> = new Set<StatusEvent["type"]>([
  "RunStarted", "GatePassed", "NodeStarted", "NodeBack", "NodeFailed", "NodeSetAside", "NodeArmed", "NodeDisarmed", "WaveDone",
  "SoakDone", "RunFinished", "RunFailed", "RunWaiting",
]);

export function isKeptTransition(e: StatusEvent): boolean {
  return KEPT.has(e.type) || (e.type === "HookFinished" && e.error !== undefined);
}

/** The live line of `s` at `now` (epoch ms). */
export function liveLine(s: UpgradeStatus, now: number): string {
  const done = countMachines(s.machines, (m) => m.state === "done" || m.state === "skipped");
  return msg.liveLine(done, s.machines.length, activity(s, now), s.wave, s.waves);
}

function activity(s: UpgradeStatus, now: number): string {
  const inFlight = s.machines.filter((m) => m.state === "upgrading").map((m) => ({ name: m.name, step: m.step ?? msg.LIVE_NODE_STARTING }));
  if (inFlight.length) return msg.liveNodes(inFlight);
  const open = s.healthchecks.filter((h) => h.state !== "PASSED");
  if (s.gate === "held") return msg.liveGateHeld(s.heldSince ? now - Date.parse(s.heldSince) : 0, open);
  if (s.gate === "checking" && open.length) return msg.liveGateChecking(open.map((h) => h.id));
  return s.step || s.status || msg.LIVE_DONE;
}
