// talos-gate: typed Pulumi resources for healthcheck-gated Talos upgrades.
export { Cluster, ClusterArgs, ClusterMachine, MachineArgs, ManifestArgs } from "./cluster";
export { Condition, ConditionArgs, ConditionTargetArgs, GateCondition, LabelSelectorArgs } from "./condition";
export { Healthcheck, HealthcheckArgs } from "./healthcheck";
export {
  CronWindowArgs, NodeHookArgs, NodeHooksArgs, TalosUpgrade, TalosUpgradeArgs, TalosUpgradeHealthcheckStatus,
  TalosUpgradeMachineStatus, TalosUpgradeStatus, UpgradeStrategyArgs,
} from "./talosUpgrade";
export { Smoke, SmokeArgs } from "./smoke";
export { ClusterTemplate, ClusterTemplateArgs } from "./clusterTemplate";
