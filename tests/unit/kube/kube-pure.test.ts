// The Kubernetes port's pure rules: Omni's failure text (§4.4), the enforced runner Job identity, machine reads,
// drain filters and PDB selectors, manifest parsing and label values.
import * as assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { isEvictable, selects } from "../../../provider/kube/drain";
import { casualtiesOf, couldTake, podsWithNowhereToGo, tolerates, violatedBudgets } from "../../../provider/kube/placement";
import { labelValue, parseManifest } from "../../../provider/kube/manifests";
import { machineOf, talosVersionOf, trimNode } from "../../../provider/kube/nodes";
import { KubeError, redactSecrets } from "../../../provider/kube/errors";
import { portErrorKind } from "../../../provider/rollout/ports";
import { failureText, jobBody } from "../../../provider/kube/runner";
import { mirrorWindowMs } from "../../../provider/kube/status";

const failedJob = (reason?: string, message?: string, uid = "job-uid"): k8s.V1Job => ({
  metadata: { name: "talos-gate-x", uid },
  status: { conditions: [{ type: "FailureTarget", status: "True" }, { type: "Failed", status: "True", reason, message }] },
});

const pod = (containers: Array<{ exitCode: number; message?: string; finishedAt?: string }>, controllerUid = "job-uid"): k8s.V1Pod => ({
  metadata: { labels: { "batch.kubernetes.io/controller-uid": controllerUid } },
  status: {
    containerStatuses: containers.map((c, i) => ({
      name: `c${i}`, image: "busybox", imageID: "", ready: false, restartCount: 0,
      state: { terminated: { exitCode: c.exitCode, message: c.message, finishedAt: (c.finishedAt ?? "2026-01-01T00:00:00Z") as any } },
    })),
  },
});

describe("unit: kube port — failure text (Omni §4.4)", () => {
  it("takes the most recently finished failed container's trimmed termination message", () => {
    const pods = [
      pod([{ exitCode: 1, message: "older", finishedAt: "2026-01-01T00:00:01Z" }]),
      pod([{ exitCode: 2, message: "  newest\n", finishedAt: "2026-01-01T00:00:09Z" }, { exitCode: 0, message: "ok", finishedAt: "2026-01-01T00:00:10Z" }]),
      pod([{ exitCode: 1, message: "middle", finishedAt: "2026-01-01T00:00:05Z" }]),
    ];
    assert.equal(failureText(failedJob(), pods), "newest");
  });

  it("ties keep the first seen; exit 0 and blank messages do not count", () => {
    const pods = [
      pod([{ exitCode: 1, message: "first" }, { exitCode: 1, message: "second" }]),
      pod([{ exitCode: 1, message: "   ", finishedAt: "2026-01-02T00:00:00Z" }, { exitCode: 0, message: "fine", finishedAt: "2026-01-03T00:00:00Z" }]),
    ];
    assert.equal(failureText(failedJob(), pods), "first");
  });

  it("ignores pods of an older Job of the same name", () => {
    assert.equal(failureText(failedJob("DeadlineExceeded", "Job was active longer than specified deadline"), [pod([{ exitCode: 1, message: "stale" }], "old-uid")]),
      "DeadlineExceeded: Job was active longer than specified deadline");
  });

  it("falls back to `<reason>: <message>`, `healthcheck job failed` for an empty reason", () => {
    assert.equal(failureText(failedJob("BackoffLimitExceeded", "Job has reached the specified backoff limit"), []),
      "BackoffLimitExceeded: Job has reached the specified backoff limit");
    assert.equal(failureText(failedJob("PodFailurePolicy", ""), []), "PodFailurePolicy");
    assert.equal(failureText(failedJob("", "something"), []), "healthcheck job failed: something");
    assert.equal(failureText(failedJob(), []), "healthcheck job failed");
  });
});

describe("unit: kube port — runner Job identity", () => {
  it("enforces name, namespace, runner labels and the config-hash annotation, keeping the user's own", () => {
    const body = jobBody({
      id: "cluster-c-x", jobName: "talos-gate-cluster-c-x", namespace: "ceph", configHash: "abc", intervalMs: 30000,
      job: { metadata: { name: "other", labels: { team: "storage" }, annotations: { note: "n" } }, spec: { template: { metadata: { labels: { a: "b" } }, spec: {} } } },
    });
    assert.equal(body.apiVersion, "batch/v1");
    assert.equal(body.kind, "Job");
    assert.deepEqual(body.metadata, {
      name: "talos-gate-cluster-c-x", namespace: "ceph",
      labels: { team: "storage", "app.kubernetes.io/name": "talos-gate-healthcheck" },
      annotations: { note: "n", "talos-gate.dev/config-hash": "abc" },
    });
    assert.deepEqual(body.spec!.template.metadata!.labels, { a: "b", "app.kubernetes.io/name": "talos-gate-healthcheck" });
  });
});

describe("unit: kube port — machines", () => {
  it("parses the Talos version from osImage", () => {
    assert.equal(talosVersionOf("Talos (v1.13.2)"), "v1.13.2");
    assert.equal(talosVersionOf("Talos (v1.14.0-alpha.1)"), "v1.14.0-alpha.1");
    assert.equal(talosVersionOf("Ubuntu 24.04.1 LTS"), undefined);
    assert.equal(talosVersionOf(undefined), undefined);
  });

  it("reads the legacy master label as control plane and falls back to another address", () => {
    const m = machineOf({ metadata: { name: "n", labels: { "node-role.kubernetes.io/master": "" } }, status: { addresses: [{ type: "ExternalIP", address: "1.2.3.4" }] } });
    assert.deepEqual(m, { name: "n", role: "controlplane", address: "1.2.3.4", ready: false, cordoned: false, machineSet: "control-planes" });
  });
});

describe("unit: kube port — drain filters", () => {
  const p = (extra: Partial<k8s.V1Pod["metadata"]> = {}, phase = "Running"): k8s.V1Pod => ({ metadata: { name: "p", ...extra }, status: { phase } });
  it("skips DaemonSet, mirror and finished pods", () => {
    assert.equal(isEvictable(p()), true);
    assert.equal(isEvictable(p({ ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "r", uid: "u", controller: true }] })), true);
    assert.equal(isEvictable(p({ ownerReferences: [{ apiVersion: "apps/v1", kind: "DaemonSet", name: "d", uid: "u", controller: true }] })), false);
    assert.equal(isEvictable(p({ annotations: { "kubernetes.io/config.mirror": "x" } })), false);
    assert.equal(isEvictable(p({}, "Succeeded")), false);
    assert.equal(isEvictable(p({}, "Failed")), false);
  });

  it("matches PDB selectors (matchLabels and matchExpressions)", () => {
    const labels = { app: "db", tier: "data" };
    assert.equal(selects({ matchLabels: { app: "db" } }, labels), true);
    assert.equal(selects({ matchLabels: { app: "web" } }, labels), false);
    assert.equal(selects({ matchExpressions: [{ key: "tier", operator: "In", values: ["data", "cache"] }] }, labels), true);
    assert.equal(selects({ matchExpressions: [{ key: "tier", operator: "NotIn", values: ["data"] }] }, labels), false);
    assert.equal(selects({ matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] }, labels), true);
    assert.equal(selects({ matchExpressions: [{ key: "zone", operator: "Exists" }] }, labels), false);
    assert.equal(selects({}, labels), true, "an empty selector selects every pod (policy/v1)");
    assert.equal(selects(undefined, labels), false);
  });
});

describe("unit: kube port — manifests", () => {
  it("parses multi-document YAML, skips empty documents and expands Lists", () => {
    const objs = parseManifest({
      name: "m",
      content: "# only a comment\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n---\n",
    });
    assert.deepEqual(objs.map((o) => `${o.kind}/${o.metadata.name}`), ["ConfigMap/a", "Secret/b"]);
  });

  it("makes label values from any manifest or cluster name", () => {
    assert.equal(labelValue("rbac"), "rbac");
    assert.equal(labelValue("manifests/ceph rbac.yaml"), "manifests-ceph-rbac.yaml");
    assert.equal(labelValue("-x-"), "x");
    assert.equal(labelValue("a".repeat(80)).length, 63);
  });
});

describe("unit: kube port — status mirror window", () => {
  it("writes a small status every 500 ms at most, a large one less often (about 100 KiB/s into etcd)", () => {
    assert.equal(mirrorWindowMs(500, 2_000), 500, "a 5-node status");
    assert.equal(mirrorWindowMs(500, 50 * 1024), 500);
    assert.equal(mirrorWindowMs(500, 200 * 1024), 2000, "a 1,000-node status");
    assert.equal(mirrorWindowMs(100, 0), 100, "the configured throttle is the floor");
  });
});

describe("unit: kube port — what reaches plaintext", () => {
  const jwt = "eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJpc3MiOiJrdWJlcm5ldGVzIiwic3ViIjoic3lzdGVtOnNhIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";

  it("redacts tokens, bearer headers, key material and long base64 from Kubernetes and plugin text, keeping the rest", () => {
    assert.equal(redactSecrets(`oidc: id_token=${jwt} expired`), "oidc: id_token=[redacted token] expired");
    assert.equal(redactSecrets(`token ${jwt} rejected`), "token [redacted token] rejected");
    assert.equal(redactSecrets("Authorization: Bearer abcdefghijklmnop"), "Authorization: Bearer [redacted]");
    assert.equal(redactSecrets('{"password": "hunter2hunter2"}'), '{"password": "[redacted]"}');
    assert.equal(redactSecrets("-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----"), "[redacted PEM]");
    assert.equal(redactSecrets(`data ${"QUJD".repeat(40)} end`), "data [redacted] end");
    const plain = 'jobs.batch "talos-gate-cluster-prod-ceph" is forbidden: User "system:serviceaccount:ci:deployer" cannot create resource "jobs" in API group "batch" in the namespace "checks"';
    assert.equal(redactSecrets(plain), plain);
  });

  it("a failure text from pod logs is redacted and cut before it reaches status, ConfigMap, Events and progress", () => {
    const text = failureText(failedJob(), [pod([{ exitCode: 1, message: `curl -H 'Authorization: Bearer ${jwt}' failed\n${"log line\n".repeat(300)}` }])]);
    assert.doesNotMatch(text, /eyJ/);
    assert.match(text, /^curl -H 'Authorization: Bearer \[redacted token\]' failed/);
    assert.equal(text.length, 1024 + 3);
  });
});

describe("unit: kube port — the ports' error contract (issue 21)", () => {
  it("a KubeError says its kind and whether retrying may help, from the API server's status", () => {
    const seen = [undefined, 401, 403, 404, 409, 410, 422, 429, 503].map((s) => {
      const e = new KubeError("m", s);
      return [s ?? "none", portErrorKind(e), e.retryable];
    });
    assert.deepEqual(seen, [
      ["none", "unavailable", false], [401, "forbidden", false], [403, "forbidden", false], [404, "not-found", false],
      [409, "conflict", false], [410, "not-found", false], [422, "refused", false], [429, "unavailable", true], [503, "unavailable", true],
    ]);
    assert.equal(portErrorKind(new Error("plain")), undefined, "only the ports' errors have a kind");
  });
});

describe("unit: kube port — could another node take the pods (issue 25, placement.ts)", () => {
  const node = (name: string, o: { ready?: boolean; cordoned?: boolean; taints?: k8s.V1Taint[] } = {}): k8s.V1Node => ({
    metadata: { name, labels: { "kubernetes.io/hostname": name } },
    spec: { unschedulable: o.cordoned ?? false, taints: o.taints ?? [] },
    status: { conditions: [{ type: "Ready", status: o.ready === false ? "False" : "True" }] },
  });
  const cpTaint: k8s.V1Taint = { key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" };
  const app = (name: string, spec: k8s.V1PodSpec = { containers: [] }, labels = { app: "web" }): k8s.V1Pod => ({
    metadata: { name, namespace: "shop", labels }, spec,
  });

  it("another Ready, uncordoned node whose NoSchedule/NoExecute taints the pod tolerates could take it; nothing else", () => {
    const p = app("web-1");
    assert.equal(couldTake(node("w-2"), p), true);
    assert.equal(couldTake(node("w-2", { ready: false }), p), false, "not Ready");
    assert.equal(couldTake(node("w-2", { cordoned: true }), p), false, "cordoned");
    assert.equal(couldTake(node("cp-1", { taints: [cpTaint] }), p), false, "a control plane's taint the pod does not tolerate");
    assert.equal(couldTake(node("w-2", { taints: [{ key: "gpu", effect: "PreferNoSchedule" }] }), p), true, "a soft taint does not keep it off");
    assert.equal(couldTake(node("w-2", { taints: [{ key: "dedicated", value: "db", effect: "NoExecute" }] }), p), false);
    const tolerant = app("web-2", { containers: [], tolerations: [{ key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" }] });
    assert.equal(couldTake(node("cp-1", { taints: [cpTaint] }), tolerant), true);
    assert.equal(couldTake(node("cp-1", { taints: [cpTaint] }), app("any", { containers: [], tolerations: [{ operator: "Exists" }] })), true);
    // Deliberately not considered: a pod pinned to its node keeps its budget's protection (the drain runs, and blocks).
    assert.equal(couldTake(node("w-2"), app("pinned", { containers: [], nodeSelector: { "kubernetes.io/hostname": "w-1" } })), true);
  });

  it("a Node trimmed for the run's Node watch gives the same answer as the whole Node", () => {
    const whole = (o: { ready?: boolean; cordoned?: boolean; taints?: k8s.V1Taint[] }): k8s.V1Node => {
      const n = node("w-2", o);
      return { ...n, status: { ...n.status, conditions: [...n.status!.conditions!, { type: "MemoryPressure", status: "False" }], images: [{ names: ["x"], sizeBytes: 1 }] } };
    };
    const nodes = [
      whole({}), whole({ ready: false }), whole({ cordoned: true }), whole({ taints: [cpTaint] }),
      whole({ taints: [{ key: "gpu", effect: "PreferNoSchedule" }] }), whole({ taints: [{ key: "dedicated", value: "db", effect: "NoExecute", timeAdded: new Date() }] }),
      whole({ taints: [{ key: "dedicated", value: "db", effect: "NoSchedule" }, { key: "gpu", effect: "PreferNoSchedule" }] }),
    ];
    const pods = [
      app("plain"), app("cp", { containers: [], tolerations: [{ key: cpTaint.key, operator: "Exists", effect: "NoSchedule" }] }),
      app("db", { containers: [], tolerations: [{ key: "dedicated", value: "db" }] }), app("any", { containers: [], tolerations: [{ operator: "Exists" }] }),
    ];
    for (const n of nodes) {
      for (const p of pods) assert.equal(couldTake(trimNode(n), p), couldTake(n, p), `${JSON.stringify(n.spec)} ${p.metadata?.name}`);
    }
    assert.deepEqual(trimNode(nodes[6]).spec?.taints, [{ key: "dedicated", value: "db", effect: "NoSchedule" }], "only the taints that keep pods off");
  });

  it("tolerations match as Kubernetes' ToleratesTaint: key, Equal value or Exists, effect", () => {
    const taint: k8s.V1Taint = { key: "dedicated", value: "db", effect: "NoSchedule" };
    assert.equal(tolerates({ key: "dedicated", operator: "Equal", value: "db", effect: "NoSchedule" }, taint), true);
    assert.equal(tolerates({ key: "dedicated", value: "db" }, taint), true, "Equal is the default operator; no effect = every effect");
    assert.equal(tolerates({ key: "dedicated", value: "web" }, taint), false);
    assert.equal(tolerates({ key: "dedicated", operator: "Exists", effect: "NoExecute" }, taint), false);
    assert.equal(tolerates({ key: "other", operator: "Exists" }, taint), false);
    assert.equal(tolerates({ value: "db" }, taint), false, "an empty key needs Exists");
  });

  it("a single node, or a worker beside tainted control planes: every pod is stranded; one usable node is enough for all", () => {
    const pods = [app("web-1"), app("web-2")];
    assert.deepEqual(podsWithNowhereToGo("cp-1", [node("cp-1")], pods).map((p) => p.metadata?.name), ["web-1", "web-2"]);
    assert.deepEqual(podsWithNowhereToGo("w-1", [node("cp-1", { taints: [cpTaint] }), node("w-1")], pods).length, 2);
    assert.deepEqual(podsWithNowhereToGo("w-1", [node("cp-1", { taints: [cpTaint] }), node("w-1"), node("w-2")], pods), []);
    assert.deepEqual(podsWithNowhereToGo("w-1", [node("w-1"), node("w-2", { cordoned: true })], pods).length, 2, "the other one is being upgraded");
  });

  it("a budget is violated when more of its pods go down than it allows to be disrupted now", () => {
    const pdb = (name: string, allowed: number, app_: string): k8s.V1PodDisruptionBudget => ({
      metadata: { name, namespace: "shop" }, spec: { selector: { matchLabels: { app: app_ } } }, status: { disruptionsAllowed: allowed } as k8s.V1PodDisruptionBudgetStatus,
    });
    const pods = [app("web-1"), app("web-2"), app("db-0", { containers: [] }, { app: "db" })];
    assert.deepEqual(violatedBudgets(pods, [pdb("web", 1, "web"), pdb("db", 1, "db"), pdb("cache", 0, "cache")]), ["shop/web"]);
    assert.deepEqual(violatedBudgets(pods, [pdb("web", 2, "web")]), []);
    assert.deepEqual(casualtiesOf(pods, [pdb("db", 0, "db")]), { pods: ["shop/db-0", "shop/web-1", "shop/web-2"], pdbs: ["shop/db"] });
  });
});
