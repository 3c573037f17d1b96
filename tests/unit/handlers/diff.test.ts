// Stable previews, offline: `diff` of every kind says "no change" for another spelling of the same inputs and
// "change" for a change that matters; a credentials rotation is an update that runs no rollout; cluster names that
// cannot name Kubernetes objects are refused at check time. Drives the handlers as the serialized shim does.
import * as assert from "node:assert/strict";
import * as YAML from "yaml";
import { check, create, diff, update } from "../../../provider/handlers";
import { parseTalosUpgrade, rolloutKey } from "../../../provider/resources/talosUpgrade";

const job = (script: string) => ({
  apiVersion: "batch/v1", kind: "Job",
  spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i", command: ["sh", "-c", script] }] } } },
});

/** A kubeconfig nothing listens behind: any cluster call would fail (or hang) the test. */
const kubeconfig = [
  "apiVersion: v1", "kind: Config",
  "clusters:", "- name: c", "  cluster:", "    server: https://127.0.0.1:1", "    insecure-skip-tls-verify: true",
  "users:", "- name: u", "  user:", "    token: t",
  "contexts:", "- name: c", "  context:", "    cluster: c", "    user: u", "current-context: c", "",
].join("\n");

function upgradeProps(over: Record<string, unknown> = {}) {
  return {
    kind: "TalosUpgrade", clusterName: "prod", kubeconfig, talosconfig: "talosconfig-text", owner: "p/s/talos",
    version: "v1.13.2", holdTimeout: "60m", nodeTimeout: "15m", machineNames: ["w-1", "cp-1"],
    healthchecks: [{ cluster: "prod", name: "ceph", job: YAML.stringify(job("ceph health")), interval: "1m" }],
    ...over,
  };
}

describe("handlers: TalosUpgrade diff is about what the rollout does", () => {
  const done = (p: Record<string, unknown>) => ({ ...p, status: { phase: "Done" } });

  it("another spelling of every input is no change", async () => {
    const spelled = upgradeProps({
      version: "1.13.2", holdTimeout: "1h", nodeTimeout: undefined, strategy: { workerParallelism: 1 },
      machineNames: ["cp-1", "w-1"],
      healthchecks: [{ cluster: "prod", name: "ceph", job: job("ceph health"), interval: "60s" }],
    });
    assert.deepEqual(await diff("prod", done(upgradeProps()), spelled), { changes: false, replaces: [] });
  });

  it("state written by 0.1.0 (checks as composed Jobs, interval '1m0s') is no change against today's inputs", async () => {
    const now = parseTalosUpgrade(upgradeProps());
    const composed = now.healthchecks.map((h) => ({ id: h.id, job: h.job, interval: "1m0s", configHash: h.configHash }));
    const old = done({ ...upgradeProps(), healthchecks: composed, healthcheckIds: ["cluster-prod-ceph"] });
    assert.deepEqual(await diff("prod", old, upgradeProps()), { changes: false, replaces: [] });
  });

  it("a change of version, timeout, strategy, machines or a check's content or interval is a change", async () => {
    const base = done(upgradeProps());
    for (const over of [
      { version: "v1.13.3" }, { holdTimeout: "30m" }, { nodeTimeout: "10m" }, { drain: "always" }, { strategy: { workerParallelism: 2 } },
      { machineNames: ["w-1"] }, { path: ["v1.12.11"] },
      { healthchecks: [{ cluster: "prod", name: "ceph", job: job("ceph health detail"), interval: "1m" }] },
      { healthchecks: [{ cluster: "prod", name: "ceph", job: job("ceph health"), interval: "2m" }] },
    ]) {
      assert.equal((await diff("prod", base, upgradeProps(over))).changes, true, JSON.stringify(over));
    }
    assert.deepEqual((await diff("prod", base, upgradeProps({ clusterName: "prod2" }))).replaces, ["clusterName"]);
  });

  it("a rollout waiting for its maintenance window (or failed) is still pending: the next preview shows an update with no input change", async () => {
    for (const phase of ["Waiting", "Failed", "Upgrading"]) {
      const old = { ...upgradeProps(), status: { phase } };
      assert.deepEqual(await diff("prod", old, upgradeProps()), { changes: true, replaces: [] }, phase);
    }
  });

  it("a converged run with only new credentials is an update that stores them and touches nothing", async () => {
    const old = done(upgradeProps());
    const rotated = upgradeProps({ talosconfig: "renewed-talosconfig-text" });
    assert.equal((await diff("prod", old, rotated)).changes, true);
    const r = await update("prod", old, rotated); // would fail or hang if it called the cluster
    assert.equal(r.outs?.talosconfig, "renewed-talosconfig-text");
    assert.deepEqual(r.outs?.status, { phase: "Done" });
  });

  it("issue 25: drain is an input of the rollout; omitted (earlier releases' state) it is \"auto\"; anything else is refused", async () => {
    const base = done(upgradeProps());
    assert.deepEqual(await diff("prod", base, upgradeProps({ drain: "auto" })), { changes: false, replaces: [] });
    assert.equal((await diff("prod", base, upgradeProps({ drain: "never" }))).changes, true);
    assert.equal(parseTalosUpgrade(upgradeProps()).drain, "auto");
    assert.deepEqual((await check({}, upgradeProps({ drain: "sometimes" }))).failures, [{
      property: "drain", reason: 'drain must be "auto" (drain unless no other node could take the pods), "always" or "never", got "sometimes"',
    }]);
  });

  it('issue 25: etcdQuorumLoss is an input of the rollout; omitted it is "refuse"; anything else is refused', async () => {
    const base = done(upgradeProps());
    assert.deepEqual(await diff("prod", base, upgradeProps({ etcdQuorumLoss: "refuse" })), { changes: false, replaces: [] });
    assert.equal((await diff("prod", base, upgradeProps({ etcdQuorumLoss: "allow" }))).changes, true);
    assert.equal(parseTalosUpgrade(upgradeProps()).etcdQuorumLoss, "refuse");
    assert.deepEqual((await check({}, upgradeProps({ etcdQuorumLoss: "yes" }))).failures?.map((f) => f.property), ["etcdQuorumLoss"]);
  });

  it("issue 18 point 8: imageFactoryHost is an input of the rollout, checked for its form; absent it changes nothing", async () => {
    const base = done(upgradeProps());
    assert.equal((await diff("prod", base, upgradeProps({ imageFactoryHost: "factory.corp.example" }))).changes, true);
    assert.deepEqual(await diff("prod", base, upgradeProps({ imageFactoryHost: undefined })), { changes: false, replaces: [] });
    assert.deepEqual(parseTalosUpgrade(upgradeProps({ schematic: "a".repeat(64), imageFactoryHost: "factory.corp.example:5000" })).installer,
      { schematic: "a".repeat(64), factoryHost: "factory.corp.example:5000" });
    const r = await check({}, upgradeProps({ imageFactoryHost: "https://factory.corp.example" }));
    assert.deepEqual(r.failures?.map((f) => f.property), ["imageFactoryHost"]);
    assert.match(r.failures![0].reason, /"https:\/\/factory\.corp\.example" is not an Image Factory host/);
  });

  it("rolloutKey ignores a check's manifest spelling (the config-hash annotation) but not its content", () => {
    const yaml = parseTalosUpgrade(upgradeProps());
    const object = parseTalosUpgrade(upgradeProps({ healthchecks: [{ cluster: "prod", name: "ceph", job: job("ceph health"), interval: "1m" }] }));
    assert.notEqual(yaml.healthchecks[0].configHash, object.healthchecks[0].configHash, "the spellings hash differently");
    assert.equal(rolloutKey(yaml), rolloutKey(object));
  });
});

describe("handlers: Healthcheck and Cluster diffs", () => {
  it("a Healthcheck in another spelling is no change; its content, interval or labels are", async () => {
    const inputs = { kind: "Healthcheck", clusterName: "prod", name: "ceph", job: YAML.stringify(job("ceph health")), interval: "1m" };
    const { outs } = await create(inputs); // no kubeconfig: no dry run
    assert.equal(outs.interval, "1m0s");
    for (const same of [{ interval: "60s" }, { job: job("ceph health") }, { job: [job("ceph health")] }]) {
      assert.deepEqual(await diff("x", outs, { ...inputs, ...same }), { changes: false, replaces: [] }, JSON.stringify(same));
    }
    assert.deepEqual(await diff("x", (await create({ ...inputs, interval: undefined })).outs, { ...inputs, interval: "30s" }),
      { changes: false, replaces: [] }, "an omitted interval is the 30s default");
    for (const other of [{ interval: "2m" }, { job: job("ceph status") }, { labels: { team: "storage" } }, { kubeconfig }]) {
      assert.equal((await diff("x", outs, { ...inputs, ...other })).changes, true, JSON.stringify(other));
    }
  });

  it("a Cluster's manifests as YAML or objects, and an omitted default mode, are no change; new credentials are", async () => {
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" }, data: { k: "v" } };
    const base = { kind: "Cluster", clusterName: "prod", kubeconfig, talosconfig: "t", manifests: [{ name: "m", inline: YAML.stringify(cm) }] };
    for (const same of [[{ name: "m", inline: cm }], [{ name: "m", mode: "full", inline: [cm] }]]) {
      assert.deepEqual(await diff("prod", base, { ...base, manifests: same }), { changes: false, replaces: [] });
    }
    assert.equal((await diff("prod", base, { ...base, talosconfig: "t2" })).changes, true);
    assert.equal((await diff("prod", base, { ...base, manifests: [{ name: "m", mode: "one-time", inline: cm }] })).changes, true);
  });
});

describe("handlers: cluster names must name Kubernetes objects", () => {
  for (const [name, reason] of [
    ["Prod", /clusterName "Prod" cannot name the cluster's Kubernetes objects .* it has characters Kubernetes names cannot hold; .* e\.g\. "prod"$/],
    ["prod_eu", /e\.g\. "prod-eu"$/],
    ["-prod", /e\.g\. "prod"$/],
    ["p".repeat(64), /it is longer than 63 characters/],
  ] as const) {
    it(`refuses ${JSON.stringify(name.length > 10 ? `${name.slice(0, 6)}…` : name)} naming the field, for every kind`, async () => {
      const cluster = await check({}, { kind: "Cluster", clusterName: name, kubeconfig, talosconfig: "x" });
      assert.match(cluster.failures?.find((f) => f.property === "clusterName")?.reason ?? "", reason);
      const upgrade = await check({}, upgradeProps({ clusterName: name }));
      assert.match(upgrade.failures?.find((f) => f.property === "clusterName")?.reason ?? "", reason);
      const hc = await check({}, { kind: "Healthcheck", clusterName: name, name: "ceph", job: job("true") });
      assert.match(hc.failures?.find((f) => f.property === "cluster")?.reason ?? "", /cannot name the cluster's Kubernetes objects/);
    });
  }
});
