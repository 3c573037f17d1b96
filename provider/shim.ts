// The one dynamic provider of every talos-gate resource. Its text as Pulumi serializes it (shimText.ts) is stored in
// state (`__provider`), so it must stay tiny and identical across releases and machines: each method only loads the
// handlers by package name at run time and dispatches on the resource's `kind` property. State written by one
// version is then served by whatever version is installed when the next `pulumi up`, refresh or destroy runs.
// Written as short arrows: Pulumi stores this text in every resource's state twice (inputs and outputs).
import type * as pulumi from "@pulumi/pulumi";

export const shim: pulumi.dynamic.ResourceProvider = {
  check: (...a) => require("talos-gate/dist/provider/handlers").check(...a),
  diff: (...a) => require("talos-gate/dist/provider/handlers").diff(...a),
  create: (...a) => require("talos-gate/dist/provider/handlers").create(...a),
  read: (...a) => require("talos-gate/dist/provider/handlers").read(...a),
  update: (...a) => require("talos-gate/dist/provider/handlers").update(...a),
  delete: (...a) => require("talos-gate/dist/provider/handlers").delete(...a),
};
