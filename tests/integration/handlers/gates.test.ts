// The Condition resource and the gate inputs of TalosUpgrade through the handlers the shim loads: check names every
// bad field offline, outputs never rewrite inputs (a preview with unchanged inputs is no change), and create asks the
// API server whether the target's kind is served and scoped as written.
import * as assert from "node:assert/strict";
import { check, create, diff } from "../../../provider/handlers";
import { UNKNOWN } from "../../../provider/handlers/common";
import { testControlPlane } from "../../support/kube";

const cephCondition = {
  kind: "Condition", clusterName: "prod", name: "ceph-health",
  target: { apiVersion: "ceph.rook.io/v1", kind: "CephCluster", namespace: "rook-ceph", name: "rook-ceph" },
  expression: "object.status.ceph.health == 'HEALTH_OK'",
  message: "'ceph is ' + object.status.ceph.health",
};

const nooutJob = {
  apiVersion: "batch/v1", kind: "Job", metadata: { namespace: "rook-ceph" },
  spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", containers: [{ name: "noout", image: "ceph", command: ["ceph", "osd", "set", "noout"] }] } } },
};

/** TalosUpgrade inputs that check accepts without a cluster (it fails before planning when a field is bad). */
const upgrade = (extra: Record<string, unknown>) => ({
  kind: "TalosUpgrade", clusterName: "prod", version: "v1.13.2", holdTimeout: "60m", nodeTimeout: "15m",
  healthchecks: [], healthcheckIds: [], machineNames: [], owner: "p/s/talos", kubeconfig: "kubeconfig", talosconfig: "talosconfig",
  ...extra,
});

describe("handlers: Condition and the gate inputs of TalosUpgrade", function () {
  this.timeout(60000);

  it("Condition check accepts a valid condition and names each bad field", async () => {
    assert.deepEqual(await check({}, cephCondition), { inputs: cephCondition });
    const r = await check({}, {
      ...cephCondition, name: "Ceph Health", expression: "object.status.ceph.health ==",
      target: { apiVersion: "ceph.rook.io/v1", kind: "CephCluster", namespace: "rook-ceph" }, message: "1",
    });
    const byProp = Object.fromEntries((r.failures ?? []).map((f) => [f.property, f.reason]));
    assert.deepEqual(Object.keys(byProp).sort(), ["name", "target"]);
    assert.match(byProp.name, /name must be 1-63 lowercase letters/);
    assert.match(byProp.target, /^target: needs exactly one of name .* or labelSelector/);
    const e = await check({}, { ...cephCondition, expression: "object.status.ceph.health ==", message: "1" });
    assert.deepEqual(e.failures?.map((f) => f.property), ["expression", "message"]);
    assert.match(e.failures![0].reason, /^expression: is not a valid CEL expression/);
    assert.match(e.failures![1].reason, /^message: must evaluate to a string .* its type is int/);
    assert.deepEqual(await check({}, { ...cephCondition, expression: UNKNOWN }), { inputs: { ...cephCondition, expression: UNKNOWN } }, "unknown values wait for apply");
  });

  it("Condition outputs keep the inputs as written: an unchanged preview is no change", async () => {
    const { id, outs } = await create(cephCondition);
    assert.equal(id, "cluster-prod-ceph-health");
    assert.equal(outs.conditionId, "cluster-prod-ceph-health");
    assert.equal(outs.description, "ceph.rook.io/v1 CephCluster rook-ceph/rook-ceph");
    for (const [k, v] of Object.entries(cephCondition)) assert.deepEqual(outs[k], v, k);
    assert.deepEqual(await diff(id!, outs, { ...cephCondition }), { changes: false, replaces: [] });
    assert.deepEqual(await diff(id!, outs, { ...cephCondition, expression: "true" }), { changes: true, replaces: [] });
    assert.deepEqual(await diff(id!, outs, { ...cephCondition, name: "other" }), { changes: true, replaces: ["name"] });
  });

  it("Condition create checks the kind against a reachable cluster: a wrong scope fails, an absent CRD is a warning", async () => {
    const cp = await testControlPlane();
    const lines: string[] = [];
    // Without a Pulumi engine, warnings go to stderr (with one, onto the resource's row).
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      await create({ ...cephCondition, kubeconfig: cp.kubeconfig });
    } finally {
      process.stderr.write = write;
    }
    assert.ok(lines.some((l) => /condition "cluster-prod-ceph-health": ceph.rook.io\/v1 CephCluster is not served by the cluster \(is its CRD installed\?\)/.test(l)), lines.join(""));
    await assert.rejects(create({
      ...cephCondition, kubeconfig: cp.kubeconfig, target: { apiVersion: "v1", kind: "ConfigMap", name: "ceph-status" },
    }), /condition "cluster-prod-ceph-health": v1 ConfigMap is namespaced: set the target's namespace/);
  });

  it("TalosUpgrade check names bad gate inputs: conditions, soakTime, maintenanceWindows, hooks, volumeDetachTimeout", async () => {
    const r = await check({}, upgrade({
      conditions: [{ id: "cluster-prod-ceph", target: cephCondition.target, expression: "objects.all(o, o.ok)" }, "not a condition"],
      soakTime: "a while",
      maintenanceWindows: ["Sat 02:00-06:00 Europe/Berlin", "Sun 25:00-03:00 UTC", { cron: "0 2 * * 6", duration: "4h" }],
      hooks: { beforeNode: { name: "noout", job: { ...nooutJob, kind: "Pod" } }, afterNode: { name: "unset", job: nooutJob, interval: "30s" }, during: {} },
      volumeDetachTimeout: "-1m",
    }));
    const reasons = (r.failures ?? []).map((f) => `${f.property} | ${f.reason}`);
    const has = (re: RegExp) => assert.ok(reasons.some((x) => re.test(x)), `${re} in:\n${reasons.join("\n")}`);
    has(/^conditions \| conditions\[0\]\.expression: uses `objects`, but this condition names one object/);
    has(/^conditions \| conditions\[1\] must be a talos-gate Condition/);
    has(/^soakTime \| soakTime "a while" is invalid/);
    has(/^maintenanceWindows \| maintenanceWindows\[1\]: "25:00-03:00" is not a time range/);
    has(/^maintenanceWindows \| maintenanceWindows\[2\]\.timeZone: timeZone is required/);
    has(/^hooks \| hooks\.beforeNode\.job: .*must be kind: Job, got "Pod"/);
    has(/^hooks \| hooks\.afterNode\.interval: a hook runs once per node/);
    has(/^hooks \| hooks: unknown field "during"/);
    has(/^volumeDetachTimeout \| volumeDetachTimeout must be at least 0s/);
    assert.equal(reasons.length, 9, reasons.join("\n"));
    // A hooks value of the wrong shape is named by its type, never echoed (a Job manifest can hold credentials).
    const list = await check({}, upgrade({ hooks: [{ name: "noout", job: { ...nooutJob, metadata: { annotations: { token: "s3cr3t-value" } } } }] }));
    assert.deepEqual(list.failures, [{ property: "hooks", reason: "hooks must be { beforeNode?: hook, afterNode?: hook }, got a list" }]);
  });

  it("TalosUpgrade diff: gate inputs count by content, not spelling; a stack from before them diffs clean", async () => {
    const olds = { ...upgrade({}), status: { phase: "Done" } };
    const news = upgrade({ conditions: [], conditionIds: [], hooks: {}, maintenanceWindows: null, volumeDetachTimeout: "5m" });
    assert.deepEqual(await diff("prod", olds, news), { changes: false, replaces: [] });
    assert.equal((await diff("prod", olds, upgrade({ soakTime: "10m" }))).changes, true);
    const gated = (extra: Record<string, unknown>) => upgrade({
      soakTime: "1h", maintenanceWindows: ["Sat 02:00-06:00 UTC"],
      conditions: [{ id: "cluster-prod-ceph", target: cephCondition.target, expression: cephCondition.expression }],
      hooks: { beforeNode: { name: "noout", job: nooutJob } },
      ...extra,
    });
    const done = { ...gated({}), status: { phase: "Done" } };
    const same = gated({
      soakTime: "60m", maintenanceWindows: ["saturday 02:00-06:00 UTC", "Sat 02:00-06:00 UTC"],
      hooks: { beforeNode: { name: "noout", job: JSON.stringify(nooutJob) } },
    });
    assert.deepEqual(await diff("prod", done, same), { changes: false, replaces: [] });
    for (const changed of [
      { maintenanceWindows: ["Sun 02:00-06:00 UTC"] },
      { conditions: [{ id: "cluster-prod-ceph", target: cephCondition.target, expression: "true" }] },
      { hooks: { afterNode: { name: "noout", job: nooutJob } } },
      { volumeDetachTimeout: "0s" },
    ]) {
      assert.equal((await diff("prod", done, gated(changed))).changes, true, JSON.stringify(changed));
    }
  });
});
