import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  composeHealthcheck, configHash, parseTemplate, validateHealthcheck, TemplateValidationError, type ComposedHealthcheckJob,
} from "../../../provider/template";
import type { HealthcheckJob } from "../../../provider/rollout/ports";
import { EXAMPLES, FIXTURES, fileOptions, parseFile } from "./helpers";

// Compile-time check: the composed job is exactly the rollout port's HealthcheckJob.
const _toPort = (j: ComposedHealthcheckJob): HealthcheckJob => j;
const _fromPort = (j: HealthcheckJob): ComposedHealthcheckJob => j;
void _toPort;
void _fromPort;

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe("template/compose: the runner Job", () => {
  it("composes the Ceph check as DESIGN.md says, keeping everything else of the user's", () => {
    const r = parseFile(path.join(EXAMPLES, "ceph-gated.yaml"));
    assert.ok(r.ok);
    const hc = r.template.healthchecks[0]!;
    const c = composeHealthcheck(hc, "ceph-gated");
    assert.equal(c.id, "cluster-ceph-gated-ceph-health");
    assert.equal(c.jobName, "talos-gate-cluster-ceph-gated-ceph-health");
    assert.equal(c.namespace, "rook-ceph");
    assert.equal(c.intervalMs, 30_000);
    assert.equal(c.configHash, configHash(hc.manifest));
    assert.match(c.configHash, /^[0-9a-f]{64}$/);
    const job = c.job as Obj;
    assert.equal(job.apiVersion, "batch/v1");
    assert.equal(job.kind, "Job");
    assert.deepEqual(job.metadata, {
      namespace: "rook-ceph",
      name: "talos-gate-cluster-ceph-gated-ceph-health",
      labels: { "app.kubernetes.io/name": "talos-gate-healthcheck" },
      annotations: { "talos-gate.dev/config-hash": c.configHash },
    });
    assert.equal(job.spec.backoffLimit, 0);
    assert.deepEqual(job.spec.template.metadata, { labels: { "app.kubernetes.io/name": "talos-gate-healthcheck" } });
    assert.equal(job.spec.template.spec.serviceAccountName, "omni-ceph-healthcheck");
    assert.equal(job.spec.template.spec.restartPolicy, "Never");
    const [container] = job.spec.template.spec.containers;
    assert.equal(container.terminationMessagePolicy, "FallbackToLogsOnError");
    assert.equal(container.image, "quay.io/ceph/ceph:v18");
    assert.match(container.command[2], /ceph is not healthy, holding upgrade:/);
  });

  it("defaults the namespace, overrides name/generateName, keeps user labels and explicit policies", () => {
    const manifest = [
      "apiVersion: batch/v1", "kind: Job", "metadata:", "  name: mine", "  generateName: mine-", "  labels: {team: storage}",
      "  annotations: {note: keep}", "spec:", "  template:", "    metadata:", "      labels: {pod: label}", "    spec:",
      "      containers:", "        - {name: a, image: busybox, terminationMessagePolicy: File}", "        - {name: b, image: busybox}",
    ].join("\n");
    const c = composeHealthcheck({ name: "x", manifest, intervalMs: 7000 }, "prod");
    const job = c.job as Obj;
    assert.equal(c.namespace, "default");
    assert.deepEqual(job.metadata, {
      name: "talos-gate-cluster-prod-x", namespace: "default",
      labels: { team: "storage", "app.kubernetes.io/name": "talos-gate-healthcheck" },
      annotations: { note: "keep", "talos-gate.dev/config-hash": configHash(manifest) },
    });
    assert.deepEqual(job.spec.template.metadata.labels, { pod: "label", "app.kubernetes.io/name": "talos-gate-healthcheck" });
    assert.deepEqual(job.spec.template.spec.containers.map((x: Obj) => x.terminationMessagePolicy), ["File", "FallbackToLogsOnError"]);
    assert.equal(c.intervalMs, 7000);
  });

  it("uses idOverride verbatim", () => {
    const c = composeHealthcheck({ idOverride: "prod-ingress", name: "ignored", manifest: fs.readFileSync(path.join(FIXTURES, "rules/healthchecks/ok-job.yaml"), "utf8") }, "prod");
    assert.equal(c.jobName, "talos-gate-prod-ingress");
  });

  it("refuses a manifest that is not a Job with a TemplateValidationError", () => {
    assert.throws(
      () => composeHealthcheck({ name: "x", manifest: "apiVersion: v1\nkind: Pod\n" }, "prod"),
      (e: unknown) => e instanceof TemplateValidationError && /job manifest must be kind: Job, got "Pod"/.test(e.message),
    );
  });

  it("job as a mapping and as a list of mappings are accepted, as in Omni (keys re-encoded sorted)", () => {
    const base = "kind: Cluster\nname: demo\nkubernetes:\n  version: v1.33.0\n  healthchecks:\n";
    const tail = "talos:\n  version: v1.10.0\n---\nkind: ControlPlane\n";
    const mapping = base + "    - name: m\n      job:\n        kind: Job\n        apiVersion: batch/v1\n        spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}\n" + tail;
    const r = parseTemplate(mapping);
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    assert.match(r.template.healthchecks[0]!.manifest, /^apiVersion: batch\/v1\nkind: Job\n/);
    assert.deepEqual(r.template.healthchecks[0]!.source, { type: "inline", form: "mapping" });
    const list = base + "    - name: l\n      job:\n        - kind: Job\n          apiVersion: batch/v1\n" + tail;
    const rl = parseTemplate(list);
    assert.ok(!rl.ok);
    assert.match(rl.error.message, /healthcheck "l": job manifest must have at least one container/);
  });
});

describe("template/compose: YAML scalars of the Job", () => {
  it("folds a multi-line plain scalar like YAML and go-yaml (one space per line break, a newline per empty line)", () => {
    // What yaml.stringify (and many editors) write for a long command: a plain scalar continued on the next line.
    const job = [
      "apiVersion: batch/v1", "kind: Job", "spec:", "  template:", "    spec:", "      restartPolicy: Never", "      containers:",
      "        - name: check", "          image: busybox", "          command:", "            - sh", "            - -c",
      "            - while [ ! -e /tmp/open ]; do sleep", "              0.01; done;   ", "", "              exit 0", "",
    ].join("\n");
    const v = validateHealthcheck({ name: "fold", job, interval: "5s" }, { cluster: "c" });
    assert.ok(v.ok, JSON.stringify(!v.ok && v.failures));
    const composed = composeHealthcheck(v.healthcheck, "c").job as Obj;
    assert.deepEqual(composed.spec.template.spec.containers[0].command, ["sh", "-c", "while [ ! -e /tmp/open ]; do sleep 0.01; done;\nexit 0"]);
  });
});

describe("template/validateHealthcheck: one healthcheck object (Pulumi check)", () => {
  const job = fs.readFileSync(path.join(FIXTURES, "rules/healthchecks/ok-job.yaml"), "utf8");

  it("accepts a valid healthcheck and returns the normalized model", () => {
    const r = validateHealthcheck({ name: "ceph", job, interval: "45s", labels: { team: "storage" } }, { cluster: "prod" });
    assert.ok(r.ok);
    assert.equal(r.healthcheck.id, "cluster-prod-ceph");
    assert.equal(r.healthcheck.intervalMs, 45_000);
    assert.equal(composeHealthcheck(r.healthcheck, "prod").jobName, "talos-gate-cluster-prod-ceph");
  });

  it("accepts job as an object", () => {
    const r = validateHealthcheck(
      { name: "obj", job: { apiVersion: "batch/v1", kind: "Job", spec: { template: { spec: { containers: [{ name: "c", image: "busybox" }] } } } } },
      { cluster: "prod" },
    );
    assert.ok(r.ok, r.ok ? "" : JSON.stringify(r.failures));
  });

  it("returns every failure with its field path", () => {
    const r = validateHealthcheck({ job, file: "x.yaml", interval: "1s", annotations: { "talos-gate.dev/a": "b" } }, { cluster: "prod" });
    assert.ok(!r.ok);
    assert.deepEqual(r.failures, [
      { path: "", message: "either name or idOverride is required for a healthcheck" },
      { path: "", message: 'healthcheck "": job and file are mutually exclusive' },
      { path: 'annotations["talos-gate.dev/a"]', message: 'annotation "talos-gate.dev/a" is invalid: prefix "talos-gate.dev/" is reserved for internal use' },
      { path: "interval", message: 'healthcheck "": healthcheck interval must be at least 5s' },
    ]);
    // Past 2^31 ms a timer fires at once: the check would be retried in a tight loop.
    const long = validateHealthcheck({ name: "slow", job, interval: "600h" }, { cluster: "prod" });
    assert.ok(!long.ok);
    assert.deepEqual(long.failures, [
      { path: "interval", message: 'healthcheck "slow": healthcheck interval is longer than a timer can wait (2^31 ms, about 24 days); use at most 596h' },
    ]);
  });

  it("reports type errors and unknown fields in go-yaml's words", () => {
    const r = validateHealthcheck({ name: "x", job: 5, interval: "soon", timeout: "1m" }, { cluster: "prod" });
    assert.ok(!r.ok);
    assert.deepEqual(r.failures, [
      { path: "job", message: "expected string, but got !!int" },
      { path: "interval", message: "cannot construct !!str `soon` into time.Duration" },
      { path: "timeout", message: "field timeout not found in type models.KubernetesHealthCheck" },
    ]);
  });

  it("reads file through the injected reader, relative to baseDir", () => {
    const r = validateHealthcheck({ name: "f", file: "healthchecks/ok-job.yaml" }, { cluster: "prod", ...fileOptions(path.join(FIXTURES, "rules")) });
    assert.ok(r.ok, r.ok ? "" : JSON.stringify(r.failures));
    assert.deepEqual(r.healthcheck.source.type, "file");
  });
});
