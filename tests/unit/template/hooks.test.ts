import assert from "node:assert/strict";
import { composeHealthcheck, composeNodeHook, validateNodeHook, type NodeHook } from "../../../provider/template";
import { fileOptions } from "./helpers";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const nooutJob = {
  apiVersion: "batch/v1", kind: "Job", metadata: { namespace: "rook-ceph" },
  spec: {
    backoffLimit: 0,
    template: {
      spec: {
        restartPolicy: "Never", serviceAccountName: "ceph-noout",
        initContainers: [{ name: "wait", image: "busybox", env: [{ name: "MODE", value: "x" }] }],
        containers: [{ name: "noout", image: "quay.io/ceph/ceph:v18", command: ["sh", "-c", "ceph osd set noout"] }],
      },
    },
  },
};

function hook(input: Record<string, unknown>, cluster = "prod"): NodeHook {
  const r = validateNodeHook(input, { cluster, ...fileOptions(".") }, "hooks.beforeNode");
  assert.deepEqual(r.failures, []);
  return r.hook!;
}

describe("template/hooks: beforeNode / afterNode Jobs", () => {
  const h = hook({ name: "ceph-noout", job: nooutJob });
  const w1 = { name: "w-1", role: "worker" as const };

  it("composes like a healthcheck (runner identity, label, policy) plus the node's identity and env", () => {
    assert.equal(h.timeoutMs, 600_000, "default timeout 10m");
    const c = composeNodeHook(h, { phase: "beforeNode", cluster: "prod", node: w1 });
    const job = c.job as Obj;
    assert.match(c.jobName, /^talos-gate-cluster-prod-ceph-noout-[0-9a-f]{10}$/);
    assert.equal(job.metadata.name, c.jobName);
    assert.equal(c.id, "cluster-prod-ceph-noout/w-1");
    assert.equal(c.namespace, "rook-ceph");
    assert.equal(job.metadata.labels["app.kubernetes.io/name"], "talos-gate-healthcheck");
    assert.equal(job.metadata.labels["talos-gate.dev/hook-phase"], "beforeNode");
    assert.equal(job.spec.template.metadata.labels["talos-gate.dev/hook-phase"], "beforeNode");
    assert.equal(job.spec.template.metadata.labels["app.kubernetes.io/name"], "talos-gate-healthcheck");
    assert.equal(job.metadata.annotations["talos-gate.dev/node"], "w-1");
    assert.equal(job.metadata.annotations["talos-gate.dev/config-hash"], c.configHash);
    const [main] = job.spec.template.spec.containers;
    assert.equal(main.terminationMessagePolicy, "FallbackToLogsOnError");
    const env = Object.fromEntries(main.env.map((e: Obj) => [e.name, e.value]));
    assert.deepEqual(env, { TALOS_GATE_CLUSTER: "prod", TALOS_GATE_NODE: "w-1", TALOS_GATE_NODE_ROLE: "worker", TALOS_GATE_PHASE: "beforeNode" });
    const init = job.spec.template.spec.initContainers[0];
    assert.deepEqual(init.env.map((e: Obj) => e.name), ["MODE", "TALOS_GATE_CLUSTER", "TALOS_GATE_NODE", "TALOS_GATE_NODE_ROLE", "TALOS_GATE_PHASE"]);
    assert.equal((h.base.job as Obj).spec.template.spec.containers[0].env, undefined, "the base Job is not modified");
  });

  it("afterNode says whether the node upgraded or failed, and each outcome is its own Job config", () => {
    const ok = composeNodeHook(h, { phase: "afterNode", cluster: "prod", node: w1, outcome: "upgraded" });
    const bad = composeNodeHook(h, { phase: "afterNode", cluster: "prod", node: w1, outcome: "failed" });
    const envOf = (c: { job: Obj }) => Object.fromEntries(c.job.spec.template.spec.containers[0].env.map((e: Obj) => [e.name, e.value]));
    assert.equal(envOf(ok as { job: Obj }).TALOS_GATE_NODE_OUTCOME, "upgraded");
    assert.equal(envOf(bad as { job: Obj }).TALOS_GATE_NODE_OUTCOME, "failed");
    assert.equal(envOf(ok as { job: Obj }).TALOS_GATE_PHASE, "afterNode");
    assert.notEqual(ok.configHash, bad.configHash);
    assert.equal(ok.jobName, bad.jobName, "one Job name per phase and node");
  });

  it("is deterministic, and differs per node, phase and role so no leftover Job counts for another node", () => {
    const a = composeNodeHook(h, { phase: "beforeNode", cluster: "prod", node: w1 });
    assert.deepEqual(composeNodeHook(h, { phase: "beforeNode", cluster: "prod", node: w1 }), a);
    const other = composeNodeHook(h, { phase: "beforeNode", cluster: "prod", node: { name: "w-2", role: "worker" } });
    const after = composeNodeHook(h, { phase: "afterNode", cluster: "prod", node: w1 });
    const cp = composeNodeHook(h, { phase: "beforeNode", cluster: "prod", node: { name: "w-1", role: "controlplane" } });
    assert.notEqual(other.jobName, a.jobName);
    assert.notEqual(after.jobName, a.jobName);
    for (const x of [other, after, cp]) assert.notEqual(x.configHash, a.configHash);
    assert.notEqual(a.configHash, h.base.configHash);
  });

  it("also composes from a Healthcheck's composed Job (the same identity)", () => {
    const base = composeHealthcheck({ name: "ceph-noout", manifest: JSON.stringify(nooutJob) }, "prod");
    const c = composeNodeHook(base, { phase: "beforeNode", cluster: "prod", node: w1 });
    assert.ok(c.jobName.startsWith(`${base.jobName}-`));
  });

  it("check-time validation names the field: manifest rules, unknown keys, interval, timeout, env, name length", () => {
    const v = (input: unknown) => validateNodeHook(input, { cluster: "prod", ...fileOptions(".") }, "hooks.afterNode").failures;
    assert.match(v("ceph osd unset noout")[0].message, /must be a hook: \{ name, job \| file, timeout\? \}/);
    assert.equal(v({ name: "x", job: { ...nooutJob, kind: "Pod" } })[0].field, "hooks.afterNode.job");
    assert.match(v({ name: "x", job: { ...nooutJob, kind: "Pod" } })[0].message, /must be kind: Job, got "Pod"/);
    assert.match(v({ job: nooutJob })[0].message, /either name or idOverride is required/);
    const f = v({ name: "x", job: nooutJob, interval: "30s", color: "red", timeout: "soon" });
    assert.deepEqual(f.map((x) => x.field).sort(), ["hooks.afterNode", "hooks.afterNode.interval", "hooks.afterNode.timeout"]);
    assert.match(f.find((x) => x.field === "hooks.afterNode.interval")!.message, /has no interval/);
    assert.match(v({ name: "x", job: nooutJob, timeout: "100ms" })[0].message, /at least 1s/);
    const reserved = structuredClone(nooutJob) as Obj;
    reserved.spec.template.spec.containers[0].env = [{ name: "TALOS_GATE_NODE", value: "mine" }];
    const r = v({ name: "x", job: reserved });
    assert.equal(r[0].field, "hooks.afterNode.job");
    assert.match(r[0].message, /container "noout" sets env TALOS_GATE_NODE/);
    const long = v({ name: "n".repeat(30), job: nooutJob });
    assert.match(long[0].message, /leaves no room for the per-node suffix \(at most 52 characters before it\)/);
    assert.equal(hook({ name: "x", job: nooutJob, timeout: "2m" }).timeoutMs, 120_000);
  });
});
