// Pure pieces of the kube sim: termination-message tail, $(VAR) expansion, label selectors, taint tolerations.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { expand } from "../../../sim/kube/containerenv";
import { selectorMatches } from "../../../sim/kube/disruption";
import { tolerates } from "../../../sim/kube/scheduler";
import { logTail, terminationMessage } from "../../../sim/kube/termination";

describe("unit: kube sim helpers", () => {
  it("keeps the last 80 lines, then the last 2048 bytes, of the logs (kubelet FallbackToLogsOnError)", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join("");
    const tail = logTail(lines);
    assert.equal(tail.split("\n").filter(Boolean).length, 80);
    assert.ok(tail.startsWith("line 20\n") && tail.endsWith("line 99\n"));
    const long = "x".repeat(5000) + "\nend\n";
    assert.equal(Buffer.byteLength(logTail(long)), 2048);
    assert.ok(logTail(long).endsWith("x\nend\n"));
    assert.equal(logTail("no newline"), "no newline");
  });

  it("builds the termination message per policy", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "term-"));
    const file = path.join(dir, "termination-log");
    fs.writeFileSync(file, "");
    const logs = Buffer.from("boom\n");
    assert.equal(terminationMessage({ policy: "File", messageFile: file, exitCode: 1, logs }), "");
    assert.equal(terminationMessage({ policy: "FallbackToLogsOnError", messageFile: file, exitCode: 1, logs }), "boom\n");
    assert.equal(terminationMessage({ policy: "FallbackToLogsOnError", messageFile: file, exitCode: 0, logs }), "");
    fs.writeFileSync(file, "y".repeat(5000));
    assert.equal(terminationMessage({ policy: "FallbackToLogsOnError", messageFile: file, exitCode: 1, logs }).length, 4096);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("expands $(VAR) like Kubernetes", () => {
    const env = { A: "1", B: "two" };
    assert.equal(expand("$(A)-$(B)", env), "1-two");
    assert.equal(expand("$(MISSING)", env), "$(MISSING)");
    assert.equal(expand("$$(A) $$ $x", env), "$(A) $ $x");
    assert.equal(expand("echo $$$$", env), "echo $$");
    assert.equal(expand("$(A", env), "$(A");
  });

  it("matches label selectors and tolerations", () => {
    assert.equal(selectorMatches({ matchLabels: { app: "a" } }, { app: "a", x: "y" }), true);
    assert.equal(selectorMatches({ matchExpressions: [{ key: "tier", operator: "In", values: ["db"] }] }, { tier: "web" }), false);
    assert.equal(selectorMatches({ matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] }, {}), true);
    assert.equal(selectorMatches(undefined, { app: "a" }), false);
    assert.equal(selectorMatches({}, { app: "a" }), true);
    const taint = { key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" };
    assert.equal(tolerates([{ operator: "Exists" }], taint), true);
    assert.equal(tolerates([{ key: taint.key, operator: "Exists", effect: "NoSchedule" }], taint), true);
    assert.equal(tolerates([{ key: taint.key, operator: "Exists", effect: "NoExecute" }], taint), false);
    assert.equal(tolerates(undefined, taint), false);
  });
});
