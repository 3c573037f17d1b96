// The observer under the runner, against the real API server: a start from a version etcd has compacted away ends in
// 410 Gone and a new list, then converges on the current state; a watch the server closes (timeoutSeconds) is re-opened
// without losing changes. The compaction test watches PodTemplates, which the sim's API server serves from etcd without
// a watch cache (sim/controlplane.ts): a watch cache answers a too-old version with its current objects until it has
// dropped events of its own, so with ConfigMaps the 410 came or not depending on what ran on the control plane before.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as k8s from "@kubernetes/client-node";
import { KubeClients } from "../../../provider/kube/client";
import { ObjectObserver } from "../../../provider/kube/watch";
import { eventually, freshNamespace, testControlPlane } from "../../support/kube";
import { delay } from "./helpers";

/** Compacts etcd's history up to its current revision, so older resourceVersions are gone (410 on watch). */
async function compactEtcd(pids: number[]): Promise<void> {
  for (const pid of pids) {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    const i = args.indexOf("--listen-client-urls");
    if (!args[0].endsWith("etcd") || i < 0) continue;
    const url = args[i + 1];
    const range = await fetch(`${url}/v3/kv/range`, { method: "POST", body: JSON.stringify({ key: Buffer.from("/").toString("base64") }) });
    const revision = ((await range.json()) as { header: { revision: string } }).header.revision;
    const res = await fetch(`${url}/v3/kv/compaction`, { method: "POST", body: JSON.stringify({ revision, physical: true }) });
    assert.ok(res.ok, `etcd compaction: HTTP ${res.status}`);
    return;
  }
  throw new Error("etcd process not found among the control plane's processes");
}

describe("integration: kube port — object watch", function () {
  this.timeout(120000);

  async function setup() {
    const cp = await testControlPlane();
    const ns = await freshNamespace(cp, "watch");
    const c = new KubeClients(cp.kubeconfig);
    return { c, ns, path: `/api/v1/namespaces/${ns}/configmaps` };
  }

  const next = async <T extends k8s.V1ConfigMap | k8s.V1PodTemplate>(o: ObjectObserver<T>, ms = 10000) => {
    const r = await Promise.race([o.next(), delay(ms).then(() => "timeout" as const)]);
    assert.notEqual(r, "timeout", "no state observed in time");
    return r as { object: T | undefined };
  };

  it("converges on the current state when its resourceVersion was compacted away", async () => {
    const { c, ns } = await setup();
    let lists = 0;
    const o = new ObjectObserver<k8s.V1PodTemplate>({
      clients: c, path: `/api/v1/namespaces/${ns}/podtemplates`, name: "target",
      list: async () => {
        lists++;
        const real = await c.core.listNamespacedPodTemplate({ namespace: ns, fieldSelector: "metadata.name=target" });
        if (lists > 1) return real;
        // The first answer claims a version older than the API server's watch cache, which etcd no longer has
        // either (compacted).
        await compactEtcd((await testControlPlane()).pids());
        return { items: real.items, metadata: { resourceVersion: "2" } };
      },
    });
    try {
      assert.equal((await next(o)).object, undefined, "first list: absent");
      await c.core.createNamespacedPodTemplate({ namespace: ns, body: { metadata: { name: "target", labels: { v: "1" } }, template: { spec: { containers: [{ name: "c", image: "busybox" }] } } } });
      for (;;) {
        const s = await next(o);
        if (s.object?.metadata?.labels?.v === "1") break;
      }
      assert.ok(lists >= 2, `listed ${lists} time(s): the watch from a compacted version must end in a new list`);
    } finally {
      o.stop();
      c.close();
    }
  });

  it("re-opens the watch after the server closes it and sees later changes", async () => {
    const { c, ns, path } = await setup();
    const o = new ObjectObserver<k8s.V1ConfigMap>({
      clients: c, path, name: "target", timeoutSeconds: 1,
      list: () => c.core.listNamespacedConfigMap({ namespace: ns, fieldSelector: "metadata.name=target" }),
    });
    try {
      assert.equal((await next(o)).object, undefined);
      const watchesBefore = c.stats().watches;
      // The server ends each 1 s watch; the observer opens the next one (at least two re-opens), then sees changes.
      await eventually("the watch to be re-opened twice", async () => c.stats().watches >= watchesBefore + 2, 30000, 50);
      await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "target" }, data: { v: "2" } } });
      assert.equal((await next(o)).object?.data?.v, "2");
      await c.core.deleteNamespacedConfigMap({ name: "target", namespace: ns });
      assert.equal((await next(o)).object, undefined, "deletion observed");
    } finally {
      o.stop();
      c.close();
    }
  });
});
