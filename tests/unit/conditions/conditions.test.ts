import assert from "node:assert/strict";
import {
  compileCondition, ConditionSandbox, evaluateCondition, selectorString, type CompiledCondition, type KubeObject,
} from "../../../provider/conditions";

const ceph = (health?: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "ceph.rook.io/v1", kind: "CephCluster",
  metadata: { name: "rook-ceph", namespace: "rook-ceph" },
  status: health === undefined ? { phase: "Ready" } : { ceph: { health }, ...extra },
});
const cephTarget = { apiVersion: "ceph.rook.io/v1", kind: "CephCluster", namespace: "rook-ceph", name: "rook-ceph" };
const volumes = { apiVersion: "longhorn.io/v1beta2", kind: "Volume", namespace: "longhorn-system", labelSelector: { matchLabels: { app: "db" } } };
const volume = (name: string, status: Record<string, unknown>): KubeObject => ({
  apiVersion: "longhorn.io/v1beta2", kind: "Volume", metadata: { name, namespace: "longhorn-system", labels: { app: "db" } }, status,
});

function compiled(input: Record<string, unknown>): CompiledCondition {
  const r = compileCondition(input);
  assert.deepEqual(r.failures, [], "compiles");
  return r.compiled!;
}
const failuresOf = (input: unknown, prefix?: string) => compileCondition(input, prefix).failures;

describe("conditions: check time", () => {
  it("accepts the issue's two examples", () => {
    assert.equal(compiled({ target: cephTarget, expression: "object.status.ceph.health == 'HEALTH_OK'" }).variable, "object");
    assert.equal(compiled({ target: volumes, expression: "objects.all(v, v.status.robustness == 'healthy')" }).variable, "objects");
  });

  it("names the field of a syntax error, with the column", () => {
    const f = failuresOf({ target: cephTarget, expression: "object.status.ceph.health ==" }, "conditions[0]");
    assert.equal(f.length, 1);
    assert.equal(f[0].field, "conditions[0].expression");
    assert.match(f[0].message, /^is not a valid CEL expression: .* \(at column \d+\)$/);
  });

  it("reports an unknown variable, and the wrong one of object/objects with what to use", () => {
    assert.match(failuresOf({ target: cephTarget, expression: "obj.status.ready" })[0].message, /does not type-check: Unknown variable: obj/);
    const one = failuresOf({ target: cephTarget, expression: "objects.all(o, o.x)" });
    assert.equal(one[0].field, "expression");
    assert.match(one[0].message, /uses `objects`, but this condition names one object \(target.name\), so its variable is `object`/);
    const many = failuresOf({ target: volumes, expression: "object.status.x == 1" });
    assert.match(many[0].message, /uses `object`, but this condition selects objects by target.labelSelector, so its variable is `objects`/);
  });

  it("reports type errors the checker can see through dyn, and unknown functions", () => {
    assert.match(failuresOf({ target: volumes, expression: "size(objects) + 'x' == 'y'" })[0].message, /no such overload: int \+ string/);
    assert.match(failuresOf({ target: cephTarget, expression: "healthy(object)" })[0].message, /no matching overload for 'healthy/);
    assert.match(failuresOf({ target: cephTarget, expression: "object.a == 1 ? 'x' : 2" })[0].message, /Ternary branches/);
  });

  it("requires a bool expression and a string message when their types are known", () => {
    const f = failuresOf({ target: volumes, expression: "size(objects)", message: "size(objects)" });
    assert.deepEqual(f.map((x) => x.field), ["expression", "message"]);
    assert.match(f[0].message, /must evaluate to a bool .* its type is int/);
    assert.match(f[1].message, /must evaluate to a string .* its type is int/);
  });

  it("validates the target: exactly one of name or labelSelector, apiVersion, kind, selector syntax, unknown keys", () => {
    const base = { apiVersion: "v1", kind: "ConfigMap" };
    assert.match(failuresOf({ target: base, expression: "true" })[0].message, /needs exactly one of name .* or labelSelector/);
    assert.equal(failuresOf({ target: base, expression: "true" })[0].field, "target");
    assert.match(failuresOf({ target: { ...base, name: "a", labelSelector: {} }, expression: "true" })[0].message, /both name and labelSelector/);
    const f = failuresOf({
      target: {
        apiVersion: "Ceph/V1", kind: "cephCluster",
        labelSelector: { matchLabels: { "bad key!": "v" }, matchExpressions: [{ key: "a", operator: "Like" }, { key: "b", operator: "In" }, { key: "c", operator: "Exists", values: ["x"] }] },
      },
      expression: "true", color: "blue",
    }, "conditions[1]");
    const fields = f.map((x) => x.field).sort();
    assert.deepEqual(fields, [
      "conditions[1]",
      "conditions[1].target.apiVersion",
      "conditions[1].target.kind",
      "conditions[1].target.labelSelector.matchExpressions[0].operator",
      "conditions[1].target.labelSelector.matchExpressions[1].values",
      "conditions[1].target.labelSelector.matchExpressions[2].values",
      'conditions[1].target.labelSelector.matchLabels["bad key!"]',
    ]);
    assert.match(f.find((x) => x.field === "conditions[1]")!.message, /unknown field "color"; known fields: target, expression, message, allowEmpty/);
  });

  it("requires target and expression, and treats null as unset", () => {
    const f = failuresOf({ target: null, expression: "  ", message: null });
    assert.deepEqual(f.map((x) => x.field).sort(), ["expression", "target"]);
    assert.match(f.find((x) => x.field === "target")!.message, /is required/);
  });

  it("allowEmpty belongs to selector targets only", () => {
    assert.equal(failuresOf({ target: cephTarget, expression: "true", allowEmpty: true })[0].field, "allowEmpty");
  });

  it("renders a selector in the API server's query syntax", () => {
    assert.equal(selectorString({
      matchLabels: { b: "2", a: "1" },
      matchExpressions: [
        { key: "tier", operator: "In", values: ["web", "db"] }, { key: "env", operator: "NotIn", values: ["dev"] },
        { key: "x", operator: "Exists" }, { key: "legacy", operator: "DoesNotExist" },
      ],
    }), "a=1,b=2,tier in (db,web),env notin (dev),x,!legacy");
    assert.equal(selectorString({}), "");
  });
});

describe("conditions: evaluation", () => {
  const health = compiled({
    target: cephTarget, expression: "object.status.ceph.health == 'HEALTH_OK'",
    message: "'ceph is ' + object.status.ceph.health",
  });

  it("opens on true and holds on false with the message expression's text", () => {
    assert.deepEqual(evaluateCondition(health, [ceph("HEALTH_OK")]), { state: "passed" });
    assert.deepEqual(evaluateCondition(health, [ceph("HEALTH_WARN")]), { state: "held", cause: "false", reason: "ceph is HEALTH_WARN" });
  });

  it("holds on false with the expression when there is no message", () => {
    const c = compiled({ target: cephTarget, expression: " object.status.ceph.health == 'HEALTH_OK' " });
    assert.deepEqual(evaluateCondition(c, [ceph("HEALTH_ERR")]), {
      state: "held", cause: "false", reason: "expression is false: object.status.ceph.health == 'HEALTH_OK'",
    });
  });

  it("holds on a missing object, naming it", () => {
    assert.deepEqual(evaluateCondition(health, []), {
      state: "held", cause: "object-missing", reason: "ceph.rook.io/v1 CephCluster rook-ceph/rook-ceph not found",
    });
  });

  it("holds on a missing field, naming the field path and the object (never a silent false)", () => {
    assert.deepEqual(evaluateCondition(health, [ceph(undefined)]), {
      state: "held", cause: "field-missing", reason: "field status.ceph absent on ceph.rook.io/v1 CephCluster rook-ceph/rook-ceph",
    });
    const labels = compiled({ target: cephTarget, expression: "object.metadata.labels['a.b/c'] == 'x'" });
    const r = evaluateCondition(labels, [{ metadata: { name: "rook-ceph", namespace: "rook-ceph", labels: {} } }]);
    assert.equal(r.state === "held" && r.reason, "field metadata.labels['a.b/c'] absent on ceph.rook.io/v1 CephCluster rook-ceph/rook-ceph");
  });

  it("over a selection, names the first object that lacks the field", () => {
    const c = compiled({ target: volumes, expression: "objects.all(v, v.status.robustness == 'healthy')" });
    assert.deepEqual(evaluateCondition(c, [volume("pvc-1", { robustness: "healthy" }), volume("pvc-2", {})]), {
      state: "held", cause: "field-missing", reason: "field status.robustness absent on longhorn.io/v1beta2 Volume longhorn-system/pvc-2",
    });
    assert.deepEqual(evaluateCondition(c, [volume("pvc-1", { robustness: "healthy" }), volume("pvc-2", { robustness: "healthy" })]), { state: "passed" });
  });

  it("holds on an empty selection unless allowEmpty", () => {
    const c = compiled({ target: volumes, expression: "objects.all(v, v.status.robustness == 'healthy')" });
    const r = evaluateCondition(c, []);
    assert.equal(r.state === "held" && r.cause, "empty");
    assert.equal(r.state === "held" && r.reason,
      "no longhorn.io/v1beta2 Volume objects matching app=db in namespace longhorn-system; set allowEmpty: true if an empty selection should open the gate");
    const lenient = compiled({ target: volumes, expression: "objects.all(v, v.status.robustness == 'healthy')", allowEmpty: true });
    assert.deepEqual(evaluateCondition(lenient, []), { state: "passed" });
  });

  it("an expression that evaluates to a non-bool is an error naming the value", () => {
    const c = compiled({ target: cephTarget, expression: "object.status.ceph.health" });
    assert.deepEqual(evaluateCondition(c, [ceph("HEALTH_OK")]), {
      state: "held", cause: "error", reason: 'expression returned string "HEALTH_OK", not a bool; fix the expression so it returns true or false',
    });
  });

  it("integral JSON numbers are CEL ints, so counts add and compare", () => {
    const c = compiled({
      target: { apiVersion: "apps/v1", kind: "Deployment", namespace: "db", name: "pg" },
      expression: "object.status.readyReplicas + 0 == object.spec.replicas && object.status.ratio > 0.5",
    });
    assert.deepEqual(evaluateCondition(c, [{ metadata: { name: "pg" }, spec: { replicas: 3 }, status: { readyReplicas: 3, ratio: 0.75 } }]), { state: "passed" });
  });

  it("a failing evaluation holds with the error; a failing message keeps the plain reason and says why", () => {
    const c = compiled({ target: cephTarget, expression: "object.status.ceph.health + 1 == 2" });
    const r = evaluateCondition(c, [ceph("HEALTH_OK")]);
    assert.equal(r.state === "held" && r.cause, "error");
    assert.match(r.state === "held" ? r.reason : "", /^expression failed: no such overload/);
    const m = compiled({ target: cephTarget, expression: "object.status.ceph.health == 'HEALTH_OK'", message: "object.status.detail" });
    const h = evaluateCondition(m, [ceph("HEALTH_WARN")]);
    assert.equal(h.state === "held" && h.reason,
      "expression is false: object.status.ceph.health == 'HEALTH_OK' (message expression failed: No such key: detail)");
  });

  it("re-evaluates the same object instance consistently (conversion cache)", () => {
    const obj = ceph("HEALTH_OK");
    assert.deepEqual(evaluateCondition(health, [obj]), { state: "passed" });
    assert.deepEqual(evaluateCondition(health, [obj]), { state: "passed" });
  });
});

describe("conditions: cost bound", () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => volume(`v${i}`, { robustness: "healthy" }));

  it("refuses at check a nesting of comprehensions deeper than 2, naming the field and the depth", () => {
    const pairs = "objects.all(a, objects.all(b, a.metadata.name == b.metadata.name || a.status.robustness == b.status.robustness))";
    assert.equal(compiled({ target: volumes, expression: pairs }).nesting, 2);
    assert.equal(compiled({ target: volumes, expression: "objects.map(v, v.status).all(s, s.robustness == 'healthy')" }).nesting, 1, "chained, not nested");
    const five = "[" + Array.from({ length: 100 }, (_, i) => i).join(",") + "]";
    const runaway = `${five}.map(a, ${five}.map(b, ${five}.map(c, ${five}.map(d, ${five}.map(e, a + b + c + d + e))))).size() > 0`;
    const f = failuresOf({ target: cephTarget, expression: runaway }, "conditions[1]");
    assert.deepEqual(f.map((x) => x.field), ["conditions[1].expression"]);
    assert.match(f[0].message, /^nests 5 comprehensions \(all\/exists\/exists_one\/map\/filter\) inside one another; at most 2 are allowed/);
    const msgDeep = failuresOf({ target: volumes, expression: "true", message: "objects.map(a, objects.map(b, objects.map(c, 'x'))).size() > 0 ? 'a' : 'b'" });
    assert.deepEqual(msgDeep.map((x) => x.field), ["message"]);
  });

  it("holds, naming the count and the cap, on a selection larger than the nesting allows", () => {
    const pairs = compiled({ target: volumes, expression: "objects.all(a, objects.exists(b, a == b))" });
    const v = evaluateCondition(pairs, many(1001));
    assert.equal(v.state, "held");
    assert.equal((v as { cause: string }).cause, "cost");
    assert.match((v as { reason: string }).reason, /^the selection holds 1001 objects, more than the 1000 a condition whose comprehensions nest 2 deep may evaluate; narrow target\.labelSelector/);
    assert.deepEqual(evaluateCondition(pairs, many(50)), { state: "passed" });
  });

  it("a runaway evaluation runs in a worker: held at its budget, saying so, while this thread's timers keep firing", async () => {
    // A backtracking regular expression: no static bound sees it; 40 characters would take hours.
    const redos = compiled({ target: { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "x" }, expression: "object.data.x.matches('^(a+)+$')" });
    const sandbox = new ConditionSandbox(redos, 300);
    try {
      assert.deepEqual(await sandbox.evaluate([{ metadata: { name: "x" }, data: { x: "aaaa" } }]), { state: "passed" });
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      const v = await sandbox.evaluate([{ metadata: { name: "x" }, data: { x: `${"a".repeat(40)}b` } }]);
      clearInterval(ticker);
      assert.deepEqual(v, { state: "held", cause: "cost", reason: "expression did not finish within 300 ms over 1 object and was stopped; simplify it (fewer nested comprehensions, no backtracking regular expressions) or narrow the target" });
      assert.ok(ticks > 0, `this thread's timers fired ${ticks} times during the evaluation`);
      // The stopped thread is replaced for the next event.
      assert.deepEqual(await sandbox.evaluate([{ metadata: { name: "x" }, data: { x: "aaa" } }]), { state: "passed" });
    } finally {
      sandbox.stop();
    }
  });
});
