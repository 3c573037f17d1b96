// Kubernetes Events on Nodes for a node's upgrade (issue 22.5): TalosUpgradeStarted, TalosUpgraded and
// TalosUpgradeFailed with from/to and the reason, so `kubectl describe node` and event exporters see the rollout. PURE:
// which Event a transition gives; the run hands it to the port, which writes it best effort.
import type { RolloutEvent } from "./ports";
import type { StatusEvent, UpgradeStatus } from "./status";
import { countMachines, machineNamed } from "./machineList";
import * as msg from "./messages";

export function nodeEventFor(e: StatusEvent, s: UpgradeStatus): RolloutEvent | undefined {
  if (e.type !== "NodeStarted" && e.type !== "NodeBack" && e.type !== "NodeFailed") return undefined;
  const m = machineNamed(s.machines, e.node);
  if (!m) return undefined;
  const object = { kind: "Node" as const, name: e.node };
  switch (e.type) {
    case "NodeStarted": {
      const n = countMachines(s.machines, (x) => x.state !== "pending");
      return { object, reason: msg.EVENT_STARTED, message: msg.eventStarted(s.cluster, m.from, m.to, n, s.machines.length) };
    }
    case "NodeBack":
      return { object, reason: msg.EVENT_UPGRADED, message: msg.eventUpgraded(s.cluster, m.from, e.version, m.durationMs) };
    case "NodeFailed":
      return { object, type: "Warning", reason: msg.EVENT_FAILED, message: msg.eventFailed(s.cluster, m.from, m.to, e.reason) };
  }
}
