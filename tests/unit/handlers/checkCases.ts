// Inputs `check` must refuse (or accept while unknown), per resource kind: the table behind check-messages.test.ts.
// Their results were recorded from the handlers before issue 21 moved the inputs into zod models
// (tests/fixtures/check-failures.json), so the move keeps every message, its property and their order.
import { UNKNOWN } from "../../../provider/handlers/common";

const job = (script: string) => ({
  apiVersion: "batch/v1", kind: "Job",
  spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i", command: ["sh", "-c", script] }] } } },
});

const kubeconfig = [
  "apiVersion: v1", "kind: Config",
  "clusters:", "- name: c", "  cluster:", "    server: https://127.0.0.1:1",
  "users:", "- name: u", "  user:", "    token: t",
  "contexts:", "- name: c", "  context:", "    cluster: c", "    user: u", "current-context: c", "",
].join("\n");

/** A TalosUpgrade's inputs as the SDK sends them, with `over` (also the preview tests' inputs: image-plan.test.ts). */
export const upgrade = (over: Record<string, unknown>) => ({
  kind: "TalosUpgrade", clusterName: "prod", kubeconfig, talosconfig: "t", owner: "p/s/talos", version: "v1.13.2",
  holdTimeout: "60m", nodeTimeout: "15m", machineNames: [], healthchecks: [], healthcheckIds: [], ...over,
});
const cluster = (over: Record<string, unknown>) => ({ kind: "Cluster", clusterName: "prod", kubeconfig, talosconfig: "t", ...over });
const healthcheck = (over: Record<string, unknown>) => ({ kind: "Healthcheck", clusterName: "prod", name: "ceph", job: job("true"), ...over });
const condition = (over: Record<string, unknown>) => ({
  kind: "Condition", clusterName: "prod", name: "ceph-health",
  target: { apiVersion: "v1", kind: "ConfigMap", namespace: "rook-ceph", name: "health" },
  expression: "object.data.ok == 'true'", ...over,
});
const condInput = (over: Record<string, unknown>) => ({
  id: "cluster-prod-c", target: { apiVersion: "v1", kind: "ConfigMap", namespace: "n", name: "c" }, expression: "true", ...over,
});

export const cases: Record<string, Record<string, unknown>> = {
  "upgrade: cluster name Prod": upgrade({ clusterName: "Prod" }),
  "upgrade: cluster name empty": upgrade({ clusterName: "" }),
  "upgrade: cluster name a number": upgrade({ clusterName: 5 }),
  "upgrade: cluster name unknown, hold timeout bad": upgrade({ clusterName: UNKNOWN, holdTimeout: "soon" }),
  "upgrade: version 1.x": upgrade({ version: "1.x" }),
  "upgrade: version a number": upgrade({ version: 13 }),
  "upgrade: version missing": upgrade({ version: undefined }),
  "upgrade: version unknown": upgrade({ version: UNKNOWN }),
  "upgrade: version unknown, node timeout bad": upgrade({ version: UNKNOWN, nodeTimeout: "500ms" }),
  "upgrade: installer tag against version": upgrade({ installerImage: "ghcr.io/siderolabs/installer:v1.12.0" }),
  "upgrade: schematic not hex": upgrade({ schematic: "nothex" }),
  "upgrade: factory host a URL": upgrade({ schematic: "a".repeat(64), imageFactoryHost: "https://factory.example" }),
  "upgrade: bad version hides the image check": upgrade({ version: "x", installerImage: "ghcr.io/siderolabs/installer:v1.12.0" }),
  "upgrade: bad cluster name hides the image check": upgrade({ clusterName: "Prod", schematic: "nothex" }),
  "upgrade: image unknown": upgrade({ installerImage: UNKNOWN, holdTimeout: "0s" }),
  "upgrade: hold timeout 0s": upgrade({ holdTimeout: "0s" }),
  "upgrade: hold timeout a number": upgrade({ holdTimeout: 5 }),
  "upgrade: hold timeout too long": upgrade({ holdTimeout: "9999h" }),
  "upgrade: node timeout 500ms": upgrade({ nodeTimeout: "500ms" }),
  "upgrade: node timeout not a duration": upgrade({ nodeTimeout: "15 minutes" }),
  "upgrade: worker parallelism 0": upgrade({ strategy: { workerParallelism: 0 } }),
  "upgrade: strategy all wrong": upgrade({ strategy: { workerParallelism: 1.5, machineSetParallelism: { gpu: 0, cpu: "2" }, order: "cp-1" } }),
  "upgrade: strategy order not names": upgrade({ strategy: { order: ["cp-1", 3] } }),
  "upgrade: strategy unknown": upgrade({ strategy: UNKNOWN, nodeTimeout: "1ms" }),
  "upgrade: check without job": upgrade({ healthchecks: [{ cluster: "prod", name: "ceph" }] }),
  "upgrade: check job not a Job": upgrade({ healthchecks: [{ cluster: "prod", name: "ceph", job: { kind: "Pod" } }] }),
  "upgrade: check neither input nor composed": upgrade({ healthchecks: [{ id: 3 }, { id: "a" }, null] }),
  "upgrade: composed check is fine": upgrade({ healthchecks: [{ id: "cluster-prod-a", job: job("true") }], version: "bad" }),
  "upgrade: check unknown": upgrade({ healthchecks: [UNKNOWN, { cluster: "prod", name: "x", job: UNKNOWN }], holdTimeout: "1ms" }),
  "upgrade: checks unknown": upgrade({ healthchecks: UNKNOWN, holdTimeout: "1ms" }),
  "upgrade: conditions not a list": upgrade({ conditions: "x" }),
  "upgrade: condition without target": upgrade({ conditions: [{ id: "a", expression: "true" }] }),
  "upgrade: condition bad expression and message": upgrade({ conditions: [condInput({ expression: "object.x ==", message: "1" })] }),
  "upgrade: condition bad target": upgrade({ conditions: [condInput({ target: { apiVersion: "v1", kind: "ConfigMap" } })] }),
  "upgrade: condition unknown": upgrade({ conditions: [condInput({ expression: UNKNOWN }), UNKNOWN], soakTime: "x" }),
  "upgrade: soak time not a duration": upgrade({ soakTime: "long" }),
  "upgrade: soak time a number": upgrade({ soakTime: 60 }),
  "upgrade: volume detach not a duration": upgrade({ volumeDetachTimeout: "never" }),
  "upgrade: volume detach too long": upgrade({ volumeDetachTimeout: "9999h" }),
  "upgrade: windows not parseable": upgrade({ maintenanceWindows: ["bogus", "Sat 02:00-06:00 Mars/Olympus"] }),
  "upgrade: cron window wrong": upgrade({ maintenanceWindows: [{ cron: "x", duration: "30s", timeZone: "UTC" }] }),
  "upgrade: windows not a list": upgrade({ maintenanceWindows: "Sat 02:00-06:00 UTC" }),
  "upgrade: windows unknown": upgrade({ maintenanceWindows: [UNKNOWN], soakTime: "x" }),
  "upgrade: hooks a string": upgrade({ hooks: "x" }),
  "upgrade: hooks a list": upgrade({ hooks: [] }),
  "upgrade: hooks unknown key": upgrade({ hooks: { middle: { name: "m", job: job("true") } } }),
  "upgrade: hook without job": upgrade({ hooks: { beforeNode: { name: "n" }, afterNode: { name: "a", job: job("true"), timeout: "x" } } }),
  "upgrade: hook unknown": upgrade({ hooks: { beforeNode: { name: "n", job: UNKNOWN } }, soakTime: "x" }),
  "upgrade: everything wrong": upgrade({
    clusterName: "Prod", version: "x", holdTimeout: "0s", nodeTimeout: "y", strategy: { workerParallelism: 0 },
    healthchecks: [{ id: 1 }], conditions: [{}], soakTime: "z", maintenanceWindows: ["bogus"], hooks: "h", volumeDetachTimeout: "v",
  }),
  "upgrade: unknown inputs plan later": upgrade({ version: UNKNOWN }),

  "cluster: nothing given": { kind: "Cluster" },
  "cluster: cluster name prod_eu": cluster({ clusterName: "prod_eu" }),
  "cluster: kubeconfig empty": cluster({ kubeconfig: " " }),
  "cluster: kubeconfig not YAML": cluster({ kubeconfig: "a: [\nb" }),
  "cluster: kubeconfig without clusters": cluster({ kubeconfig: "a: 1" }),
  "cluster: kubeconfig without context": cluster({ kubeconfig: "clusters: [{name: c}]\ncontexts: []" }),
  "cluster: kubeconfig a path": cluster({ kubeconfig: "/home/me/.kube/config" }),
  "cluster: talosconfig garbage": cluster({ talosconfig: "context: x\ncontexts: {}" }),
  "cluster: talosconfig a number": cluster({ talosconfig: 3 }),
  "cluster: machines not a list": cluster({ machineSpec: "cp-1" }),
  "cluster: machines wrong": cluster({ machineSpec: [{}, { name: "a" }, { name: "a", role: "boss" }, UNKNOWN] }),
  "cluster: manifests not a list": cluster({ manifests: "x" }),
  "cluster: manifests wrong": cluster({
    manifests: [{}, { name: "m", mode: "always", inline: "a: [", labels: { "talos-gate.dev/x": "1" } },
      { name: "m", inline: {}, annotations: { "omni.sidero.dev/y": "2", ok: "3" } }, UNKNOWN, { name: "u", inline: UNKNOWN }],
  }),
  "cluster: manifest not an object": cluster({ manifests: [{ name: "s", inline: "- a\n- b" }] }),
  "cluster: unknown credentials": cluster({ clusterName: UNKNOWN, kubeconfig: UNKNOWN, talosconfig: UNKNOWN, manifests: UNKNOWN, machineSpec: UNKNOWN }),

  "healthcheck: cluster name Prod": healthcheck({ clusterName: "Prod" }),
  "healthcheck: no name": healthcheck({ name: undefined }),
  "healthcheck: no job": healthcheck({ job: undefined }),
  "healthcheck: job a Pod": healthcheck({ job: { apiVersion: "v1", kind: "Pod" } }),
  "healthcheck: interval too short": healthcheck({ interval: "1s" }),
  "healthcheck: id too long": healthcheck({ idOverride: "x".repeat(70) }),
  "healthcheck: reserved label": healthcheck({ labels: { "omni.sidero.dev/x": "y" } }),
  "healthcheck: job unknown, name bad": healthcheck({ job: UNKNOWN, clusterName: "Prod" }),

  "condition: name with spaces": condition({ name: "Ceph Health" }),
  "condition: name a number": condition({ name: 3 }),
  "condition: name unknown": condition({ name: UNKNOWN, expression: "object.x ==" }),
  "condition: target without name or selector": condition({ target: { apiVersion: "v1", kind: "ConfigMap", namespace: "n" } }),
  "condition: expression and message bad": condition({ expression: "object.x ==", message: "1" }),
  "condition: allowEmpty on one object": condition({ allowEmpty: "yes" }),
  "condition: target unknown": condition({ target: UNKNOWN, name: "Bad" }),
};
