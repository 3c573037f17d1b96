// talos-gate: typed Pulumi resources for healthcheck-gated Talos upgrades.
// First: an unsupported Node.js stops here, naming the version needed.
import "../provider/nodeSupport";
export { Cluster, ClusterArgs, ClusterContextArgs, ClusterMachine, MachineArgs, ManifestArgs } from "./cluster";
export { Condition, ConditionArgs, ConditionTargetArgs, GateCondition, LabelSelectorArgs } from "./condition";
export { GateCheckInput, Healthcheck, HealthcheckArgs } from "./healthcheck";
export {
  CronWindowArgs, NodeHookArgs, NodeHooksArgs, TalosUpgrade, TalosUpgradeArgs, TalosUpgradeHealthcheckStatus,
  TalosUpgradeMachineStatus, TalosUpgradeStatus, UpgradeStrategyArgs,
} from "./talosUpgrade";
export { KubernetesUpgrade, KubernetesUpgradeArgs } from "./kubernetesUpgrade";
export { Smoke, SmokeArgs } from "./smoke";
export { ClusterTemplate, ClusterTemplateArgs } from "./clusterTemplate";
