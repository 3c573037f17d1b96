// Property-based tests: the parser only ever returns a validation error (never throws) on random and mutated
// templates, and compose(parse(x)) is deterministic and idempotent.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { stringify } from "yaml";
import { composeHealthcheck, parseTemplate, TemplateValidationError, type ParseResult } from "../../../provider/template";
import { EXAMPLES, fileOptions } from "./helpers";

const opts = fileOptions(EXAMPLES);
const examples = ["ceph-gated.yaml", "file-healthcheck.yaml", "inline-healthcheck.yaml"].map((f) => fs.readFileSync(path.join(EXAMPLES, f), "utf8"));

function neverThrows(input: string | Uint8Array): ParseResult {
  let r: ParseResult;
  try {
    r = parseTemplate(input, opts);
  } catch (err) {
    throw new Error(`parseTemplate threw ${(err as Error).stack}`);
  }
  if (!r.ok) {
    assert.ok(r.error instanceof TemplateValidationError);
    assert.ok(r.error.message.length > 0);
    assert.ok(r.error.errors.length > 0);
    for (const e of r.error.errors) assert.equal(typeof e.message, "string");
  }
  return r;
}

const mutation = fc.oneof(
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(), len: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ op: fc.constant("insert" as const), at: fc.nat(), text: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(": ", "- ", "\n  ", "&a ", "*a", "<<: *a\n", "{", "[", "'", '"', "!!int ", "~", "\t", "---\n", "kind: Workers\n", "\n  interval: 3\n", "\n  extra: 1\n")) }),
  fc.record({ op: fc.constant("swapLines" as const), a: fc.nat(), b: fc.nat() }),
  fc.record({ op: fc.constant("dupLine" as const), a: fc.nat() }),
  fc.record({ op: fc.constant("replaceValue" as const), a: fc.nat(), value: fc.constantFrom("~", "[]", "{}", "42", "true", "1s", "x: y", "- a", '"str"', "0") }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(text: string, m: Mutation): string {
  const lines = text.split("\n");
  switch (m.op) {
    case "delete": {
      const at = m.at % (text.length + 1);
      return text.slice(0, at) + text.slice(at + m.len);
    }
    case "insert": {
      const at = m.at % (text.length + 1);
      return text.slice(0, at) + m.text + text.slice(at);
    }
    case "swapLines": {
      const a = m.a % lines.length, b = m.b % lines.length;
      [lines[a], lines[b]] = [lines[b]!, lines[a]!];
      return lines.join("\n");
    }
    case "dupLine": {
      const a = m.a % lines.length;
      lines.splice(a, 0, lines[a]!);
      return lines.join("\n");
    }
    case "replaceValue": {
      const a = m.a % lines.length;
      lines[a] = lines[a]!.replace(/:(\s.*)?$/, `: ${m.value}`);
      return lines.join("\n");
    }
  }
}

describe("template/properties", () => {
  it("random text never throws, only returns a validation error", () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (s) => void neverThrows(s)), { numRuns: 300 });
  });

  it("random bytes never throw", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (b) => void neverThrows(b)), { numRuns: 300 });
  });

  it("mutated Omni templates never throw, only return a validation error", () => {
    fc.assert(
      fc.property(fc.constantFrom(...examples), fc.array(mutation, { minLength: 1, maxLength: 4 }), (text, ms) => {
        void neverThrows(ms.reduce(mutate, text));
      }),
      { numRuns: 400 },
    );
  });

  const dnsName = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);
  const healthcheck = fc.record({
    name: dnsName,
    interval: fc.option(fc.constantFrom("5s", "30s", "1m30s", "2h", "0", "-5s", "1.5m"), { nil: undefined }),
    namespace: fc.option(dnsName, { nil: undefined }),
    containers: fc.array(
      fc.record({ name: dnsName, image: fc.constantFrom("busybox", "bitnami/kubectl", "quay.io/ceph/ceph:v18"), terminationMessagePolicy: fc.option(fc.constantFrom("File", "FallbackToLogsOnError"), { nil: undefined }) }),
      { minLength: 1, maxLength: 3 },
    ),
    labels: fc.dictionary(dnsName, fc.string({ maxLength: 8 }), { maxKeys: 3 }),
    form: fc.constantFrom("string", "mapping"),
  });

  type GenHealthcheck = typeof healthcheck extends fc.Arbitrary<infer T> ? T : never;

  function render(cluster: string, hcs: GenHealthcheck[]): string {
    const entries = hcs.map((h, i) => {
      const job: Record<string, unknown> = {
        apiVersion: "batch/v1", kind: "Job",
        ...(h.namespace ? { metadata: { namespace: h.namespace } } : {}),
        spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", containers: h.containers.map((c) => JSON.parse(JSON.stringify(c))) } } },
      };
      const entry: Record<string, unknown> = { name: `${h.name}-${i}`, labels: h.labels, job: h.form === "string" ? stringify(job) : job };
      if (h.interval !== undefined) entry.interval = h.interval;
      return entry;
    });
    return stringify({ kind: "Cluster", name: cluster, kubernetes: { version: "v1.33.0", healthchecks: entries }, talos: { version: "v1.10.0" } }) +
      "---\n" + stringify({ kind: "ControlPlane", machines: ["11111111-2222-3333-4444-555555555555"] });
  }

  it("compose(parse(x)) is deterministic and idempotent on generated valid templates", () => {
    fc.assert(
      fc.property(dnsName, fc.array(healthcheck, { minLength: 1, maxLength: 3 }), (cluster, hcs) => {
        const text = render(cluster, hcs);
        const a = parseTemplate(text);
        const b = parseTemplate(text);
        assert.ok(a.ok, a.ok ? "" : a.error.message);
        assert.deepEqual(a, b);
        for (const hc of a.template.healthchecks) {
          const c1 = composeHealthcheck(hc, cluster);
          assert.deepEqual(composeHealthcheck(hc, cluster), c1);
          // feeding the composed Job back as the manifest changes nothing but the hash of the new text
          const again = composeHealthcheck({ ...hc, manifest: stringify(c1.job) }, cluster);
          const strip = (j: Record<string, any>) => { // eslint-disable-line @typescript-eslint/no-explicit-any
            const copy = structuredClone(j);
            delete copy.metadata.annotations["talos-gate.dev/config-hash"];
            return copy;
          };
          assert.deepEqual(strip(again.job), strip(c1.job));
          assert.equal(again.jobName, c1.jobName);
          assert.equal(again.intervalMs, c1.intervalMs);
          assert.ok(c1.intervalMs >= 5000);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("parse(x) is stable on the documentation examples (twice the same model)", () => {
    for (const text of examples) assert.deepEqual(parseTemplate(text, opts), parseTemplate(text, opts));
  });
});
