import * as pulumi from "@pulumi/pulumi";
import { DynamicResource } from "./dynamicResource";
import { runnerId } from "../provider/template/ids";
import { Cluster, onCluster } from "./cluster";
import { resourceUrn } from "./urn";

/** Kubernetes label selector (as in a PodDisruptionBudget). */
export interface LabelSelectorArgs {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
}

/** The objects a condition reads: exactly one of `name` (seen as `object`) or `labelSelector` (seen as `objects`). */
export interface ConditionTargetArgs {
  /** "v1" for core kinds, else "<group>/<version>", e.g. "ceph.rook.io/v1". */
  apiVersion: string;
  /** e.g. "CephCluster", "Volume", "Deployment". */
  kind: string;
  /** Namespace of a namespaced kind; with a labelSelector, omitted = every namespace. */
  namespace?: string;
  /** One object by name: the expression sees it as `object`. */
  name?: string;
  /** Every object matching: the expression sees the list `objects`. */
  labelSelector?: LabelSelectorArgs;
}

/** A condition as a TalosUpgrade receives it. */
export interface GateCondition {
  id: string;
  target: ConditionTargetArgs;
  expression: string;
  message?: string;
  allowEmpty?: boolean;
}

export interface ConditionArgs {
  /** The cluster whose objects are read: a `Cluster` (then create/update also check the kind is served) or its name. */
  cluster: Cluster | pulumi.Input<string>;
  /** Condition name; its id becomes `cluster-<cluster>-<name>` (1-63 lowercase letters, digits and '-'). */
  name: pulumi.Input<string>;
  target: pulumi.Input<ConditionTargetArgs>;
  /**
   * CEL, true when the next node may go, e.g. `object.status.ceph.health == 'HEALTH_OK'` or
   * `objects.all(v, v.status.robustness == 'healthy')`. Evaluated on every watch event of the objects. A missing
   * object or field holds the gate with that reason (never a silent false); so does an empty selection unless
   * `allowEmpty`. Integral JSON numbers are CEL ints.
   */
  expression: pulumi.Input<string>;
  /** Optional CEL string saying why the gate holds, e.g. `'ceph is ' + object.status.ceph.health`. */
  message?: pulumi.Input<string>;
  /** labelSelector targets: an empty selection evaluates the expression instead of holding (default false). */
  allowEmpty?: pulumi.Input<boolean>;
}

/**
 * A condition gate for a `TalosUpgrade`: a CEL expression over Kubernetes objects of any kind (CRDs included), checked
 * at preview (syntax, unknown variables and functions, known type errors, each naming its field) and evaluated on
 * every watch event while the gate runs, so the next node goes as soon as it turns true.
 */
export class Condition extends DynamicResource {
  /** `cluster-<cluster>-<name>`: how the upgrade's status names this condition. */
  public readonly conditionId!: pulumi.Output<string>;
  public readonly clusterName!: pulumi.Output<string>;
  public readonly target!: pulumi.Output<ConditionTargetArgs>;
  public readonly expression!: pulumi.Output<string>;
  public readonly message!: pulumi.Output<string | undefined>;
  public readonly allowEmpty!: pulumi.Output<boolean | undefined>;
  /** The target in words, e.g. `ceph.rook.io/v1 CephCluster rook-ceph/rook-ceph`. */
  public readonly description!: pulumi.Output<string>;
  /** The id as derived from the inputs (known during preview, unlike `conditionId`). */
  public readonly plannedId: pulumi.Output<string>;
  /**
   * What a TalosUpgrade evaluates, from the inputs (known during preview, unlike the outputs): its diff then sees the
   * condition's content, not an unknown output while this resource is updated.
   */
  public readonly gateCondition: pulumi.Output<GateCondition>;

  constructor(name: string, args: ConditionArgs, opts?: pulumi.CustomResourceOptions) {
    const cluster = onCluster(args.cluster);
    super("Condition", name, {
      resourceUrn: resourceUrn("Condition", name, opts),
      ...cluster.inputs,
      name: args.name,
      target: args.target,
      expression: args.expression,
      message: args.message,
      allowEmpty: args.allowEmpty,
      conditionId: undefined,
      description: undefined,
    }, { ...opts, additionalSecretOutputs: ["kubeconfig", ...(opts?.additionalSecretOutputs ?? [])] });
    const clusterName = cluster.name;
    this.plannedId = pulumi.all([clusterName, args.name]).apply(([c, n]) => runnerId(String(c), String(n)));
    this.gateCondition = pulumi.all([this.plannedId, args.target, args.expression, args.message, args.allowEmpty])
      .apply(([id, target, expression, message, allowEmpty]) => ({
        id, target, expression,
        ...(message !== undefined && message !== null ? { message } : {}),
        ...(allowEmpty !== undefined && allowEmpty !== null ? { allowEmpty } : {}),
      }));
  }
}
