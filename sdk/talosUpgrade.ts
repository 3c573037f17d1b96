import * as pulumi from "@pulumi/pulumi";
import { DEFAULT_HOLD_TIMEOUT, DEFAULT_NODE_TIMEOUT } from "../provider/resources/defaults";
import { DynamicResource } from "./dynamicResource";
import { Cluster } from "./cluster";
import { Condition } from "./condition";
import { Healthcheck } from "./healthcheck";
import { replaceOnChangesNoEffect } from "./messages";
import { resourceUrn } from "./urn";

export interface UpgradeStrategyArgs {
  /** Workers upgraded at once (default 1). Control planes always go one at a time, before any worker. */
  workerParallelism?: number;
  /** Per machine-set parallelism for workers, e.g. `{ "gpu-workers": 2 }`; groups worker waves by machine set. */
  machineSetParallelism?: Record<string, number>;
  /** Node names to upgrade first, in this order, within their role. */
  order?: string[];
}

/**
 * A Job run once per node around its upgrade, written like a healthcheck (the same runner identity; the node's name,
 * role and the phase in env TALOS_GATE_NODE, TALOS_GATE_NODE_ROLE, TALOS_GATE_PHASE; afterNode also gets
 * TALOS_GATE_NODE_OUTCOME = upgraded | failed). A failing hook stops the rollout with its message.
 */
export interface NodeHookArgs {
  /** Hook name; its id becomes `cluster-<cluster>-<name>`. One of `name` or `idOverride` is required. */
  name?: string;
  idOverride?: string;
  /** The batch/v1 Job manifest (YAML string, object, or a list with one object). Exactly one of `job` or `file`. */
  job?: string | Record<string, unknown> | Record<string, unknown>[];
  /** YAML file with the Job manifest, relative to the program directory. */
  file?: string;
  /** Go duration bounding one run of the hook. Default "10m". */
  timeout?: string;
}

export interface NodeHooksArgs {
  /** Runs after the gate passed and before the node goes down, e.g. `ceph osd set noout`. */
  beforeNode?: NodeHookArgs;
  /** Runs after the node is back — also when its upgrade failed — e.g. `ceph osd unset noout`. */
  afterNode?: NodeHookArgs;
}

/** A maintenance window that starts by cron and lasts `duration` (elapsed time). */
export interface CronWindowArgs {
  /** Five fields: minute hour day-of-month month day-of-week, e.g. "0 2 * * 6". */
  cron: string;
  /** Go duration, at least "1m", e.g. "4h". */
  duration: string;
  /** IANA zone the cron is read in, e.g. "Europe/Berlin". */
  timeZone: string;
}

export interface TalosUpgradeArgs {
  cluster: Cluster;
  /** Target Talos version, e.g. "v1.13.2". Changing it is an update (a new gated rollout), never a replacement. */
  version: pulumi.Input<string>;
  /**
   * Versions rolled before `version`, in order, e.g. `["v1.12.11"]` to go from 1.11 to 1.13 in one `pulumi up`: each
   * step is a full gated rollout (control planes first, the gates before every wave), then the next. Checked at preview
   * against Talos' upgrade rules. Default: straight to `version`.
   */
  path?: pulumi.Input<pulumi.Input<string>[]>;
  /** Installer image; default `ghcr.io/siderolabs/installer:<version>`, or the Image Factory image for `schematic`. */
  installerImage?: pulumi.Input<string>;
  /** Image Factory schematic id; the installer becomes `factory.talos.dev/metal-installer/<schematic>:<version>`. */
  schematic?: pulumi.Input<string>;
  /**
   * Image Factory host of the installer images derived from schematics, e.g. a private `factory.example.com`; default:
   * each node's own, taken from its machine config's `machine.install.image`, else factory.talos.dev.
   */
  imageFactoryHost?: pulumi.Input<string>;
  /**
   * Before each node's reboot: "auto" drains it unless no other Ready, schedulable node could take its pods (a single
   * node: it is cordoned, and the pods and PodDisruptionBudgets that go down with it are named in a warning); "always"
   * drains it (a PDB with nowhere to move its pods then blocks until nodeTimeout); "never" only cordons it. Default "auto".
   */
  drain?: pulumi.Input<"auto" | "always" | "never">;
  /**
   * "allow" lets a cluster with 2 control planes upgrade them one at a time although etcd loses quorum for each reboot
   * (the API server is read-only meanwhile); every other etcd rule stays (all members healthy before, one at a time).
   * Default "refuse": such a reboot stops the rollout, naming this input. The preview plan says which it will be.
   */
  etcdQuorumLoss?: pulumi.Input<"refuse" | "allow">;
  /** Checks that must all pass before each next node (or batch) goes down. */
  healthchecks?: Healthcheck[];
  strategy?: pulumi.Input<UpgradeStrategyArgs>;
  /** Go duration: end the update (resumable) when a gate has held this long. Default "60m". */
  holdTimeout?: pulumi.Input<string>;
  /** Go duration: end the update (resumable) when a node is not back on the target within this time. Default "15m". */
  nodeTimeout?: pulumi.Input<string>;
  /** Watch-driven CEL conditions that must all hold, with the healthchecks, before each next node goes down. */
  conditions?: Condition[];
  /**
   * Go duration: after a node is back and Ready, wait at least this long and until every gate passes before the next
   * node; a condition that turns false during the soak restarts it. Default none.
   */
  soakTime?: pulumi.Input<string>;
  /**
   * No node starts outside these windows; a run that reaches the end of one stops, resumable, and says when the next
   * one opens. Each is "<days> <HH:MM>-<HH:MM> <IANA zone>" (e.g. "Sat 02:00-06:00 Europe/Berlin", "Mon-Fri
   * 22:00-02:00 UTC") or a `CronWindowArgs`. Default: no restriction.
   */
  maintenanceWindows?: pulumi.Input<pulumi.Input<string | CronWindowArgs>[]>;
  /** Jobs run before and after each node (e.g. Ceph noout). */
  hooks?: pulumi.Input<NodeHooksArgs>;
  /**
   * Go duration: after the drain (Talos >= 1.13), wait at most this long for the node's VolumeAttachments to detach
   * before the reboot, naming the blocking volumes. "0s" skips the wait. Default "5m".
   */
  volumeDetachTimeout?: pulumi.Input<string>;
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

/**
 * The upgrade status, in Omni's words (like `omnictl get talosupgradestatus`). Built by the provider's
 * rollout/status.ts `outputStatus`; tests/unit/sdk/model-types.test.ts keeps the two from drifting apart.
 */
export interface TalosUpgradeStatus {
  /** `Waiting`: stopped at a closed maintenance window (the `up` succeeded); the next `up` inside a window continues. */
  phase: "Upgrading" | "Done" | "Reverting" | "Failed" | "Waiting";
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
export class TalosUpgrade extends DynamicResource {
  public readonly version!: pulumi.Output<string>;
  public readonly status!: pulumi.Output<TalosUpgradeStatus>;
  /** The rollout plan computed at preview time when the cluster is reachable (ordered nodes, from → to, gates). */
  public readonly plan!: pulumi.Output<string[]>;
  /** The version the program asks for (known at preview, unlike the output `version` while it changes). */
  public readonly targetVersion: pulumi.Output<string>;

  constructor(name: string, args: TalosUpgradeArgs, opts?: pulumi.CustomResourceOptions) {
    // The checks as composed from the Healthchecks' inputs (known during preview), not from their outputs: a
    // Healthcheck whose labels change is updated, which leaves its outputs unknown in preview, and the upgrade would
    // claim a change too. Ordering still follows the Healthchecks (dependsOn), so their dry runs come first.
    const checks = (args.healthchecks ?? []).map((h) => h.gateCheck);
    // Conditions likewise from their inputs (Condition.gateCondition); they come first in the order too.
    const conditions = (args.conditions ?? []).map((c) => c.gateCondition);
    const dependsOn = afterGates([...(args.healthchecks ?? []), ...(args.conditions ?? [])], opts);
    super("TalosUpgrade", name, {
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
      path: args.path,
      installerImage: args.installerImage,
      schematic: args.schematic,
      imageFactoryHost: args.imageFactoryHost,
      healthchecks: checks,
      strategy: args.strategy,
      holdTimeout: args.holdTimeout ?? DEFAULT_HOLD_TIMEOUT,
      nodeTimeout: args.nodeTimeout ?? DEFAULT_NODE_TIMEOUT,
      drain: args.drain,
      etcdQuorumLoss: args.etcdQuorumLoss,
      conditions,
      conditionIds: pulumi.all((args.conditions ?? []).map((c) => c.plannedId)),
      soakTime: args.soakTime,
      maintenanceWindows: args.maintenanceWindows,
      hooks: args.hooks,
      volumeDetachTimeout: args.volumeDetachTimeout,
      // The dynamic-provider host never passes the engine's timeout on (pulumi sdk/nodejs/cmd/dynamic-provider
      // index.ts, v3.259.0: update(id, olds, news) only): the provider bounds the run itself from these.
      customTimeouts: runTimeouts(opts?.customTimeouts),
      plan: undefined,
      status: undefined,
    }, { ...opts, dependsOn, additionalSecretOutputs: ["kubeconfig", "talosconfig", ...(opts?.additionalSecretOutputs ?? [])] });
    this.targetVersion = pulumi.output(args.version);
    // Engine-side only: providers never see replaceOnChanges (proto/pulumi/provider.proto DiffRequest, v3.259.0), so
    // the program says it here, on this resource's row.
    if (opts?.replaceOnChanges?.length) void pulumi.log.warn(replaceOnChangesNoEffect(name, opts.replaceOnChanges), this);
  }
}

/** The gates, then the user's dependsOn (in any form). */
export function afterGates(gates: pulumi.Resource[], opts: pulumi.CustomResourceOptions | undefined): pulumi.CustomResourceOptions["dependsOn"] {
  // pulumi.output keeps Resources as they are (it never unwraps them), so the user's dependsOn merges in any form.
  const extra = opts?.dependsOn;
  return extra === undefined ? gates
    : pulumi.output(extra as pulumi.Input<pulumi.Resource[]>).apply((d) => [...gates, ...(Array.isArray(d) ? d : [d])]);
}

/** customTimeouts.create/update as an input (delete is quick and bounded by the provider already). */
export function runTimeouts(t: pulumi.CustomTimeouts | undefined): { create?: string; update?: string } | undefined {
  if (!t || (t.create === undefined && t.update === undefined)) return undefined;
  return { ...(t.create !== undefined ? { create: t.create } : {}), ...(t.update !== undefined ? { update: t.update } : {}) };
}
