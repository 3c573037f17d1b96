import * as pulumi from "@pulumi/pulumi";
import { DEFAULT_HOLD_TIMEOUT, DEFAULT_NODE_TIMEOUT } from "../provider/resources/defaults";
import { DynamicResource } from "./dynamicResource";
import { Cluster } from "./cluster";
import { Condition } from "./condition";
import { Healthcheck } from "./healthcheck";
import { afterGates, runTimeouts, type CronWindowArgs, type TalosUpgrade, type TalosUpgradeStatus } from "./talosUpgrade";
import { resourceUrn } from "./urn";

export interface KubernetesUpgradeArgs {
  cluster: Cluster;
  /**
   * Target Kubernetes version, e.g. "v1.36.1". Checked at preview against Kubernetes' version skew policy (the control
   * plane moves one minor at a time; kubelets never newer than the API server) and each node's Talos range.
   */
  version: pulumi.Input<string>;
  /**
   * The TalosUpgrade of the same cluster to run after (added to dependsOn): preview then checks the Kubernetes target
   * against the range of the Talos version it upgrades to, so both go in one `pulumi up`.
   */
  after?: TalosUpgrade;
  /** Checks that must all pass before each next unit (a control plane, kube-proxy, a kubelet). */
  healthchecks?: Healthcheck[];
  /** Watch-driven CEL conditions that must all hold, with the healthchecks, before each next unit. */
  conditions?: Condition[];
  /** Go duration: end the update (resumable) when a gate has held this long. Default "60m". */
  holdTimeout?: pulumi.Input<string>;
  /**
   * Go duration bounding one unit: a control plane's static pods on the target and Ready, kube-proxy's patch, a
   * kubelet reporting the target. Default "15m".
   */
  nodeTimeout?: pulumi.Input<string>;
  /** Go duration: after each unit, wait at least this long with every gate passing before the next. Default none. */
  soakTime?: pulumi.Input<string>;
  /** No unit starts outside these windows (as TalosUpgrade's `maintenanceWindows`). Default: no restriction. */
  maintenanceWindows?: pulumi.Input<pulumi.Input<string | CronWindowArgs>[]>;
}

/**
 * A healthcheck-gated Kubernetes upgrade of a Talos cluster, as `talosctl upgrade-k8s` does it over the Talos API: each
 * control plane's kube-apiserver, kube-controller-manager and kube-scheduler (one node at a time), then kube-proxy,
 * then each kubelet; the gates before every one. Never runs beside a TalosUpgrade of the same cluster (the same
 * Lease): order the two with `dependsOn`. Resumable and bounded; deleting it never downgrades.
 */
export class KubernetesUpgrade extends DynamicResource {
  public readonly version!: pulumi.Output<string>;
  /** The status in TalosUpgrade's shape; its machines are the units ("cp-1 (control plane)", "kube-proxy", "w-1 (kubelet)"). */
  public readonly status!: pulumi.Output<TalosUpgradeStatus>;
  /** The plan computed at preview time when the cluster is reachable (units in order, from → to, gates). */
  public readonly plan!: pulumi.Output<string[]>;

  constructor(name: string, args: KubernetesUpgradeArgs, opts?: pulumi.CustomResourceOptions) {
    const dependsOn = afterGates([...(args.healthchecks ?? []), ...(args.conditions ?? []), ...(args.after ? [args.after] : [])], opts);
    super("KubernetesUpgrade", name, {
      resourceUrn: resourceUrn("KubernetesUpgrade", name, opts),
      owner: `${pulumi.getProject()}/${pulumi.getStack()}/${name}`,
      clusterName: args.cluster.clusterName,
      kubeconfig: args.cluster.kubeconfig,
      talosconfig: args.cluster.talosconfig,
      machines: args.cluster.machineOverrides,
      version: args.version,
      healthchecks: (args.healthchecks ?? []).map((h) => h.gateCheck),
      healthcheckIds: pulumi.all((args.healthchecks ?? []).map((h) => h.plannedId)),
      conditions: (args.conditions ?? []).map((c) => c.gateCondition),
      conditionIds: pulumi.all((args.conditions ?? []).map((c) => c.plannedId)),
      holdTimeout: args.holdTimeout ?? DEFAULT_HOLD_TIMEOUT,
      nodeTimeout: args.nodeTimeout ?? DEFAULT_NODE_TIMEOUT,
      soakTime: args.soakTime,
      maintenanceWindows: args.maintenanceWindows,
      customTimeouts: runTimeouts(opts?.customTimeouts),
      talosVersion: args.after?.targetVersion,
      plan: undefined,
      status: undefined,
    }, { ...opts, dependsOn, additionalSecretOutputs: ["kubeconfig", "talosconfig", ...(opts?.additionalSecretOutputs ?? [])] });
  }
}
