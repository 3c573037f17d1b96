// Pure pieces of the kubelet emulator: termination-message tail, $(VAR) expansion, image references and which images
// cannot be pulled.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { writePrivateFile } from "../../../sim/files";
import { expand } from "../../../sim/kube/containerenv";
import { normalizeImage, pullBackoffMs, pullFailure } from "../../../sim/kube/images";
import { LocalProcess } from "../../../sim/kube/process";
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

  it("a container whose log file cannot be opened (its pod's directory removed) still runs and exits; the sim goes on", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gone-"));
    fs.rmSync(dir, { recursive: true });
    const proc = new LocalProcess(["sh", "-c", "echo hi; exit 3"], { env: { PATH: process.env.PATH ?? "" }, cwd: os.tmpdir(), logFile: path.join(dir, "check.log") });
    assert.equal((await proc.exited).exitCode, 3);
    await new Promise((r) => setTimeout(r, 50)); // the stream's failed open has been reported by now
  });

  it("expands $(VAR) like Kubernetes", () => {
    const env = { A: "1", B: "two" };
    assert.equal(expand("$(A)-$(B)", env), "1-two");
    assert.equal(expand("$(MISSING)", env), "$(MISSING)");
    assert.equal(expand("$$(A) $$ $x", env), "$(A) $ $x");
    assert.equal(expand("echo $$$$", env), "echo $$");
    assert.equal(expand("$(A", env), "$(A");
  });

  it("normalizes image references like containerd and fails pulls only from .invalid registries or listed images", () => {
    assert.equal(normalizeImage("busybox"), "docker.io/library/busybox:latest");
    assert.equal(normalizeImage("bitnami/kubectl:1.34"), "docker.io/bitnami/kubectl:1.34");
    assert.equal(normalizeImage("localhost:5000/x"), "localhost:5000/x:latest");
    assert.equal(pullFailure("bitnami/kubectl"), undefined);
    assert.equal(pullFailure("unpullable.invalid/check:1"),
      'rpc error: code = Unknown desc = failed to pull and unpack image "unpullable.invalid/check:1": failed to resolve reference ' +
      '"unpullable.invalid/check:1": failed to do request: Head "https://unpullable.invalid/v2/check/manifests/1": dial tcp: lookup unpullable.invalid: no such host');
    assert.equal(pullFailure("quay.io/ceph/ceph:v18", ["quay.io/ceph/ceph"]),
      'rpc error: code = Unknown desc = failed to pull and unpack image "quay.io/ceph/ceph:v18": failed to resolve reference "quay.io/ceph/ceph:v18": quay.io/ceph/ceph:v18: not found');
    assert.match(pullFailure("busybox", ["docker.io/library/busybox:latest"]) ?? "", /busybox:latest/);
    assert.equal(pullFailure("busybox:1.36", ["busybox:1.37"]), undefined);
    assert.deepEqual([0, 1, 2, 10].map((a) => pullBackoffMs(a, 10000)), [10000, 20000, 40000, 300000]);
  });
});

describe("sim: files holding credentials", () => {
  it("are owner-only also when they existed before with a wider mode", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-private-"));
    try {
      const file = path.join(dir, "kubeconfig");
      fs.writeFileSync(file, "old", { mode: 0o644 });
      fs.chmodSync(file, 0o644);
      writePrivateFile(file, "new");
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      assert.equal(fs.readFileSync(file, "utf8"), "new");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
