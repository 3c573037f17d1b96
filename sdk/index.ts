// talos-gate: typed Pulumi resources for healthcheck-gated Talos upgrades.
// First: an unsupported Node.js stops here, naming the version needed.
import "../provider/nodeSupport";
export { Cluster, ClusterArgs, ClusterMachine, MachineArgs, ManifestArgs } from "./cluster";
export { GateCheckInput, Healthcheck, HealthcheckArgs } from "./healthcheck";
export {
  TalosUpgrade, TalosUpgradeArgs, TalosUpgradeHealthcheckStatus, TalosUpgradeMachineStatus, TalosUpgradeStatus,
  UpgradeStrategyArgs,
} from "./talosUpgrade";
export { Smoke, SmokeArgs } from "./smoke";
export { ClusterTemplate, ClusterTemplateArgs } from "./clusterTemplate";
