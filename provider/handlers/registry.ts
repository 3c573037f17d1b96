// Resource kinds and their handlers. Adding a resource = one handler module + one line here.
import type * as pulumi from "@pulumi/pulumi";
import { clusterHandler } from "./cluster";
import { conditionHandler } from "./condition";
import { healthcheckHandler } from "./healthcheck";
import { smokeHandler } from "./smoke";
import { talosUpgradeHandler } from "./talosUpgrade";

type Props = Record<string, any>;

export interface KindHandler {
  check(olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult>;
  diff(id: string, olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult>;
  create(inputs: Props): Promise<pulumi.dynamic.CreateResult>;
  read(id: string, props: Props): Promise<pulumi.dynamic.ReadResult>;
  update(id: string, olds: Props, news: Props): Promise<pulumi.dynamic.UpdateResult>;
  delete(id: string, props: Props): Promise<void>;
}

export const kindHandlers: Record<string, KindHandler> = {
  Cluster: clusterHandler,
  Condition: conditionHandler,
  Healthcheck: healthcheckHandler,
  TalosUpgrade: talosUpgradeHandler,
  Smoke: smokeHandler,
};
