// Pure pieces of the kubelet emulator: termination-message tail, $(VAR) expansion, image references and which images
// cannot be pulled; the reads and writes of a node's Ready report, on a recording Rest.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { writePrivateFile } from "../../../sim/files";
import { expand } from "../../../sim/kube/containerenv";
import { normalizeImage, pullBackoffMs, pullFailure } from "../../../sim/kube/images";
import { LocalProcess } from "../../../sim/kube/process";
import { logTail, terminationMessage } from "../../../sim/kube/termination";
import { NodeSim, nodeObject, NOT_READY_TAINT, UNREACHABLE_TAINT } from "../../../sim/kube/nodes";
import type { Rest } from "../../../sim/kube/rest";

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

  it("the kubelet's report reads the Node from the API server's cache and patches its status without a precondition; the lifecycle side reads etcd", async () => {
    // kubelet_node_status.go tryUpdateNodeStatus (first try from a cache: the sim asks the API server's, resourceVersion
    // "0") + PatchNodeStatus (no resourceVersion in the patch); the node lifecycle controller's write keeps its precondition.
    const node = nodeObject({ name: "w-1", role: "worker", talosVersion: "v1.13.0", address: "10.5.0.2" }, 0, false);
    node.metadata.resourceVersion = "41";
    node.spec = { ...(node.spec ?? {}), taints: [{ key: UNREACHABLE_TAINT, effect: "NoSchedule" }] };
    const calls: { verb: string; path: string; query?: unknown; body?: any }[] = [];
    const rest = {
      get: async (path: string, query?: unknown) => {
        calls.push({ verb: "GET", path, query });
        return structuredClone(node);
      },
      mergePatch: async (path: string, body: unknown) => {
        calls.push({ verb: "PATCH", path, body });
        return structuredClone(node);
      },
      put: async (path: string, body: any) => {
        calls.push({ verb: "PUT", path, body });
        node.spec = body.spec;
        return structuredClone(node);
      },
    } as unknown as Rest;
    const nodes = new NodeSim(rest);
    let reportedAfter = -1;
    await nodes.up("w-1", { talosVersion: "v1.13.2", bootId: "boot-2", reported: () => { reportedAfter = calls.length; } });
    assert.deepEqual(calls.slice(0, 2).map((c) => [c.verb, c.path, c.query]), [
      ["GET", "/api/v1/nodes/w-1", { resourceVersion: "0" }],
      ["PATCH", "/api/v1/nodes/w-1/status", undefined],
    ]);
    assert.equal(calls[1].body.metadata, undefined, "no resourceVersion precondition in the kubelet's patch");
    assert.equal(calls[1].body.status.nodeInfo.bootID, "boot-2");
    assert.equal(reportedAfter, 2, "reported right after the status patch, before the taint writes");
    assert.ok(calls.slice(2).every((c) => c.verb !== "GET" || c.query === undefined), "the taint writes read from etcd");
    assert.equal(node.spec?.taints, undefined, "both taints gone");

    calls.length = 0;
    await nodes.down("w-1");
    assert.deepEqual([calls[0].verb, calls[0].query, calls[1].verb], ["GET", undefined, "PATCH"]);
    assert.deepEqual(calls[1].body.metadata, { resourceVersion: "41" }, "the lifecycle side keeps its precondition");
    assert.ok(node.spec?.taints?.some((t: { key: string }) => t.key === UNREACHABLE_TAINT));
    assert.ok(!node.spec?.taints?.some((t: { key: string }) => t.key === NOT_READY_TAINT));
  });
});
