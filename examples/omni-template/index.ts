// An Omni cluster template as Pulumi resources: Cluster + Healthchecks + TalosUpgrade, gated like in Omni.
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as gate from "talos-gate";

const cfg = new pulumi.Config();
const simDir = path.resolve(cfg.get("simDir") ?? process.env.TALOS_GATE_SIM_DIR ?? "../../.sim");
const read = (file: string) => fs.readFileSync(path.join(simDir, file), "utf8");

const template = new gate.ClusterTemplate("sim", {
  file: cfg.get("template") ?? "cluster.yaml",
  kubeconfig: cfg.getSecret("kubeconfig") ?? pulumi.secret(read("kubeconfig")),
  talosconfig: cfg.getSecret("talosconfig") ?? pulumi.secret(read("talosconfig")),
  holdTimeout: "30m",
});

export const cluster = template.clusterName;
export const target = template.talosVersion;
export const plan = template.upgrade.plan;
export const status = template.upgrade.status;
