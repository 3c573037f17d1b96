import * as pulumi from "@pulumi/pulumi";
import { DynamicResource } from "./dynamicResource";

export interface SmokeArgs {
  /** Any non-empty text; the output `digest` is its sha256. */
  message: pulumi.Input<string>;
}

/** A cluster-free resource that proves the provider chain works (used by the smoke e2e test). */
export class Smoke extends DynamicResource {
  /** sha256 hex of `message`. */
  public readonly digest!: pulumi.Output<string>;
  public readonly message!: pulumi.Output<string>;

  constructor(name: string, args: SmokeArgs, opts?: pulumi.CustomResourceOptions) {
    super("Smoke", name, { message: args.message, digest: undefined }, opts);
  }
}
