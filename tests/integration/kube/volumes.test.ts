// Storage-aware reboot: waiting for a node's VolumeAttachments to detach, against the real kube-apiserver (the test
// writes the VolumeAttachments and their status itself, as the attach/detach controller and a CSI attacher would).
import assert from "node:assert/strict";
import * as net from "node:net";
import * as k8s from "@kubernetes/client-node";
import { KubeClients } from "../../../provider/kube/client";
import { VolumeAttachmentCache, waitForVolumeDetach } from "../../../provider/kube/volumes";
import { onFileEnd } from "../../support/fixtures";
import { freshNamespace, kubeConfigOf, serviceAccountKubeconfig, testControlPlane } from "../../support/kube";
import { delay } from "./helpers";

/** Resolves with the promise's value, or "pending" if it has not settled within `ms`. */
async function settledWithin<T>(p: Promise<T>, ms: number): Promise<T | "pending"> {
  return Promise.race([p, delay(ms).then(() => "pending" as const)]);
}

let counter = 0;

describe("integration: kube port — volume detach before reboot", function () {
  this.timeout(120000);

  async function setup() {
    const cp = await testControlPlane();
    const c = new KubeClients(cp.kubeconfig);
    onFileEnd(async () => c.close());
    const storage = kubeConfigOf(cp).makeApiClient(k8s.StorageV1Api);
    const node = `va-node-${process.pid}-${counter++}`;
    const attach = async (name: string, pv: string, onNode = node, attached = true, finalizers?: string[]) => {
      await storage.createVolumeAttachment({
        body: { metadata: { name, finalizers }, spec: { attacher: "csi.test.dev", nodeName: onNode, source: { persistentVolumeName: pv } } },
      });
      if (attached) await setAttached(name, true);
    };
    const setAttached = (name: string, attached: boolean) =>
      storage.patchVolumeAttachmentStatus({ name, body: { status: { attached } } }, k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
    return { c, storage, node, attach, setAttached };
  }

  it("waits while volumes are attached or detaching, reporting them, and returns once all are detached or gone", async () => {
    const { c, storage, node, attach, setAttached } = await setup();
    const id = `${process.pid}-${counter}`;
    await attach(`va-a-${id}`, `pv-a-${id}`);
    await attach(`va-b-${id}`, `pv-b-${id}`, node, true, ["external-attacher/csi-test-dev"]);
    await attach(`va-other-${id}`, `pv-other-${id}`, `elsewhere-${id}`); // another node's volume never blocks
    const reports: string[][] = [];
    const wait = waitForVolumeDetach(c, node, { timeoutMs: 60000, onBlocking: (v) => reports.push(v) }, () => undefined);
    assert.equal(await settledWithin(wait, 1500), "pending", "holds while both volumes are attached");
    assert.deepEqual(reports[0], [`pv-a-${id} (csi.test.dev)`, `pv-b-${id} (csi.test.dev)`]);

    await setAttached(`va-a-${id}`, false); // detached; the controller would delete it later
    await storage.deleteVolumeAttachment({ name: `va-b-${id}` }); // finalizer keeps it while the attacher detaches
    await delay(500);
    assert.equal(await settledWithin(wait, 1000), "pending", "a VolumeAttachment being deleted is still detaching");
    assert.deepEqual(reports[reports.length - 1], [`pv-b-${id} (csi.test.dev, detaching)`]);

    await storage.patchVolumeAttachment({ name: `va-b-${id}`, body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
    assert.equal(await settledWithin(wait, 10000), undefined, "resolves once the last one is gone");
  });

  it("ends at the deadline naming the node and the blocking volumes", async () => {
    const { c, node, attach } = await setup();
    const id = `${process.pid}-${counter}`;
    await attach(`va-stuck-${id}`, `pv-stuck-${id}`);
    await assert.rejects(waitForVolumeDetach(c, node, { timeoutMs: 1500 }, () => undefined), (err: Error) => {
      assert.equal(err.message, `node ${node}: 1 volume(s) still attached 1.5s after the drain: pv-stuck-${id} (csi.test.dev); ` +
        "check the CSI driver's attacher (kubectl get volumeattachments), then retry");
      return true;
    });
  });

  it("returns at once for a node without attachments (one list, no watch), and stops when cancelled", async () => {
    const { c, node, attach } = await setup();
    const before = c.stats();
    assert.equal(await settledWithin(waitForVolumeDetach(c, `${node}-empty`, { timeoutMs: 60000 }, () => undefined), 10000), undefined);
    // One list and no watch (issue 23: a watch per node sat on every node's critical path).
    assert.deepEqual([c.stats().requests - before.requests, c.stats().watches - before.watches], [1, 0]);
    await attach(`va-c-${process.pid}-${counter}`, "pv-c");
    const abort = new AbortController();
    const wait = waitForVolumeDetach(c, node, { timeoutMs: 60000, signal: abort.signal }, () => undefined);
    await delay(300);
    abort.abort();
    await assert.rejects(wait, /waiting for the volumes of node .* to detach was cancelled/);
  });

  it("issue 23: with the port's cache (one watch of every VolumeAttachment), a node with nothing attached costs no request, and an attachment made since is still waited for", async () => {
    const { c, node, attach, setAttached } = await setup();
    const id = `${process.pid}-${counter}`;
    const cache = new VolumeAttachmentCache(c);
    onFileEnd(async () => cache.stop());
    // The first wait starts the cache and lists as before (the cache cannot answer yet).
    await waitForVolumeDetach(c, `${node}-first`, { timeoutMs: 60000 }, () => undefined, cache);
    for (let i = 0; cache.blocking(node) === undefined; i++) {
      assert.ok(i < 200, "the cache's watch never opened");
      await delay(50);
    }
    const before = c.stats();
    assert.equal(await settledWithin(waitForVolumeDetach(c, `${node}-empty`, { timeoutMs: 60000 }, () => undefined, cache), 10000), undefined);
    assert.deepEqual([c.stats().requests - before.requests, c.stats().watches - before.watches], [0, 0], "asked the cache, not the API server");
    // Attached after the cache listed: its watch event reaches the cache, and the node waits for it.
    await attach(`va-late-${id}`, `pv-late-${id}`);
    for (let i = 0; cache.blocking(node)?.length !== 1; i++) {
      assert.ok(i < 200, "the cache never saw the attachment");
      await delay(50);
    }
    const wait = waitForVolumeDetach(c, node, { timeoutMs: 60000 }, () => undefined, cache);
    assert.equal(await settledWithin(wait, 1000), "pending", "holds while the volume is attached");
    await setAttached(`va-late-${id}`, false);
    assert.equal(await settledWithin(wait, 10000), undefined, "resolves once it is detached");
  });

  it("issue 23: an API server away for a while (a control plane behind the kubeconfig rebooting) does not end the cache: its watch opens again once it is back", async () => {
    const cp = await testControlPlane();
    // The API server behind a TCP relay the test closes (connections reset, then refused) and opens again.
    const target = new URL(kubeConfigOf(cp).getCurrentCluster()!.server);
    const sockets = new Set<net.Socket>();
    let relay: net.Server | undefined;
    const open = (port = 0) => new Promise<number>((resolve) => {
      relay = net.createServer((client) => {
        const upstream = net.connect(Number(target.port), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("error", () => undefined).on("close", () => sockets.delete(s));
        }
        client.pipe(upstream).pipe(client);
      });
      relay.listen(port, "127.0.0.1", () => resolve((relay!.address() as net.AddressInfo).port));
    });
    const close = () => new Promise<void>((resolve) => {
      relay?.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
    onFileEnd(close);
    const port = await open();
    const c = new KubeClients(cp.kubeconfig.split(target.origin).join(`https://127.0.0.1:${port}`));
    onFileEnd(async () => c.close());
    const cache = new VolumeAttachmentCache(c);
    onFileEnd(async () => cache.stop());
    const node = `va-node-${process.pid}-${counter++}-away`;
    await waitForVolumeDetach(c, node, { timeoutMs: 10000 }, () => undefined, cache);
    for (let i = 0; cache.blocking(node) === undefined; i++) {
      assert.ok(i < 200, "the cache's watch never opened");
      await delay(50);
    }
    // Away for 5 s: its watch drops, and every re-open is refused (backoff 0.1, 0.2, 0.4 s… up to 1 s: six or more, so
    // a loaded machine's late timers still leave the four asserted below).
    const watchesBefore = c.stats().watches;
    await close();
    await delay(5000);
    await open(port);
    assert.ok(c.stats().watches - watchesBefore >= 4, `re-opens tried while away: ${c.stats().watches - watchesBefore}`);
    for (let i = 0; cache.blocking(node) === undefined; i++) {
      assert.ok(i < 200, "the cache never answered again (before the fix it gave up after three refused re-opens)");
      await delay(50);
    }
    const before = c.stats().requests;
    await waitForVolumeDetach(c, node, { timeoutMs: 10000 }, () => undefined, cache);
    assert.equal(c.stats().requests - before, 0, "asked the cache, not the API server");
  });

  it("issue 23: a kubeconfig that may list VolumeAttachments but not watch them: the cache gives up after a few tries, quietly, and every wait lists", async () => {
    const cp = await testControlPlane();
    const ns = await freshNamespace(cp, "va");
    const kc = kubeConfigOf(cp);
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: `${ns}-va` }, rules: [{ apiGroups: ["storage.k8s.io"], resources: ["volumeattachments"], verbs: ["list"] }] } });
    await rbac.createClusterRoleBinding({ body: {
      metadata: { name: `${ns}-va` }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${ns}-va` },
      subjects: [{ kind: "ServiceAccount", name: "pipeline", namespace: ns }],
    } });
    onFileEnd(async () => {
      await rbac.deleteClusterRoleBinding({ name: `${ns}-va` }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: `${ns}-va` }).catch(() => undefined);
    });
    const c = new KubeClients(await serviceAccountKubeconfig(cp, ns, "pipeline"));
    onFileEnd(async () => c.close());
    const cache = new VolumeAttachmentCache(c);
    onFileEnd(async () => cache.stop());
    const logged: string[] = [];
    const node = `va-node-${process.pid}-${counter++}-listonly`;
    for (let i = 0; i < 3; i++) await waitForVolumeDetach(c, node, { timeoutMs: 10000 }, (l) => logged.push(l), cache);
    // Its watch is refused each time it is opened (backoff 0.1, 0.2, 0.4 s…): given up after three, it opens no more.
    let watches = -1;
    for (let i = 0; watches !== c.stats().watches; i++) {
      assert.ok(i < 8, `the cache still opens watches (${c.stats().watches})`);
      watches = c.stats().watches;
      await delay(1500);
    }
    assert.ok(watches >= 3 && watches <= 4, `${watches} watches opened before it gave up`);
    assert.equal(cache.blocking(node), undefined, "a cache that gave up never answers");
    const before = c.stats().requests;
    await waitForVolumeDetach(c, node, { timeoutMs: 10000 }, (l) => logged.push(l), cache);
    assert.equal(c.stats().requests - before, 1, "the wait lists");
    assert.deepEqual(logged, [], "nothing said about the cache's watch");
  });
});
