// talos-gate: typed Pulumi resources for healthcheck-gated Talos upgrades.
export { Cluster, ClusterArgs, ClusterMachine, MachineArgs, ManifestArgs } from "./cluster";
export { GateCheckInput, Healthcheck, HealthcheckArgs } from "./healthcheck";
export {
  TalosUpgrade, TalosUpgradeArgs, TalosUpgradeHealthcheckStatus, TalosUpgradeMachineStatus, TalosUpgradeStatus,
  UpgradeStrategyArgs,
} from "./talosUpgrade";
export { Smoke, SmokeArgs } from "./smoke";
export { ClusterTemplate, ClusterTemplateArgs } from "./clusterTemplate";
