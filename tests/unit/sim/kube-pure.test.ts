// Pure pieces of the kubelet emulator: termination-message tail, $(VAR) expansion, image references and which images
// cannot be pulled; a Node's reads and writes (its kubelet's report, the node lifecycle controller's mark and taint),
// on a recording Rest and informer; the informer's wait (Reflector.when) on a scripted API server.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { writePrivateFile } from "../../../sim/files";
import { expand } from "../../../sim/kube/containerenv";
import { normalizeImage, pullBackoffMs, pullFailure } from "../../../sim/kube/images";
import { LocalProcess } from "../../../sim/kube/process";
import { logTail, terminationMessage } from "../../../sim/kube/termination";
import { NodeLister, NodeSim, nodeObject, UNREACHABLE_TAINT } from "../../../sim/kube/nodes";
import { Reflector } from "../../../sim/kube/reflector";
import { KubeError, Rest } from "../../../sim/kube/rest";
import type { Node } from "../../../sim/kube/types";

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

describe("sim: a Node's reads and writes, as its kubelet and the node lifecycle controller make them", () => {
  /**
   * A recording API server for one Node: status patches land at once; a Node patch that names a resourceVersion other
   * than the Node's is refused with a conflict, like the API server's precondition. The lister is the sim's informer,
   * which shows every write only when `stall` is off.
   */
  function nodeFixture() {
    let node = nodeObject({ name: "w-1", role: "worker", talosVersion: "v1.13.0", address: "10.5.0.2" }, 0, false);
    node.metadata.resourceVersion = "41";
    node.spec = { ...(node.spec ?? {}), taints: [{ key: UNREACHABLE_TAINT, effect: "NoSchedule" }] };
    const calls: { verb: string; path: string; query?: unknown; body?: any }[] = [];
    const bump = () => { node.metadata.resourceVersion = String(Number(node.metadata.resourceVersion) + 1); };
    const rest = {
      get: async (path: string, query?: unknown) => {
        calls.push({ verb: "GET", path, query });
        return structuredClone(node);
      },
      mergePatch: async (path: string, body: any) => {
        calls.push({ verb: "PATCH", path, body });
        const rv = body.metadata?.resourceVersion;
        if (rv !== undefined && rv !== node.metadata.resourceVersion) throw new KubeError(409, "Conflict", "the object has been modified");
        // a JSON merge patch: nodeInfo (a map) merges, conditions (a list) is replaced
        if (path.endsWith("/status")) node.status = { ...node.status, ...body.status, nodeInfo: { ...node.status.nodeInfo, ...body.status.nodeInfo } };
        else node.spec = { ...node.spec, ...body.spec, ...(body.spec.taints === null ? { taints: undefined } : {}) };
        bump();
        if (!fixture.stall) shown = structuredClone(node);
        for (const w of [...waiters]) w();
        return structuredClone(node);
      },
      put: async (path: string, body: any) => {
        calls.push({ verb: "PUT", path, body });
        node.spec = body.spec;
        bump();
        return structuredClone(node);
      },
    } as unknown as Rest;
    let shown = structuredClone(node);
    const waiters = new Set<() => void>();
    const lister: NodeLister = {
      get: () => structuredClone(shown),
      when: (_ns, _name, pred, timeoutMs) => new Promise((resolve) => {
        const check = () => {
          if (!pred(shown)) return;
          waiters.delete(check);
          resolve(structuredClone(shown));
        };
        waiters.add(check);
        check();
        setTimeout(() => { waiters.delete(check); resolve(undefined); }, Math.min(timeoutMs, 50));
      }),
    };
    const fixture = {
      calls, rest, lister, stall: false,
      node: () => node,
      /** Someone else writes the Node (the informer shows it unless stalled). */
      writeBehind: (spec: object) => { node.spec = { ...node.spec, ...spec }; bump(); if (!fixture.stall) shown = structuredClone(node); },
      show: () => { shown = structuredClone(node); for (const w of [...waiters]) w(); },
      /** The informer shows `n` (an older Node, say). */
      showAs: (n: Node) => { shown = structuredClone(n); },
    };
    return fixture;
  }
  const taintKeys = (n: Node) => (n.spec?.taints ?? []).map((t: { key: string }) => t.key);

  it("the kubelet's report reads its Node from its informer and patches its status without a precondition (v1.36.3 tryUpdateNodeStatus)", async () => {
    const f = nodeFixture();
    const nodes = new NodeSim(f.rest, f.lister);
    let reportedAfter = -1;
    await nodes.up("w-1", { talosVersion: "v1.13.2", bootId: "boot-2", reported: () => { reportedAfter = f.calls.length; } });
    assert.deepEqual([f.calls[0].verb, f.calls[0].path], ["PATCH", "/api/v1/nodes/w-1/status"], "no read before the report");
    assert.equal(f.calls[0].body.metadata, undefined, "no resourceVersion precondition in the kubelet's patch");
    assert.equal(f.calls[0].body.status.nodeInfo.bootID, "boot-2");
    assert.equal(reportedAfter, 1, "reported right after the status patch, before the taint is lifted");
    // The node lifecycle controller lifts the unreachable taint: read from the API server's cache, patched with its
    // resourceVersion (v1.36.3 RemoveTaintOffNode + PatchNodeTaints).
    assert.deepEqual(f.calls.slice(1).map((c) => [c.verb, c.path, c.query]), [
      ["GET", "/api/v1/nodes/w-1", { resourceVersion: "0" }],
      ["PATCH", "/api/v1/nodes/w-1", undefined],
    ]);
    assert.equal(f.calls[2].body.metadata.resourceVersion, "42");
    assert.deepEqual(taintKeys(f.node()), [], "the taint is gone");

    // A Ready Node without readiness taints: the controller decides on its informer's Node and sends nothing.
    f.calls.length = 0;
    await nodes.up("w-1", { bootId: "boot-2" });
    assert.deepEqual(f.calls.map((c) => c.verb), ["PATCH"]);
  });

  it("the node lifecycle side marks the Node from its informer with a precondition, and taints it once its informer shows the mark", async () => {
    const f = nodeFixture();
    f.node().spec.taints = undefined;
    f.show();
    const nodes = new NodeSim(f.rest, f.lister);
    f.stall = true; // the informer does not show the status write yet: no taint is decided on the old Node
    const down = nodes.down("w-1");
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(f.calls.map((c) => [c.verb, c.path]), [["PATCH", "/api/v1/nodes/w-1/status"]], "no read, and no taint before the informer shows Unknown");
    assert.deepEqual(f.calls[0].body.metadata, { resourceVersion: "41" }, "the controller's status write keeps its precondition");
    f.show();
    await down;
    assert.deepEqual(f.calls.slice(1).map((c) => [c.verb, c.query]), [["GET", { resourceVersion: "0" }], ["PATCH", undefined]]);
    assert.deepEqual(taintKeys(f.node()), [UNREACHABLE_TAINT]);
  });

  it("the taint is decided on the Node just written, not on an older one that shows the same condition", async () => {
    const f = nodeFixture();
    const older = structuredClone(f.node());
    older.metadata.resourceVersion = "40";
    older.spec.taints = undefined; // Ready and untainted, before the taint the API server has now
    f.showAs(older);
    f.stall = true;
    const nodes = new NodeSim(f.rest, f.lister);
    const up = nodes.up("w-1", {});
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(f.calls.map((c) => c.path), ["/api/v1/nodes/w-1/status"], "nothing decided on the older Node");
    f.show();
    await up;
    assert.deepEqual(taintKeys(f.node()), [], "the taint is lifted");
  });

  it("a report sends only the nodeInfo fields it sets: a read behind does not write back an older kubelet version", async () => {
    const f = nodeFixture();
    const nodes = new NodeSim(f.rest, f.lister);
    f.stall = true; // the informer has not shown the restart's report yet
    await nodes.setKubeletVersion("w-1", "v1.36.3");
    f.stall = false;
    await nodes.up("w-1", { bootId: "boot-2" });
    const report = f.calls.filter((c) => c.path.endsWith("/status")).at(-1)!;
    assert.deepEqual(report.body.status.nodeInfo, { bootID: "boot-2" });
    assert.equal(f.node().status.nodeInfo.kubeletVersion, "v1.36.3");
    assert.equal(f.node().status.nodeInfo.osImage, "Talos (v1.13.0)", "the other fields stay");
  });

  it("a write in between refuses the taint patch; the retry reads etcd (v1.36.3 AddOrUpdateTaintOnNode)", async () => {
    const f = nodeFixture();
    const nodes = new NodeSim(f.rest, f.lister);
    // The API server's cache answers with the Node before the provider's uncordon landed.
    const get = f.rest.get.bind(f.rest);
    let first = true;
    (f.rest as any).get = async (path: string, query?: any) => {
      const n = await get(path, query);
      if (first && query?.resourceVersion === "0") {
        first = false;
        f.writeBehind({ unschedulable: undefined });
      }
      return n;
    };
    await nodes.up("w-1", { talosVersion: "v1.13.2", bootId: "boot-2" });
    assert.deepEqual(f.calls.map((c) => [c.verb, c.path, c.query]), [
      ["PATCH", "/api/v1/nodes/w-1/status", undefined],
      ["GET", "/api/v1/nodes/w-1", { resourceVersion: "0" }],
      ["PATCH", "/api/v1/nodes/w-1", undefined],
      ["GET", "/api/v1/nodes/w-1", undefined],
      ["PATCH", "/api/v1/nodes/w-1", undefined],
    ]);
    assert.deepEqual(taintKeys(f.node()), []);
  });

  it("the kubelet's report reads etcd when its first patch failed", async () => {
    const f = nodeFixture();
    const nodes = new NodeSim(f.rest, f.lister);
    const patch = f.rest.mergePatch.bind(f.rest);
    let failed = false;
    (f.rest as any).mergePatch = async (path: string, body: unknown) => {
      if (!failed && path.endsWith("/status")) {
        failed = true;
        f.calls.push({ verb: "PATCH", path, body });
        throw new KubeError(503, "ServiceUnavailable", "the server is currently unable to handle the request");
      }
      return patch(path, body);
    };
    await nodes.setKubeletVersion("w-1", "v1.36.3");
    assert.deepEqual(f.calls.map((c) => [c.verb, c.path, c.query]), [
      ["PATCH", "/api/v1/nodes/w-1/status", undefined],
      ["GET", "/api/v1/nodes/w-1", undefined],
      ["PATCH", "/api/v1/nodes/w-1/status", undefined],
    ]);
    assert.equal(f.node().status.nodeInfo.kubeletVersion, "v1.36.3");
  });
});

describe("sim: an informer's wait for an object (Reflector.when)", () => {
  /** An API server with one Node whose watch the test drives. */
  async function started() {
    let push: (ev: { type: string; object: unknown }) => void = () => undefined;
    let end: (e: Error | null) => void = () => undefined;
    const node = (rv: string, ready: string) => ({ metadata: { name: "w-1", resourceVersion: rv }, status: { conditions: [{ type: "Ready", status: ready }] } });
    const rest = {
      get: async () => ({ metadata: { resourceVersion: "10" }, items: [node("10", "True")] }),
      watch: (_path: string, _query: unknown, onEvent: (ev: { type: string; object: unknown }) => void) => {
        push = onEvent as typeof push;
        return { done: new Promise<Error | null>((r) => { end = r; }), abort: () => end(null) };
      },
    } as unknown as Rest;
    const r = new Reflector<Node>(rest, { path: "/api/v1/nodes", name: "nodes" });
    await r.start();
    return { r, node, push: (ev: { type: string; object: unknown }) => push(ev) };
  }
  const ready = (status: string) => (n: Node) => n.status?.conditions?.[0]?.status === status;

  it("answers at once when the cache holds a match, at the update that matches, and undefined at its bound or at stop", async () => {
    const { r, node, push } = await started();
    try {
      assert.equal((await r.when(undefined, "w-1", ready("True"), 1000))?.metadata.resourceVersion, "10");
      const waiting = r.when(undefined, "w-1", ready("Unknown"), 5000);
      push({ type: "MODIFIED", object: node("11", "True") });
      push({ type: "MODIFIED", object: node("12", "Unknown") });
      push({ type: "MODIFIED", object: node("13", "True") });
      assert.equal((await waiting)?.metadata.resourceVersion, "12", "the first update that matches, not the cache at the end");
      const t0 = Date.now();
      assert.equal(await r.when(undefined, "w-1", ready("False"), 30), undefined);
      assert.ok(Date.now() - t0 >= 25, "waited its bound");
      const atStop = r.when(undefined, "w-2", () => true, 60000);
      await r.stop();
      assert.equal(await atStop, undefined, "stop ends every wait");
    } finally {
      await r.stop();
    }
  });
});
