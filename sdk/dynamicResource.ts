// The base of every talos-gate resource: a Pulumi dynamic resource registered as pulumi.dynamic.Resource registers one
// (@pulumi/pulumi dynamic/index.js, v3.276.0) — type `pulumi-nodejs:dynamic/talos-gate:<Type>`, served by the
// dynamic-provider host from the provider text in the `__provider` input — with that text written once
// (provider/shimText.ts) instead of serialized in each program.
import * as pulumi from "@pulumi/pulumi";
import { SHIM_TEXT } from "../provider/shimText";
import { Kind, TYPE_PREFIX } from "./urn";

const PROVIDER_KEY = "__provider";

export abstract class DynamicResource extends pulumi.CustomResource {
  /** `kind` is also the first input: the handler the shim dispatches to (provider/handlers/registry.ts). */
  constructor(kind: Kind, name: string, props: pulumi.Inputs, opts?: pulumi.CustomResourceOptions) {
    super(`${TYPE_PREFIX}${kind}`, name, { kind, ...props, [PROVIDER_KEY]: SHIM_TEXT }, opts);
  }
}
