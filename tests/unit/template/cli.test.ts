// `talos-gate validate`, run in-process (stdout/stderr captured).
import assert from "node:assert/strict";
import * as path from "node:path";
import * as YAML from "yaml";
import { run as runRbac } from "../../../cli/rbac";
import { run } from "../../../cli/validate";
import { CLUSTER_RULES, SYSTEM_RULES } from "../../../provider/kube/rbac";
import { EXAMPLES, FIXTURES } from "./helpers";

async function capture(argv: string[], command: (argv: string[]) => Promise<number> = run): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const o = process.stdout.write.bind(process.stdout);
  const e = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((s: string) => ((out += s), true)) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => ((err += s), true)) as typeof process.stderr.write;
  try {
    const code = await command(argv);
    return { code, out, err };
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
}

describe("cli: talos-gate validate", () => {
  it("prints valid and a one-line summary, exit 0", async () => {
    const r = await capture([path.join(EXAMPLES, "ceph-gated.yaml")]);
    assert.equal(r.code, 0);
    assert.equal(r.out, 'valid\ncluster "ceph-gated"; kubernetes v1.35.0; talos v1.11.0; machines: controlplane 1, workers 1; 1 healthcheck; 1 manifest\n');
  });

  it("--json prints the normalized model", async () => {
    const r = await capture(["--json", path.join(EXAMPLES, "inline-healthcheck.yaml")]);
    assert.equal(r.code, 0);
    const model = JSON.parse(r.out);
    assert.equal(model.healthchecks[0].id, "cluster-example-nodes-ready");
    assert.equal(model.healthchecks[0].intervalMs, 30000);
  });

  it("prints every error with file, line, document and field, then Omni's text; exit 1", async () => {
    const file = path.join(FIXTURES, "invalid", "F5-workers.yaml");
    const r = await capture([file]);
    assert.equal(r.code, 1);
    assert.equal(r.out, "");
    assert.equal(
      r.err,
      `${file}:13:7: document 3 (Workers "control-planes") name: name "control-planes" cannot be used in workers\n` +
        `${file}:16:5: document 3 (Workers "control-planes") machines[1]: invalid machine ID "not-a-uuid": invalid UUID length: 10\n` +
        `${file}: template: machines [11111111-2222-3333-4444-555555555555] are used in both controlplane and workers\n` +
        "\nError: 2 errors occurred:\n\t* workers is invalid: 2 errors occurred:\n\t* name \"control-planes\" cannot be used in workers\n" +
        "\t* invalid machine ID \"not-a-uuid\": invalid UUID length: 10\n\n\n\t* machines [11111111-2222-3333-4444-555555555555] are used in both controlplane and workers\n",
    );
  });

  it("a missing file is an error, not a stack trace", async () => {
    const r = await capture([path.join(FIXTURES, "nope.yaml")]);
    assert.equal(r.code, 1);
    assert.match(r.err, /^Error: cannot read template ".*nope\.yaml": ENOENT/);
  });

  it("usage errors exit 2", async () => {
    assert.equal((await capture([])).code, 2);
  });
});

describe("cli: talos-gate rbac", () => {
  it("prints the shipped ClusterRole and kube-system Role, with bindings for the named ServiceAccount, for kubectl apply", async () => {
    const r = await capture(["--service-account", "ci/pipeline"], runRbac);
    assert.equal(r.code, 0, r.err);
    const docs = YAML.parseAllDocuments(r.out).map((d) => d.toJS());
    assert.deepEqual(docs.map((d) => [d.kind, d.metadata.name, d.metadata.namespace]), [
      ["ClusterRole", "talos-gate", undefined], ["Role", "talos-gate", "kube-system"],
      ["ClusterRoleBinding", "talos-gate", undefined], ["RoleBinding", "talos-gate", "kube-system"],
    ]);
    assert.deepEqual(docs[0].rules, CLUSTER_RULES);
    assert.deepEqual(docs[1].rules, SYSTEM_RULES);
    assert.deepEqual(docs[2].subjects, [{ kind: "ServiceAccount", name: "pipeline", namespace: "ci" }]);
    assert.ok(!JSON.stringify(docs).includes("secrets"), "no Secrets");
    const bad = await capture(["--service-account", "pipeline"], runRbac);
    assert.equal(bad.code, 2);
    assert.equal(bad.err, 'talos-gate rbac: --service-account must be <namespace>/<name>, got "pipeline"\n');
  });
});
