import * as pulumi from "@pulumi/pulumi";
import { shim } from "../provider/shim";
import { Cluster } from "./cluster";
import { Healthcheck } from "./healthcheck";
import { resourceUrn } from "./urn";

export interface UpgradeStrategyArgs {
  /** Workers upgraded at once (default 1). Control planes always go one at a time, before any worker. */
  workerParallelism?: number;
  /** Per machine-set parallelism for workers, e.g. `{ "gpu-workers": 2 }`; groups worker waves by machine set. */
  machineSetParallelism?: Record<string, number>;
  /** Node names to upgrade first, in this order, within their role. */
  order?: string[];
}

export interface TalosUpgradeArgs {
  cluster: Cluster;
  /** Target Talos version, e.g. "v1.13.2". Changing it is an update (a new gated rollout), never a replacement. */
  version: pulumi.Input<string>;
  /** Installer image; default `ghcr.io/siderolabs/installer:<version>`, or the Image Factory image for `schematic`. */
  installerImage?: pulumi.Input<string>;
  /** Image Factory schematic id; the installer becomes `factory.talos.dev/metal-installer/<schematic>:<version>`. */
  schematic?: pulumi.Input<string>;
  /** Checks that must all pass before each next node (or batch) goes down. */
  healthchecks?: Healthcheck[];
  strategy?: pulumi.Input<UpgradeStrategyArgs>;
  /** Go duration: end the update (resumable) when a gate has held this long. Default "60m". */
  holdTimeout?: pulumi.Input<string>;
  /** Go duration: end the update (resumable) when a node is not back on the target within this time. Default "15m". */
  nodeTimeout?: pulumi.Input<string>;
}

export interface TalosUpgradeMachineStatus {
  name: string;
  role: "controlplane" | "worker";
  from?: string;
  to: string;
  state: string;
  started?: string;
  finished?: string;
  durationMs?: number;
}

export interface TalosUpgradeHealthcheckStatus {
  id: string;
  state: "RUNNING" | "FAILED" | "PASSED";
  attempts: number;
  lastReason?: string;
  lastRun?: string;
}

/** The upgrade status, in Omni's words (like `omnictl get talosupgradestatus`). */
export interface TalosUpgradeStatus {
  phase: "Upgrading" | "Done" | "Reverting" | "Failed";
  status: string;
  step: string;
  error: string;
  lastUpgradeVersion: string;
  currentUpgradeVersion: string;
  machines: TalosUpgradeMachineStatus[];
  healthchecks: TalosUpgradeHealthcheckStatus[];
}

/**
 * A healthcheck-gated rolling Talos upgrade: control planes first, one at a time, then workers; every healthcheck runs
 * before each next node goes down, and the rollout holds while any fails. Resumable, bounded, and exclusive per
 * cluster (a Lease). Deleting it never downgrades a node.
 */
export class TalosUpgrade extends pulumi.dynamic.Resource {
  public readonly version!: pulumi.Output<string>;
  public readonly status!: pulumi.Output<TalosUpgradeStatus>;
  /** The rollout plan computed at preview time when the cluster is reachable (ordered nodes, from → to, gates). */
  public readonly plan!: pulumi.Output<string[]>;

  constructor(name: string, args: TalosUpgradeArgs, opts?: pulumi.CustomResourceOptions) {
    // The checks as composed from the Healthchecks' inputs (known during preview), not from their outputs: a
    // Healthcheck whose labels change is updated, which leaves its outputs unknown in preview, and the upgrade would
    // claim a change too. Ordering still follows the Healthchecks (dependsOn), so their dry runs come first.
    const checks = (args.healthchecks ?? []).map((h) => h.gateCheck);
    const healthchecks = args.healthchecks ?? [];
    // pulumi.output keeps Resources as they are (it never unwraps them), so the user's dependsOn merges in any form.
    const extra = opts?.dependsOn;
    const dependsOn: pulumi.CustomResourceOptions["dependsOn"] = extra === undefined ? healthchecks
      : pulumi.output(extra as pulumi.Input<pulumi.Resource[]>).apply((d) => [...healthchecks, ...(Array.isArray(d) ? d : [d])]);
    super(shim, name, {
      kind: "TalosUpgrade",
      resourceUrn: resourceUrn("TalosUpgrade", name, opts),
      // The lease holder: stable per stack and resource, so a resumed `pulumi up` of this stack takes over its own
      // lease at once, while any other pipeline is refused until it expires (Pulumi's stack lock already keeps two
      // runs of one stack apart).
      owner: `${pulumi.getProject()}/${pulumi.getStack()}/${name}`,
      clusterName: args.cluster.clusterName,
      kubeconfig: args.cluster.kubeconfig,
      talosconfig: args.cluster.talosconfig,
      machines: args.cluster.machineOverrides,
      healthcheckIds: pulumi.all((args.healthchecks ?? []).map((h) => h.plannedId)),
      version: args.version,
      installerImage: args.installerImage,
      schematic: args.schematic,
      healthchecks: checks,
      strategy: args.strategy,
      holdTimeout: args.holdTimeout ?? "60m",
      nodeTimeout: args.nodeTimeout ?? "15m",
      plan: undefined,
      status: undefined,
    }, { ...opts, dependsOn, additionalSecretOutputs: ["kubeconfig", "talosconfig", ...(opts?.additionalSecretOutputs ?? [])] },
    "talos-gate", "TalosUpgrade");
  }
}
