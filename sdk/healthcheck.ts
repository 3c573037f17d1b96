import * as pulumi from "@pulumi/pulumi";
import { DynamicResource } from "./dynamicResource";
import { healthcheckId } from "../provider/template/ids";
import { Cluster, onCluster } from "./cluster";
import { resourceUrn } from "./urn";

/** A Healthcheck as a TalosUpgrade's gate takes it: the check's own inputs, composed into its Job by the provider. */
export interface GateCheckInput {
  cluster: string;
  name?: string;
  idOverride?: string;
  job?: string | Record<string, unknown> | Record<string, unknown>[];
  file?: string;
  interval?: string;
}

export interface HealthcheckArgs {
  /**
   * The cluster the check runs in: a `Cluster` (then create/update also validate the Job against the API server with
   * a server-side dry run) or just its name.
   */
  cluster: Cluster | pulumi.Input<string>;
  /** Check name; the id becomes `cluster-<cluster>-<name>`. One of `name` or `idOverride` is required. */
  name?: pulumi.Input<string>;
  /** Explicit id instead of `cluster-<cluster>-<name>`; the runner Job is `talos-gate-<id>` (at most 63 characters). */
  idOverride?: pulumi.Input<string>;
  /**
   * The batch/v1 Job manifest: a YAML string, an object, or a list with one object. Exactly one of `job` or `file`.
   * Write a clear message to stderr and exit non-zero to hold the upgrade; set `backoffLimit: 0`.
   */
  job?: pulumi.Input<string | Record<string, unknown> | Record<string, unknown>[]>;
  /** Path of a YAML file holding the Job manifest, relative to the program directory. Exactly one of `job` or `file`. */
  file?: pulumi.Input<string>;
  /** Go duration between retries of a failing check, at least "5s". Default "30s". */
  interval?: pulumi.Input<string>;
  /** Labels on the healthcheck (not on the Job). */
  labels?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** Annotations on the healthcheck (not on the Job). */
  annotations?: pulumi.Input<Record<string, pulumi.Input<string>>>;
}

/**
 * A user-defined Kubernetes Job that must pass before each next node of a `TalosUpgrade` goes down. Validated at
 * preview time (every error names its field); the composed runner Job is an output.
 */
export class Healthcheck extends DynamicResource {
  /** `idOverride` or `cluster-<cluster>-<name>`. */
  public readonly checkId!: pulumi.Output<string>;
  /** `talos-gate-<id>`. */
  public readonly jobName!: pulumi.Output<string>;
  /** Namespace of the runner Job (from the manifest, default `default`). */
  public readonly namespace!: pulumi.Output<string>;
  /** sha256 hex of the manifest text; a change re-creates a running Job. */
  public readonly configHash!: pulumi.Output<string>;
  /** Normalized retry interval (Go duration). */
  public readonly interval!: pulumi.Output<string>;
  /** The composed runner Job, as submitted to the cluster. */
  public readonly composedJob!: pulumi.Output<Record<string, unknown>>;
  public readonly clusterName!: pulumi.Output<string>;
  /**
   * The id as derived from the inputs (known during preview, unlike `checkId`), so a TalosUpgrade's preview can name
   * the checks that gate each wave before this healthcheck exists.
   */
  public readonly plannedId: pulumi.Output<string>;
  /**
   * The inputs that define what the check runs (known during preview, unlike `composedJob`), for a TalosUpgrade's
   * gate: its diff then sees the checks' content, so a change of this resource's labels is no upgrade.
   */
  public readonly gateCheck: pulumi.Output<GateCheckInput>;

  constructor(name: string, args: HealthcheckArgs, opts?: pulumi.CustomResourceOptions) {
    const cluster = onCluster(args.cluster);
    super("Healthcheck", name, {
      resourceUrn: resourceUrn("Healthcheck", name, opts),
      ...cluster.inputs,
      name: args.name,
      idOverride: args.idOverride,
      job: args.job,
      file: args.file,
      interval: args.interval,
      labels: args.labels,
      annotations: args.annotations,
      checkId: undefined,
      jobName: undefined,
      namespace: undefined,
      configHash: undefined,
      composedJob: undefined,
    }, {
      ...opts,
      // The host re-marks only outputs named like a secret input: `composedJob` holds the job's text, so it is secret
      // whenever the job may be (an Output can carry a secret, and whether it does is known only later).
      additionalSecretOutputs: ["kubeconfig", ...(pulumi.Output.isInstance(args.job) ? ["composedJob"] : []), ...(opts?.additionalSecretOutputs ?? [])],
    });
    const clusterName = cluster.name;
    this.plannedId = pulumi.all([clusterName, args.name, args.idOverride])
      .apply(([c, name, idOverride]) => healthcheckId({ name, idOverride }, String(c)));
    this.gateCheck = pulumi.all([clusterName, args.name, args.idOverride, args.job, args.file, args.interval])
      .apply(([c, name, idOverride, job, file, interval]) => JSON.parse(JSON.stringify({
        cluster: String(c), name, idOverride, job, file, interval,
      })) as GateCheckInput);
  }
}

