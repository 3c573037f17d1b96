// The per-cluster rollout Lease: refused to a second holder (naming the holder and the expiry), taken over only after
// expiry, renewed while held, lost when someone else takes it, released on request.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { createKubeApi } from "../../../provider/kube";
import { eventually, freshNamespace, kubeConfigOf, serviceAccountKubeconfig, testControlPlane } from "../../support/kube";
import { delay, harness } from "./helpers";

let counter = 0;

/**
 * The reason `signal` aborts with, or `otherwise` after `ms`. An already aborted signal counts: the watch can deliver
 * a request before the call that made it has returned (an "abort" listener added then would never fire).
 */
function abortReason(signal: AbortSignal, ms: number, otherwise: string): Promise<string> {
  if (signal.aborted) return Promise.resolve((signal.reason as Error)?.message ?? String(signal.reason));
  return Promise.race([
    new Promise<string>((resolve) => signal.addEventListener("abort", () => resolve((signal.reason as Error)?.message ?? String(signal.reason)))),
    delay(ms).then(() => otherwise),
  ]);
}
const clusterName = () => `lease-${process.pid}-${Date.now().toString(36)}-${counter++}`;

describe("integration: kube port — rollout lease", function () {
  this.timeout(120000);

  it("is refused to a second holder while held and renewed, and free again after release", async () => {
    const h = await harness();
    const cluster = clusterName();
    const a = await h.kube.acquireLease({ cluster, holder: "pipeline-a", durationSeconds: 3 });
    assert.equal(a.holder, "pipeline-a");
    await assert.rejects(h.kube.acquireLease({ cluster, holder: "pipeline-b", durationSeconds: 3 }), (err: Error) => {
      assert.match(err.message, new RegExp(`cluster ${cluster}: another rollout holds the lease \\(holder "pipeline-a"\\) until \\d{4}-\\d\\d-\\d\\dT`));
      return true;
    });
    const coord = h.kc.makeApiClient(k8s.CoordinationV1Api);
    const read = () => coord.readNamespacedLease({ name: `talos-gate-${cluster}`, namespace: "kube-system" });
    // Renewed past the moment it would have expired without renewal (acquired + 3 s), as the Lease itself shows.
    const acquired = new Date((await read()).spec!.acquireTime!).getTime();
    await eventually("the lease to be renewed past its first expiry", async () => {
      const renewed = new Date((await read()).spec!.renewTime!).getTime();
      return renewed > acquired + 3000 && Date.now() > acquired + 3000;
    }, 30000);
    assert.equal(a.lost.aborted, false);
    await assert.rejects(h.kube.acquireLease({ cluster, holder: "pipeline-b", durationSeconds: 3 }), /holder "pipeline-a"/);
    const held = await read();
    assert.equal(held.spec?.holderIdentity, "pipeline-a");
    assert.equal(held.spec?.leaseDurationSeconds, 3);

    await a.release();
    const released = await coord.readNamespacedLease({ name: `talos-gate-${cluster}`, namespace: "kube-system" });
    assert.equal(released.spec?.holderIdentity, undefined);
    const b = await h.kube.acquireLease({ cluster, holder: "pipeline-b", durationSeconds: 3 });
    await b.release();
  });

  it("is taken over only after it expired (a crashed holder), counting the transition", async () => {
    const h = await harness();
    const cluster = clusterName();
    const coord = h.kc.makeApiClient(k8s.CoordinationV1Api);
    // A holder that stopped renewing (crashed) 1 s ago with a 4 s lease: 3 s in which a second holder is refused.
    const renewed = Date.now() - 1000;
    await coord.createNamespacedLease({
      namespace: "kube-system",
      body: {
        metadata: { name: `talos-gate-${cluster}` },
        spec: { holderIdentity: "crashed", leaseDurationSeconds: 4, acquireTime: new k8s.V1MicroTime(renewed), renewTime: new k8s.V1MicroTime(renewed), leaseTransitions: 0 },
      },
    });
    await assert.rejects(h.kube.acquireLease({ cluster, holder: "next" }), /holder "crashed"/);
    await delay(Math.max(0, renewed + 4000 + 300 - Date.now()));
    const lease = await h.kube.acquireLease({ cluster, holder: "next", durationSeconds: 5 });
    const now = await coord.readNamespacedLease({ name: `talos-gate-${cluster}`, namespace: "kube-system" });
    assert.equal(now.spec?.holderIdentity, "next");
    assert.equal(now.spec?.leaseTransitions, 1);
    await lease.release();
  });

  it("aborts `lost` when another holder takes the lease over", async () => {
    const h = await harness();
    const cluster = clusterName();
    const a = await h.kube.acquireLease({ cluster, holder: "pipeline-a", durationSeconds: 3 });
    const coord = h.kc.makeApiClient(k8s.CoordinationV1Api);
    const lease = await coord.readNamespacedLease({ name: `talos-gate-${cluster}`, namespace: "kube-system" });
    lease.spec!.holderIdentity = "intruder";
    await coord.replaceNamespacedLease({ name: lease.metadata!.name!, namespace: "kube-system", body: lease });
    const lost = await abortReason(a.lost, 5000, "not lost");
    assert.match(lost, new RegExp(`cluster ${cluster}: the rollout lease was taken over by "intruder"`));
    await a.release(); // no-op: not ours
    const after = await coord.readNamespacedLease({ name: lease.metadata!.name!, namespace: "kube-system" });
    assert.equal(after.spec?.holderIdentity, "intruder");
  });

  it("a stop request reaches the holder at once, names who asked, and is cleared for the next holder", async () => {
    const h = await harness();
    const cluster = clusterName();
    assert.equal(await h.kube.requestStop(cluster, "alice@laptop"), undefined, "nothing runs: nothing is asked");
    assert.equal(await h.kube.runningRollout(cluster), undefined);
    // A long lease (renewed every 100 s): only the watch can bring the request within the wait below.
    const a = await h.kube.acquireLease({ cluster, holder: "pipeline-a", durationSeconds: 300 });
    assert.equal((await h.kube.runningRollout(cluster))?.holder, "pipeline-a");
    assert.equal(a.stopRequested?.aborted, false);
    const asked = await h.kube.requestStop(cluster, "alice@laptop");
    assert.equal(asked?.holder, "pipeline-a");
    // Seen by the watch (milliseconds on a quiet machine; the bound only tells "seen" from "not seen" on a loaded one).
    const reason = await abortReason(a.stopRequested!, 40_000, "not seen");
    assert.match(reason, /^stop requested by alice@laptop at \d{4}-\d\d-\d\dT\S+ \(talos-gate stop\)$/);
    assert.equal(a.lost.aborted, false, "a stop request is not a lost lease");
    await a.release();
    // The same holder (a resumed `pulumi up` of the same stack) takes the lease again: the old request is gone.
    const b = await h.kube.acquireLease({ cluster, holder: "pipeline-a", durationSeconds: 300 });
    const coord = h.kc.makeApiClient(k8s.CoordinationV1Api);
    const lease = await coord.readNamespacedLease({ name: `talos-gate-${cluster}`, namespace: "kube-system" });
    assert.equal(lease.metadata?.annotations?.["talos-gate.dev/stop-requested-by"], undefined);
    await delay(1000);
    assert.equal(b.stopRequested?.aborted, false, "the old request does not stop the next run");
    await b.release();
  });

  it("a renewal refused for a while is one warning naming the deadline; renewed again in time, the lease is kept", async () => {
    const cp = await testControlPlane();
    const admin = kubeConfigOf(cp);
    const cluster = clusterName();
    // A pipeline whose ServiceAccount may do exactly what the lease needs, through a RoleBinding taken away for a
    // while (an RBAC change mid-run) and given back.
    const ns = await freshNamespace(cp, "lease");
    const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
    const kubeconfig = await serviceAccountKubeconfig(cp, ns, "pipeline");
    await rbac.createNamespacedRole({ namespace: "kube-system", body: {
      metadata: { name: ns }, rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch", "create", "update"] }],
    } });
    const binding: k8s.V1RoleBinding = {
      metadata: { name: ns }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: ns },
      subjects: [{ kind: "ServiceAccount", name: "pipeline", namespace: ns }],
    };
    await rbac.createNamespacedRoleBinding({ namespace: "kube-system", body: binding });
    const logs: string[] = [];
    const kube = createKubeApi(kubeconfig, { log: (l) => logs.push(l) });
    const coord = admin.makeApiClient(k8s.CoordinationV1Api);
    const renewTime = async () => new Date((await coord.readNamespacedLease({ name: `talos-gate-${cluster}`, namespace: "kube-system" })).spec!.renewTime!).getTime();
    const retrying = () => logs.filter((l) => l.includes("renewing the rollout lease failed"));
    try {
      // 9 s: renewed every 3 s, so a refused renewal is retried for ~6 s before the lease would expire.
      const lease = await kube.acquireLease({ cluster, holder: "pipeline-a", durationSeconds: 9 });
      await rbac.deleteNamespacedRoleBinding({ name: ns, namespace: "kube-system" });
      await eventually("the refused renewal to be a warning", async () => retrying().length > 0, 15000);
      const refusedAt = Date.now();
      await rbac.createNamespacedRoleBinding({ namespace: "kube-system", body: binding });
      await eventually("the lease to be renewed again", async () => (await renewTime()) > refusedAt, 15000);
      assert.equal(lease.lost.aborted, false, "renewed before it expired: the lease is still held");
      assert.equal(retrying().length, 1, `one warning per streak of failures:\n${logs.join("\n")}`);
      assert.match(retrying()[0]!, new RegExp(`^cluster ${cluster}: renewing the rollout lease failed \\(.*forbidden.*\\); retrying every second — the rollout stops before the next node if it is not renewed by \\d{4}-\\d\\d-\\d\\dT`, "i"));
      await lease.release();
    } finally {
      kube.close();
      await rbac.deleteNamespacedRole({ name: ns, namespace: "kube-system" }).catch(() => undefined);
      await rbac.deleteNamespacedRoleBinding({ name: ns, namespace: "kube-system" }).catch(() => undefined);
    }
  });
});
