import * as pulumi from "@pulumi/pulumi";

/**
 * The URN the engine gives a talos-gate resource (type `pulumi-nodejs:dynamic/talos-gate:<Type>`), passed to the
 * provider as the `resourceUrn` input so its warnings land on the resource's row (the dynamic-provider host does not
 * tell a provider its URN). Never part of a diff.
 */
export function resourceUrn(type: string, name: string, opts?: pulumi.CustomResourceOptions): pulumi.Output<string> {
  return pulumi.createUrn(name, `pulumi-nodejs:dynamic/talos-gate:${type}`, opts?.parent);
}
