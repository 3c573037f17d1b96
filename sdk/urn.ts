import * as pulumi from "@pulumi/pulumi";

/** The type of a talos-gate resource: the dynamic-provider package, the `talos-gate` module and the kind. */
export const TYPE_PREFIX = "pulumi-nodejs:dynamic/talos-gate:";

/** The kinds of resource talos-gate registers (their `kind` input names the handler that serves them). */
export type Kind = "Cluster" | "Condition" | "Healthcheck" | "KubernetesUpgrade" | "Smoke" | "TalosUpgrade";

/**
 * The URN the engine gives a talos-gate resource (type `pulumi-nodejs:dynamic/talos-gate:<Type>`), passed to the
 * provider as the `resourceUrn` input so its warnings land on the resource's row (the dynamic-provider host does not
 * tell a provider its URN). Never part of a diff.
 *
 * Not `pulumi.createUrn(name, type, parent)`: a parent's `urn` output also depends on the parent's children (a
 * component is done when its children are), so a child whose inputs wait on it waits on itself — `pulumi preview`
 * of a `ClusterTemplate` hung. Only the parent's URN *value* is taken here, as Pulumi's createUrn would build it.
 */
export function resourceUrn(type: Kind, name: string, opts?: pulumi.CustomResourceOptions): pulumi.Output<string> {
  const stackPrefix = `urn:pulumi:${pulumi.getStack()}::${pulumi.getProject()}::`;
  const parent = opts?.parent;
  if (!parent) return pulumi.output(`${stackPrefix}${TYPE_PREFIX}${type}::${name}`);
  const parentUrn = new Promise<string>((resolve) => {
    parent.urn.apply((urn) => {
      resolve(urn);
      return urn;
    });
  });
  return pulumi.output(parentUrn.then((p) => {
    const prefix = `${p.substring(0, p.lastIndexOf("::"))}$`;
    // The stack's own type is not part of its children's type chain.
    const chain = prefix.endsWith("::pulumi:pulumi:Stack$") ? stackPrefix : prefix;
    return `${chain}${TYPE_PREFIX}${type}::${name}`;
  }));
}
