import * as pulumi from "@pulumi/pulumi";
import { DynamicResource } from "./dynamicResource";
import { resourceUrn } from "./urn";

/** The context rewriter (yaml), loaded only for a Cluster that chooses a context: not with every program. */
const credentialContext = () => require("../provider/resources/credentialContext") as typeof import("../provider/resources/credentialContext");

/** A supporting manifest applied to the workload cluster (Omni's `kubernetes.manifests` semantics). */
export interface ManifestArgs {
  /** Unique name of this manifest entry. */
  name: string;
  /**
   * `full` (default): kept in sync on every update, and objects removed from it are pruned.
   * `one-time`: applied once, never updated or pruned afterwards.
   */
  mode?: "full" | "one-time";
  /** The objects: a YAML string (one or more documents), an object, or a list of objects. */
  inline: string | Record<string, unknown> | Record<string, unknown>[];
  /** Labels added to every object. */
  labels?: Record<string, string>;
  /** Annotations added to every object. */
  annotations?: Record<string, string>;
}

/** A machine named explicitly instead of being discovered from the Kubernetes Nodes. */
export interface MachineArgs {
  /** Kubernetes Node name. */
  name: string;
  /** Default: read from the Node's `node-role.kubernetes.io/control-plane` label. */
  role?: "controlplane" | "worker";
  /** Talos API target (the `node` header); default: the Node's InternalIP. */
  address?: string;
  /** Machine set for per-set parallelism; default `control-planes` or `workers`. */
  machineSet?: string;
}

export interface ClusterArgs {
  /** Cluster name: used in healthcheck ids (`cluster-<name>-<check>`), the Lease and the status ConfigMap. Default: the resource name. */
  clusterName?: pulumi.Input<string>;
  /** Kubeconfig contents (not a path). Stored only as a secret. */
  kubeconfig: pulumi.Input<string>;
  /** talosconfig contents (not a path). Stored only as a secret. */
  talosconfig: pulumi.Input<string>;
  /** Machines to manage; default: every Kubernetes Node. */
  machines?: pulumi.Input<pulumi.Input<MachineArgs>[]>;
  /** Supporting manifests (RBAC for healthchecks, ...), applied with server-side apply on create and update. */
  manifests?: pulumi.Input<pulumi.Input<ManifestArgs>[]>;
  /**
   * Which contexts to use instead of the current ones: `kubeconfig` a context name of the kubeconfig, `talosconfig` one
   * of the talosconfig. Every resource of this Cluster uses them.
   */
  context?: pulumi.Input<ClusterContextArgs>;
}

export interface ClusterContextArgs {
  /** A context of the kubeconfig (`kubectl config get-contexts`); default: its current-context. */
  kubeconfig?: string;
  /** A context of the talosconfig (`talosctl config contexts`); default: its `context`. */
  talosconfig?: string;
}

/** Observed machine, refreshed on every read. */
export interface ClusterMachine {
  name: string;
  role: "controlplane" | "worker";
  address: string;
  machineSet: string;
  ready: boolean;
  /** Talos version read from the Node's osImage, e.g. "v1.13.2". */
  talosVersion: string;
}

/**
 * A Talos cluster talos-gate manages: credentials, machines and supporting manifests. Creating it touches no node;
 * deleting it removes runner Jobs and `full`-mode manifests and never touches nodes.
 */
export class Cluster extends DynamicResource {
  public readonly clusterName!: pulumi.Output<string>;
  /** Secret. */
  public readonly kubeconfig!: pulumi.Output<string>;
  /** Secret. */
  public readonly talosconfig!: pulumi.Output<string>;
  public readonly machines!: pulumi.Output<ClusterMachine[]>;
  /** Kubernetes version of the API server, e.g. "v1.36.3". */
  public readonly kubernetesVersion!: pulumi.Output<string>;
  /** Names and modes of the applied manifests. */
  public readonly manifests!: pulumi.Output<ManifestArgs[]>;

  /** The cluster name as given (known during preview). */
  public readonly clusterNameInput: pulumi.Output<string>;
  /** Names of the machines given in `machines`, sorted; empty = every Node (known during preview). */
  public readonly machineSelection: pulumi.Output<string[]>;
  /**
   * The machines given in `machines` with their overrides (known during preview): a TalosUpgrade plans and runs with
   * exactly this model (role, Talos address, machine set), the same as this resource's `machines` output shows.
   */
  public readonly machineOverrides: pulumi.Output<MachineArgs[]>;

  constructor(name: string, args: ClusterArgs, opts?: pulumi.CustomResourceOptions) {
    super("Cluster", name, {
      resourceUrn: resourceUrn("Cluster", name, opts),
      clusterName: args.clusterName ?? name,
      kubeconfig: pulumi.secret(pulumi.all([args.kubeconfig, args.context]).apply(([k, c]) => (c?.kubeconfig ? credentialContext().withKubeContext(k, c.kubeconfig) : k))),
      talosconfig: pulumi.secret(pulumi.all([args.talosconfig, args.context]).apply(([t, c]) => (c?.talosconfig ? credentialContext().withTalosContext(t, c.talosconfig) : t))),
      // The user's selection; the `machines` output is what is observed on the cluster.
      machineSpec: args.machines,
      machines: undefined,
      manifests: args.manifests ?? [],
      kubernetesVersion: undefined,
    }, { ...opts, additionalSecretOutputs: ["kubeconfig", "talosconfig", ...(opts?.additionalSecretOutputs ?? [])] });
    this.clusterNameInput = pulumi.output(args.clusterName ?? name);
    this.machineSelection = pulumi.output(args.machines ?? []).apply((ms) => (ms ?? []).map((m) => m.name).sort());
    this.machineOverrides = pulumi.output(args.machines ?? []).apply((ms) => (ms ?? []).map((m) => JSON.parse(JSON.stringify(m)) as MachineArgs));
  }
}

/**
 * A resource on a cluster given as a `Cluster` or by its name: the inputs it passes (the name and, with a Cluster, its
 * kubeconfig) and the name as known at preview (for its planned id).
 */
export function onCluster(c: Cluster | pulumi.Input<string>): {
  inputs: { clusterName: pulumi.Input<string>; kubeconfig: pulumi.Input<string> | undefined };
  name: pulumi.Output<string>;
} {
  if (c instanceof Cluster) return { inputs: { clusterName: c.clusterName, kubeconfig: c.kubeconfig }, name: c.clusterNameInput };
  return { inputs: { clusterName: c, kubeconfig: undefined }, name: pulumi.output(c) };
}
