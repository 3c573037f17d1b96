// Resource kinds and their handlers. Adding a resource = one model (provider/resources/), one handler module, one line
// here. A handler is typed by what it runs with: its inputs are parsed once, at the door (`atTheDoor`), into its Spec
// for create and update; check and diff see the properties as given (they hold Pulumi's unknowns during preview);
// read and delete see state, which each handler reads as far as it needs (a destroy must not fail on old state).
import type * as pulumi from "@pulumi/pulumi";
import { clusterHandler } from "./cluster";
import type { Properties } from "./common";
import { conditionHandler } from "./condition";
import { healthcheckHandler } from "./healthcheck";
import { kubernetesUpgradeHandler } from "./kubernetesUpgrade";
import { smokeHandler } from "./smoke";
import { talosUpgradeHandler } from "./talosUpgrade";

export interface KindHandler<Spec, Outputs extends Properties = Properties> {
  /** The inputs as the handler runs them; throws naming the field when they cannot be read. */
  parse(inputs: Properties): Spec;
  check(olds: Properties, news: Properties): Promise<pulumi.dynamic.CheckResult>;
  diff(id: string, olds: Properties, news: Properties): Promise<pulumi.dynamic.DiffResult>;
  create(spec: Spec, inputs: Properties): Promise<{ id: string; outs: Outputs }>;
  read(id: string, props: Properties): Promise<{ id: string; props: Properties }>;
  update(id: string, spec: Spec, olds: Properties, news: Properties): Promise<{ outs: Outputs }>;
  delete(id: string, props: Properties): Promise<void>;
}

/** What the provider dispatches to: one kind's methods on the properties Pulumi passes. */
export interface KindMethods {
  check(olds: Properties, news: Properties): Promise<pulumi.dynamic.CheckResult>;
  diff(id: string, olds: Properties, news: Properties): Promise<pulumi.dynamic.DiffResult>;
  create(inputs: Properties): Promise<pulumi.dynamic.CreateResult>;
  read(id: string, props: Properties): Promise<pulumi.dynamic.ReadResult>;
  update(id: string, olds: Properties, news: Properties): Promise<pulumi.dynamic.UpdateResult>;
  delete(id: string, props: Properties): Promise<void>;
}

/** A typed handler behind the door: inputs parsed once into its Spec, before create or update runs. */
export function atTheDoor<Spec, Outputs extends Properties>(h: KindHandler<Spec, Outputs>): KindMethods {
  return {
    check: (olds, news) => h.check(olds, news),
    diff: (id, olds, news) => h.diff(id, olds, news),
    create: (inputs) => h.create(h.parse(inputs), inputs),
    read: (id, props) => h.read(id, props),
    update: (id, olds, news) => h.update(id, h.parse(news), olds, news),
    delete: (id, props) => h.delete(id, props),
  };
}

export const kindHandlers: Record<string, KindMethods> = {
  Cluster: atTheDoor(clusterHandler),
  Condition: atTheDoor(conditionHandler),
  Healthcheck: atTheDoor(healthcheckHandler),
  TalosUpgrade: atTheDoor(talosUpgradeHandler),
  KubernetesUpgrade: atTheDoor(kubernetesUpgradeHandler),
  Smoke: atTheDoor(smokeHandler),
};
