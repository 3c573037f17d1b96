// The one dynamic provider every talos-gate resource passes to Pulumi. Pulumi serializes this object into state
// (`__provider`), so it must stay tiny and identical across releases and machines: each method only loads the
// handlers by package name at run time and dispatches on the resource's `kind` property. State written by one
// version is then served by whatever version is installed when the next `pulumi up`, refresh or destroy runs.
import type * as pulumi from "@pulumi/pulumi";

export const shim: pulumi.dynamic.ResourceProvider = {
  check(olds, news) {
    return require("talos-gate/dist/provider/handlers").check(olds, news);
  },
  diff(id, olds, news) {
    return require("talos-gate/dist/provider/handlers").diff(id, olds, news);
  },
  create(inputs) {
    return require("talos-gate/dist/provider/handlers").create(inputs);
  },
  read(id, props) {
    return require("talos-gate/dist/provider/handlers").read(id, props);
  },
  update(id, olds, news) {
    return require("talos-gate/dist/provider/handlers").update(id, olds, news);
  },
  delete(id, props) {
    return require("talos-gate/dist/provider/handlers").delete(id, props);
  },
};
