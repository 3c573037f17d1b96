// One fixture per rule, each with the exact message (Omni's aggregated text), plus the reference fixtures F1–F8 of
// omni-cluster-templates.md §14.4 and the three templates of Omni's healthcheck documentation.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseTemplate } from "../../../provider/template";
import { EXAMPLES, FIXTURES, errorMessage, fileOptions, parseFile } from "./helpers";

/** Omni's nesting for a single failing healthcheck entry (cluster list → joined healthcheck list → entry list). */
const hcEntry = (...msgs: string[]) =>
  `1 error occurred:\n\t* error validating cluster "demo": 1 error occurred:\n\t* ${msgs.length === 1 ? "1 error" : `${msgs.length} errors`} occurred:\n${msgs.map((m) => `\t* ${m}`).join("\n")}\n\n\n\n\n\n`;
/** A single entry of the cluster's list that is not itself a list (manifest messages, duplicates). */
const clusterEntry = (msg: string) => `1 error occurred:\n\t* error validating cluster "demo": 1 error occurred:\n\t* ${msg}\n\n\n\n`;
const decode = (line: number, msg: string) => `error loading template: error decoding document at line 1:1: yaml: construct errors: line ${line}: ${msg}`;

const RULES: Record<string, string> = {
  // healthchecks (omni-behaviour.md §1.4, §2.3; stricter rules of talos-gate)
  "hc-name-required": hcEntry("either name or idOverride is required for a healthcheck"),
  "hc-job-and-file": hcEntry('healthcheck "both": job and file are mutually exclusive'),
  "hc-job-or-file": hcEntry('healthcheck "empty": job or file is required'),
  "hc-file-missing": hcEntry('healthcheck "missing": failed to access "healthchecks/missing.yaml": statat healthchecks/missing.yaml: no such file or directory'),
  "hc-file-escapes": hcEntry('healthcheck "outside": failed to access "../outside-job.yaml": statat ../outside-job.yaml: path escapes from parent'),
  "hc-duplicate": clusterEntry('duplicate healthcheck "same"'),
  "hc-duplicate-id": clusterEntry('duplicate healthcheck ID "cluster-demo-a": two healthchecks would share the runner Job'),
  "hc-reserved-label": hcEntry(
    'label "omni.sidero.dev/cluster" is invalid: prefix "omni.sidero.dev/" is reserved for internal use',
    'annotation "talos-gate.dev/config-hash" is invalid: prefix "talos-gate.dev/" is reserved for internal use',
  ),
  "hc-interval-min": hcEntry('healthcheck "fast": healthcheck interval must be at least 5s'),
  "hc-interval-not-duration": decode(7, "cannot construct !!str `five mi...` into time.Duration"),
  "hc-interval-plain-number": decode(7, "cannot construct !!int `30` into time.Duration"),
  "hc-unknown-key": decode(7, "field timeout not found in type models.KubernetesHealthCheck"),
  "hc-job-not-string": decode(7, "expected string, but got !!int"),
  "hc-job-invalid-yaml": hcEntry('healthcheck "broken": invalid job manifest: yaml: line 3: Flow sequence in block collection must be sufficiently indented and end with a ]'),
  "hc-job-kind": hcEntry('healthcheck "pod": job manifest must be kind: Job, got "Pod"', 'healthcheck "pod": job manifest must be apiVersion: batch/v1, got "v1"'),
  "hc-job-apiversion": hcEntry('healthcheck "old": job manifest must be apiVersion: batch/v1, got "batch/v1beta1"'),
  "hc-job-no-containers": hcEntry('healthcheck "hollow": job manifest must have at least one container in spec.template.spec.containers'),
  "hc-job-name-too-long": hcEntry(
    'healthcheck ID "cluster-demo-this-healthcheck-name-is-far-too-long-for-a-job" cannot be used to build the runner Job name ' +
      '"talos-gate-cluster-demo-this-healthcheck-name-is-far-too-long-for-a-job": must be no more than 63 characters',
  ),
  "hc-job-name-chars": hcEntry(
    'healthcheck ID "Ceph_Health" cannot be used to build the runner Job name "talos-gate-Ceph_Health": a lowercase RFC 1123 label must ' +
      "consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or " +
      "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  ),
  // manifests (omni-cluster-templates.md §6.6)
  "manifest-mode-missing": clusterEntry('kubernetes manifest "rbac" mode is not set'),
  "manifest-mode-unknown": decode(7, 'unknown mode name "always"'),
  "manifest-name-empty": clusterEntry("kubernetes manifest name is empty"),
  "manifest-inline-and-file": clusterEntry("path and inline are mutually exclusive"),
  "manifest-neither": clusterEntry("path or inline is required"),
  "manifest-file-missing": clusterEntry('failed to access "manifests/missing.yaml": statat manifests/missing.yaml: no such file or directory'),
  "manifest-duplicate": clusterEntry('duplicate manifest name "manifests/namespace.yaml"'),
  "manifest-reserved-annotation": clusterEntry(
    'kubernetes manifest "rbac" descriptors validation failed: 1 error occurred:\n\t* annotation "omni.sidero.dev/system-manifest" is invalid: ' +
      'prefix "omni.sidero.dev/" is reserved for internal use\n\n',
  ),
  "manifest-not-object": clusterEntry('kubernetes manifest "rbac" is invalid: document 1 has no kind'),
};

// omni-cluster-templates.md §14.4, byte for byte.
const REFERENCE: Record<string, string> = {
  "F1-unknown-key": "error loading template: error decoding document at line 1:1: yaml: construct errors: line 5: field manifest not found in type models.KubernetesCluster",
  "F2-unknown-kind": 'error loading template: error in document at line 1:1: unknown model kind "Worker"',
  "F3-wrong-scalar": "error loading template: error decoding document at line 1:1: yaml: construct errors: line 3: cannot construct !!str `true` into bool",
  "F4-cluster-rules": "2 errors occurred:\n\t* error validating cluster \"my cluster\": 4 errors occurred:\n\t* name should only contain letters, digits, dashes and underscores\n\t* error validating Talos version: 1 error occurred:\n\t* version should start with 'v'\n\n\n\t* disk encryption is supported only for Talos version >= 1.5.0\n\t* label \"omni.sidero.dev/owner\" is invalid: prefix \"omni.sidero.dev/\" is reserved for internal use\n\n\n\t* template should contain 1 controlplane, got 0\n\n",
  "F5-workers": "2 errors occurred:\n\t* workers is invalid: 2 errors occurred:\n\t* name \"control-planes\" cannot be used in workers\n\t* invalid machine ID \"not-a-uuid\": invalid UUID length: 10\n\n\n\t* machines [11111111-2222-3333-4444-555555555555] are used in both controlplane and workers\n\n",
  "F6-machine-class": "1 error occurred:\n\t* workers is invalid: 3 errors occurred:\n\t* machine set can not have both machines and machine class defined\n\t* kernelArgs cannot be defined for machine set since it uses machine class\n\t* patch \"\" is invalid: 1 error occurred:\n\t* either name or idOverride is required for inline patches\n\n\n\n\n\n",
  "F7-cross-document": "3 errors occurred:\n\t* template should contain 1 controlplane, got 0\n\t* machine \"11111111-2222-3333-4444-555555555555\" is used in multiple workers: [\"a\" \"b\"]\n\t* machine \"22222222-3333-4444-5555-666666666666\" is not used in controlplane or workers\n\n",
  "F8-controlplane": "2 errors occurred:\n\t* controlplane is invalid: 2 errors occurred:\n\t* custom name is not allowed in the controlplane\n\t* updateStrategy is not allowed in the controlplane\n\n\n\t* machine \"11111111-2222-3333-4444-555555555555\" is locked and used in controlplane\n\n",
};

describe("template/rules: one failing fixture per rule, with Omni's exact aggregated message", () => {
  for (const [name, want] of Object.entries(RULES)) {
    it(name, () => assert.equal(errorMessage(parseFile(path.join(FIXTURES, "rules", `${name}.yaml`))), want));
  }

  it("every rule fixture on disk has an expected message", () => {
    const onDisk = fs.readdirSync(path.join(FIXTURES, "rules")).filter((f) => f.endsWith(".yaml")).map((f) => f.replace(/\.yaml$/, ""));
    assert.deepEqual(onDisk.sort(), Object.keys(RULES).sort());
  });
});

describe("template/rules: Omni's reference fixtures F1–F8 (omni-cluster-templates.md §14.4)", () => {
  for (const [name, want] of Object.entries(REFERENCE)) {
    it(name, () => assert.equal(errorMessage(parseFile(path.join(FIXTURES, "invalid", `${name}.yaml`))), want));
  }
});

describe("template/rules: the templates of Omni's healthcheck documentation validate", () => {
  it("inline-healthcheck.yaml", () => {
    const r = parseFile(path.join(EXAMPLES, "inline-healthcheck.yaml"));
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    const [hc] = r.template.healthchecks;
    assert.equal(hc!.id, "cluster-example-nodes-ready");
    assert.equal(hc!.intervalMs, 30_000);
    assert.deepEqual(hc!.source, { type: "inline", form: "string" });
    assert.match(hc!.manifest, /^apiVersion: batch\/v1\nkind: Job\n/);
    // The check's RBAC ships with it (RBAC is enforced: the check runs as its own ServiceAccount).
    assert.match(hc!.manifest, /serviceAccountName: nodes-ready-check/);
    assert.deepEqual(r.template.manifests[0]!.objects.map((o) => o.kind), ["ServiceAccount", "ClusterRole", "ClusterRoleBinding"]);
  });

  it("file-healthcheck.yaml (the Job comes from healthchecks/nodes-ready.yaml, relative to the template)", () => {
    const r = parseFile(path.join(EXAMPLES, "file-healthcheck.yaml"));
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    const [hc] = r.template.healthchecks;
    assert.equal(hc!.manifest, fs.readFileSync(path.join(EXAMPLES, "healthchecks/nodes-ready.yaml"), "utf8"));
    assert.equal(hc!.intervalMs, 30_000, "default interval");
    assert.equal(hc!.interval, undefined);
  });

  it("ceph-gated.yaml with its RBAC manifests", () => {
    const r = parseFile(path.join(EXAMPLES, "ceph-gated.yaml"));
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    const t = r.template;
    assert.equal(t.cluster.name, "ceph-gated");
    assert.equal(t.healthchecks[0]!.id, "cluster-ceph-gated-ceph-health");
    assert.equal(t.healthchecks[0]!.jobName, "talos-gate-cluster-ceph-gated-ceph-health");
    assert.equal(t.manifests.length, 1);
    const m = t.manifests[0]!;
    assert.equal(m.id, "200-cluster-ceph-gated-ceph-healthcheck-rbac");
    assert.equal(m.mode, "full");
    assert.deepEqual(m.objects.map((o) => o.kind), ["ServiceAccount", "Role", "RoleBinding"]);
    assert.equal(t.controlPlane.id, "ceph-gated-control-planes");
    assert.equal(t.workers[0]!.id, "ceph-gated-workers");
  });
});

describe("template/rules: error details", () => {
  it("reports every error of a template together, each with document, field path and position", () => {
    const text = [
      "kind: Cluster", "name: demo", "kubernetes:", "  version: v1.33.0", "  healthchecks:",
      "    - name: a", "      interval: 1s", "      labels:", "        omni.sidero.dev/x: y", "    - idOverride: b",
      "talos:", "  version: v1.10.0", "---", "kind: Workers", "name: control-planes",
    ].join("\n");
    const r = parseTemplate(text, fileOptions("/nonexistent"));
    assert.ok(!r.ok);
    assert.deepEqual(r.error.errors, [
      { document: 'document 1 (Cluster "demo")', path: "kubernetes.healthchecks[0]", message: 'healthcheck "a": job or file is required', line: 6, column: 7 },
      { document: 'document 1 (Cluster "demo")', path: 'kubernetes.healthchecks[0].labels["omni.sidero.dev/x"]', message: 'label "omni.sidero.dev/x" is invalid: prefix "omni.sidero.dev/" is reserved for internal use', line: 9, column: 9 },
      { document: 'document 1 (Cluster "demo")', path: "kubernetes.healthchecks[0].interval", message: 'healthcheck "a": healthcheck interval must be at least 5s', line: 7, column: 17 },
      { document: 'document 1 (Cluster "demo")', path: "kubernetes.healthchecks[1]", message: 'healthcheck "b": job or file is required', line: 10, column: 7 },
      { document: 'document 2 (Workers "control-planes")', path: "name", message: 'name "control-planes" cannot be used in workers', line: 15, column: 7 },
      { document: "template", path: "", message: "template should contain 1 controlplane, got 0" },
    ]);
    // the healthcheck entries are newline-joined lists inside one entry of the cluster's list, as in Omni
    assert.match(r.error.message, /^3 errors occurred:\n\t\* error validating cluster "demo": 1 error occurred:\n\t\* 3 errors occurred:\n/);
    assert.match(r.error.message, /must be at least 5s\n\n\n1 error occurred:\n\t\* healthcheck "b": job or file is required\n/);
  });

  it("reports the construct errors of every document (Omni stops at the first)", () => {
    const text = "kind: Cluster\nname: demo\ncolour: blue\n---\nkind: ControlPlane\nmachines: 5\n---\nkind: Workers\nlocked: true\n";
    const r = parseTemplate(text);
    assert.equal(
      errorMessage(r),
      [
        "error loading template: error decoding document at line 1:1: yaml: construct errors: line 3: field colour not found in type models.Cluster",
        "error loading template: error decoding document at line 4:1: yaml: construct errors: line 2: cannot construct !!int `5` into models.MachineIDList",
        "error loading template: error decoding document at line 7:1: yaml: construct errors: line 2: field locked not found in type models.Workers",
      ].join("\n"),
    );
  });

  it("a mapping or list where a Go string is decoded (mode, size, updateStrategy.type) is one construct error each", () => {
    // Found by the mutation property test: `mode: {}` used to crash while building the "unknown mode" message.
    const cp = "---\nkind: ControlPlane\nmachines:\n  - 11111111-2222-3333-4444-555555555555\n";
    const cluster = (mode: string) => "kind: Cluster\nname: demo\nkubernetes:\n  version: v1.33.0\n  manifests:\n    - name: m\n" +
      `      mode: ${mode}\n      inline:\n        apiVersion: v1\n        kind: ConfigMap\n        metadata: {name: x}\ntalos:\n  version: v1.10.0\n`;
    assert.equal(errorMessage(parseTemplate(cluster("{}") + cp)), decode(7, "cannot construct !!map into string"));
    assert.equal(errorMessage(parseTemplate(cluster("[full]") + cp)), decode(7, "cannot construct !!seq into string"));
    const workers = "---\nkind: Workers\nmachineClass:\n  name: x\n  size: {}\nupdateStrategy:\n  type: [Rolling]\n";
    assert.equal(
      errorMessage(parseTemplate(cluster("full") + cp + workers)),
      "error loading template: error decoding document at line 18:1: yaml: construct errors: line 4: cannot construct !!map into string; " +
        "line 6: cannot construct !!seq into string",
    );
    // and a string that is not one of the values keeps its own message (text unquoted, as Omni)
    assert.equal(
      errorMessage(parseTemplate(cluster("full") + cp + workers.replace("size: {}", "size: 1").replace("[Rolling]", "Sometimes"))),
      "error loading template: error decoding document at line 18:1: yaml: construct errors: line 6: invalid update strategy type Sometimes",
    );
  });

  it("reports duplicate keys like go-yaml and does not decode that mapping further", () => {
    const text = "kind: Cluster\nname: demo\nkubernetes:\n  version: v1\n  version: v2\n  unknown: x\n";
    assert.equal(errorMessage(parseTemplate(text)), decode(5, 'mapping key "version" already defined at line 4'));
  });

  it("document-level load errors: not a mapping, no kind, kind not a scalar", () => {
    assert.equal(errorMessage(parseTemplate("- a\n")), "error loading template: error in document at line 1:1: unexpected node kind 2, expecting mapping");
    assert.equal(errorMessage(parseTemplate("name: x\n")), "error loading template: error in document at line 1:1: kind field not found");
    assert.equal(errorMessage(parseTemplate("kind: [a]\n")), "error loading template: error in document at line 1:1: unexpected value type for kind field 2");
    // Object property names are kinds like any other: unknown (they used to crash the parser).
    for (const kind of ["constructor", "__proto__", "toString"]) {
      assert.equal(errorMessage(parseTemplate(`kind: ${kind}\n`)), `error loading template: error in document at line 1:1: unknown model kind "${kind}"`);
    }
    assert.equal(
      errorMessage(parseTemplate("kind: Cluster\nname: demo\n---\n")),
      "error loading template: error in document at line 3:1: unexpected node kind 8, expecting mapping",
    );
  });

  it("anchors, aliases and << merge keys work inside a document (explicit keys win)", () => {
    const text = [
      "kind: Cluster", "name: demo", "kubernetes:", "  version: v1.33.0", "  healthchecks:", "    - &base", "      name: a",
      "      interval: 10s", "      job: {apiVersion: batch/v1, kind: Job, spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}",
      "    - <<: *base", "      name: b", "talos:", "  version: v1.10.0", "---", "kind: ControlPlane",
    ].join("\n");
    const r = parseTemplate(text);
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    assert.deepEqual(r.template.healthchecks.map((h) => [h.id, h.intervalMs]), [["cluster-demo-a", 10_000], ["cluster-demo-b", 10_000]]);
  });

  it("an empty template fails with the two count errors", () => {
    assert.equal(
      errorMessage(parseTemplate("# nothing here\n")),
      "2 errors occurred:\n\t* template should contain 1 cluster, got 0\n\t* template should contain 1 controlplane, got 0\n\n",
    );
  });

  it("Kubernetes and Talos version rules (tolerant semver, leading v for Talos)", () => {
    const text = "kind: Cluster\nname: my first cluster\nkubernetes:\n  version: vN.2\ntalos:\n  version: v1.3.0gamma.0\n---\nkind: ControlPlane\n";
    assert.equal(
      errorMessage(parseTemplate(text)),
      '1 error occurred:\n\t* error validating cluster "my first cluster": 3 errors occurred:\n' +
        "\t* name should only contain letters, digits, dashes and underscores\n" +
        '\t* error validating Kubernetes version: 1 error occurred:\n\t* version should be in semver format: Invalid character(s) found in major number "N"\n\n\n' +
        '\t* error validating Talos version: 1 error occurred:\n\t* version should be in semver format: Invalid character(s) found in patch number "0gamma.0"\n\n\n\n\n\n',
    );
  });

  it("a file outside --allowed-dir is refused even through a symlink", function () {
    const dir = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "tg-template-"));
    try {
      fs.mkdirSync(path.join(dir, "t"));
      fs.writeFileSync(path.join(dir, "job.yaml"), fs.readFileSync(path.join(FIXTURES, "rules/healthchecks/ok-job.yaml")));
      fs.symlinkSync(path.join(dir, "job.yaml"), path.join(dir, "t", "link.yaml"));
      const text = fs.readFileSync(path.join(FIXTURES, "rules/hc-file-missing.yaml"), "utf8").replace("healthchecks/missing.yaml", "link.yaml");
      const r = parseTemplate(text, fileOptions(path.join(dir, "t")));
      assert.equal(errorMessage(r), hcEntry('healthcheck "missing": failed to access "link.yaml": statat link.yaml: path escapes from parent'));
      // with the parent directory allowed, the same file is fine
      const ok = parseTemplate(text, { ...fileOptions(path.join(dir, "t")), allowedRoot: dir });
      assert.ok(ok.ok, ok.ok ? "" : ok.error.message);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
