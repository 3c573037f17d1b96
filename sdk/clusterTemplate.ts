import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { Cluster } from "./cluster";
import { Healthcheck } from "./healthcheck";
import { TalosUpgrade, UpgradeStrategyArgs } from "./talosUpgrade";

export interface ClusterTemplateArgs {
  /** Path of an Omni cluster template (multi-document YAML), relative to the program directory. */
  file: string;
  /** Kubeconfig contents. Stored only as a secret. */
  kubeconfig: pulumi.Input<string>;
  /** talosconfig contents. Stored only as a secret. */
  talosconfig: pulumi.Input<string>;
  /** Files the template names (healthcheck `file`, manifest `file`) must stay in this directory; default: the template's. */
  allowedDir?: string;
  /** Go duration; default "60m". */
  holdTimeout?: pulumi.Input<string>;
  /** Go duration; default "15m". */
  nodeTimeout?: pulumi.Input<string>;
  /** Installer image or Image Factory schematic, as on TalosUpgrade. */
  installerImage?: pulumi.Input<string>;
  schematic?: pulumi.Input<string>;
}

/**
 * An Omni cluster template as Pulumi resources: a `Cluster` with the template's `kubernetes.manifests`, one
 * `Healthcheck` per `kubernetes.healthchecks` entry (same ids as in Omni), and a `TalosUpgrade` to the template's
 * `talos.version`, with the worker sets' `upgradeStrategy` parallelism. Machines are discovered from the Kubernetes
 * Nodes (Omni machine ids do not name Nodes). An invalid template fails the program with Omni's messages.
 */
export class ClusterTemplate extends pulumi.ComponentResource {
  public readonly cluster: Cluster;
  public readonly healthchecks: Healthcheck[];
  public readonly upgrade: TalosUpgrade;
  /** Cluster name from the template. */
  public readonly clusterName: string;
  /** Target Talos version from the template. */
  public readonly talosVersion: string;

  constructor(name: string, args: ClusterTemplateArgs, opts?: pulumi.ComponentResourceOptions) {
    super("talos-gate:index:ClusterTemplate", name, {}, opts);
    const file = path.resolve(args.file);
    const baseDir = path.dirname(file);
    // Loaded here, not with the package: the template reader (zod, yaml) is ~70 ms of every program's start otherwise.
    const { loadTemplate } = require("../provider/template") as typeof import("../provider/template");
    const { fileReader } = require("../provider/resources/model") as typeof import("../provider/resources/model");
    const tpl = loadTemplate(fs.readFileSync(file), {
      ...fileReader(baseDir), allowedRoot: args.allowedDir ? path.resolve(args.allowedDir) : baseDir,
    });
    this.clusterName = tpl.cluster.name;
    this.talosVersion = tpl.cluster.talosVersion.startsWith("v") ? tpl.cluster.talosVersion : `v${tpl.cluster.talosVersion}`;
    const parent = { parent: this };
    this.cluster = new Cluster(name, {
      clusterName: tpl.cluster.name,
      kubeconfig: args.kubeconfig,
      talosconfig: args.talosconfig,
      manifests: tpl.manifests.map((m) => ({
        name: m.name, mode: m.mode, inline: m.objects,
        ...(Object.keys(m.labels).length ? { labels: m.labels } : {}),
        ...(Object.keys(m.annotations).length ? { annotations: m.annotations } : {}),
      })),
    }, parent);
    this.healthchecks = tpl.healthchecks.map((h) => new Healthcheck(`${name}-${h.idOverride ?? h.name}`, {
      cluster: this.cluster,
      name: h.name,
      idOverride: h.idOverride,
      job: h.manifest,
      interval: h.interval,
      ...(Object.keys(h.labels).length ? { labels: h.labels } : {}),
      ...(Object.keys(h.annotations).length ? { annotations: h.annotations } : {}),
    }, parent));
    this.upgrade = new TalosUpgrade(name, {
      cluster: this.cluster,
      version: this.talosVersion,
      healthchecks: this.healthchecks,
      strategy: strategyOf(tpl.workers),
      holdTimeout: args.holdTimeout,
      nodeTimeout: args.nodeTimeout,
      installerImage: args.installerImage,
      schematic: args.schematic,
    }, parent);
    this.registerOutputs({ clusterName: this.clusterName, talosVersion: this.talosVersion, status: this.upgrade.status });
  }
}

/** Omni's worker `upgradeStrategy: {type: Rolling, rolling: {maxParallelism}}` as talos-gate's strategy. */
function strategyOf(workers: { name?: string; upgradeStrategy?: { type: string; maxParallelism?: number } }[]): UpgradeStrategyArgs {
  const strategy: UpgradeStrategyArgs = {};
  for (const w of workers) {
    const n = w.upgradeStrategy?.type === "Rolling" ? w.upgradeStrategy.maxParallelism : undefined;
    if (n === undefined || n < 1) continue;
    if (w.name) (strategy.machineSetParallelism ??= {})[w.name] = n;
    else strategy.workerParallelism = n;
  }
  return strategy;
}
