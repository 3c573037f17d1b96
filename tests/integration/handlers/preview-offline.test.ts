// `check` and `diff` never need the cluster: a PR pipeline without access still validates everything and previews,
// and the plan says it will be computed at apply time. Drives the handlers the serialized shim loads.
import * as assert from "node:assert/strict";
import { check, diff } from "../../../provider/handlers";
import { freePort } from "../../../sim/ports";
import { TalosNodeSim } from "../../../sim/talos";

describe("handlers: preview without a reachable cluster", function () {
  this.timeout(30000);

  async function inputs() {
    const port = await freePort(); // nothing listens there
    const talos = await TalosNodeSim.start({ nodes: 1 });
    const talosconfig = talos.talosconfig();
    await talos.stop();
    const kubeconfig = [
      "apiVersion: v1", "kind: Config",
      "clusters:", "- name: c", "  cluster:", `    server: https://127.0.0.1:${port}`, "    insecure-skip-tls-verify: true",
      "users:", "- name: u", "  user:", "    token: not-a-real-token",
      "contexts:", "- name: c", "  context:", "    cluster: c", "    user: u", "current-context: c", "",
    ].join("\n");
    return {
      kind: "TalosUpgrade", clusterName: "prod", kubeconfig, talosconfig, version: "v1.13.2", holdTimeout: "60m",
      nodeTimeout: "15m", healthchecks: [], healthcheckIds: ["cluster-prod-ceph"], machineNames: [], owner: "p/s/talos",
    };
  }

  it("check validates and returns the inputs with a plan that says why it is not computed", async function () {
    this.timeout(30_000); // bounded: a check that waited on the unreachable cluster would fail here
    const news = await inputs();
    const r = await check({}, news);
    assert.equal(r.failures, undefined);
    assert.equal(r.inputs?.version, "v1.13.2");
    assert.equal(r.inputs?.plan.length, 1);
    assert.match(r.inputs?.plan[0], /^\(plan computed at apply time: .*(ECONNREFUSED|connect|did not answer).*\)$/);
  });

  it("check still reports every bad field without the cluster", async () => {
    const news = { ...(await inputs()), version: "1.13", holdTimeout: "soon", strategy: { workerParallelism: 0 } };
    const r = await check({}, news);
    assert.deepEqual(r.failures?.map((f) => f.property).sort(), ["holdTimeout", "strategy", "version"]);
    // A duration past what a timer can hold (2^31 ms) would fire at once: "720h" failed every hold immediately.
    const long = await check({}, { ...(await inputs()), holdTimeout: "720h", nodeTimeout: "596h" });
    assert.deepEqual(long.failures, [{ property: "holdTimeout", reason: 'holdTimeout "720h" is longer than a timer can wait (2^31 ms, about 24 days); use at most "596h"' }]);
  });

  it("diff is offline: unchanged inputs of a converged upgrade are no change, a new version is", async () => {
    const news = await inputs();
    const olds = { ...news, plan: ["whatever was planned"], status: { phase: "Done" } };
    assert.deepEqual(await diff("prod", olds, news), { changes: false, replaces: [] });
    assert.equal((await diff("prod", olds, { ...news, version: "v1.13.3" })).changes, true);
    assert.equal((await diff("prod", { ...olds, status: { phase: "Failed" } }, news)).changes, true, "a failed run resumes");
  });
});

describe("handlers: dispatch on the resource kind", () => {
  it("an unknown kind — even an Object property name — is a clear error naming the kind and what to do", async () => {
    for (const kind of ["Nope", "constructor", "__proto__"]) {
      await assert.rejects(check({}, { kind }), (err: Error) => {
        assert.equal(err.message, `talos-gate: unknown resource kind ${JSON.stringify(kind)}; the installed talos-gate package ` +
          "is older than the one that wrote this state: upgrade the talos-gate package");
        return true;
      });
    }
  });
});
