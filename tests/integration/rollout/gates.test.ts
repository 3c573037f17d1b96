// Beyond Omni, on the simulated cluster with the real adapters: a condition gate held by a missing object and then by
// its message, opened by the watch event of the write that makes it true; a soak restarted by a flapping condition;
// maintenance windows (closed at the start, closing while the gate holds, resumed inside the next one); beforeNode /
// afterNode hooks with the node's identity in their env (afterNode also when beforeNode fails); and the wait for a
// node's VolumeAttachments after the drain on the >= 1.13 path.
import * as assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { DateTime } from "luxon";
import { compileCondition } from "../../../provider/conditions";
import type { ConditionGate } from "../../../provider/rollout/conditions";
import { RolloutError, runRollout, systemClock, type Clock } from "../../../provider/rollout/run";
import type { UpgradeStatus } from "../../../provider/rollout/status";
import { parseMaintenanceWindows } from "../../../provider/schedule";
import type { KubeClient } from "../../../provider/kube";
import { validateNodeHook, type NodeHook } from "../../../provider/template/hooks";
import { adapters, clients, delay, recordBoots, runOptions, sim, TARGET, until, versions } from "./helpers";

function condition(cluster: string, name: string, input: Record<string, unknown>): ConditionGate {
  const r = compileCondition(input);
  assert.deepEqual(r.failures, []);
  return { id: `cluster-${cluster}-${name}`, compiled: r.compiled! };
}

const HOOK_SA = "hook-writer";

/** A hook Job running `script` as ServiceAccount default/hook-writer (see grantHookWrite). */
function hook(cluster: string, name: string, script: string): NodeHook {
  const job = {
    apiVersion: "batch/v1", kind: "Job", metadata: { namespace: "default" },
    spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", serviceAccountName: HOOK_SA, containers: [{ name: "hook", image: "bitnami/kubectl", command: ["sh", "-c", script] }] } } },
  };
  const r = validateNodeHook({ name, job, timeout: "60s" }, { cluster }, "hooks");
  assert.deepEqual(r.failures, []);
  return r.hook!;
}

/** The hooks' RBAC as a user ships it: a ServiceAccount that may create ConfigMaps in default. */
async function grantHookWrite(kube: KubeClient, cluster: string): Promise<void> {
  const meta = { name: HOOK_SA, namespace: "default" };
  await kube.applyManifests([{
    name: "hook-rbac",
    content: [
      { apiVersion: "v1", kind: "ServiceAccount", metadata: meta },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: meta, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["create"] }] },
      {
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: meta,
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: HOOK_SA }, subjects: [{ kind: "ServiceAccount", ...meta }],
      },
    ],
  }], { cluster });
}

async function setHealth(core: k8s.CoreV1Api, health: string): Promise<void> {
  const body: k8s.V1ConfigMap = { metadata: { name: "ceph", namespace: "default" }, data: { health } };
  try {
    await core.replaceNamespacedConfigMap({ name: "ceph", namespace: "default", body });
  } catch {
    await core.createNamespacedConfigMap({ namespace: "default", body });
  }
}

const cephGate = (cluster: string) => condition(cluster, "ceph", {
  target: { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "ceph" },
  expression: "object.data.health == 'HEALTH_OK'",
  message: "'ceph is ' + object.data.health",
});

describe("integration: rollout — condition gates, soak, windows, hooks, volume detach (sim)", function () {
  this.timeout(240000);

  it("a condition holds with an explicit reason (object missing, then its message), opens on the watch event, and a flap during the soak restarts it", async () => {
    const cluster = "cond";
    const s = await sim({ controlPlanes: 1, workers: 2 });
    const { kube, talos } = adapters(s);
    const { core } = clients(s);
    const boots = recordBoots(s);
    const lines: string[] = [];
    let last: UpgradeStatus | undefined;
    // A condition that runs away (a backtracking regex: about 3 s on one core) until its ConfigMap is fixed.
    await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "redos" }, data: { x: `${"a".repeat(28)}b` } } });
    const redos = condition(cluster, "redos", {
      target: { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "redos" }, expression: "object.data.x.matches('^(a+)+$')",
    });
    const run = runRollout(kube, talos, runOptions(cluster, {
      conditions: [cephGate(cluster), redos],
      soakMs: 3000,
      leaseDurationSeconds: 3,
      onProgress: (l) => lines.push(l),
      onStatus: (st) => { last = st; },
    }));
    run.catch(() => undefined);
    try {
      await until("the gate to hold on the missing object and the runaway expression",
        () => last?.gate === "held" && last.step.includes("not found") && last.step.includes("did not finish"));
      assert.equal(last!.step, 'waiting for healthchecks to pass: "cluster-cond-ceph": v1 ConfigMap default/ceph not found; ' +
        '"cluster-cond-redos": expression did not finish within 1s over 1 object and was stopped; simplify it (fewer nested ' +
        "comprehensions, no backtracking regular expressions) or narrow the target");
      // Meanwhile the run's own timers run: the Lease (3 s, renewed every second) keeps being renewed.
      const kc = new k8s.KubeConfig();
      kc.loadFromString(s.kubeconfig);
      const leases = kc.makeApiClient(k8s.CoordinationV1Api);
      const renewTime = async () => new Date((await leases.readNamespacedLease({ name: `talos-gate-${cluster}`, namespace: "kube-system" })).spec!.renewTime as unknown as string).getTime();
      const seen = new Set([await renewTime()]);
      await until("two more renewals of the Lease", async () => seen.add(await renewTime()).size >= 3, 20000);
      await core.replaceNamespacedConfigMap({ name: "redos", namespace: "default", body: { metadata: { name: "redos" }, data: { x: "aaa" } } });
      await until("the runaway condition to pass once fixed", () => last?.step === 'waiting for healthchecks to pass: "cluster-cond-ceph": v1 ConfigMap default/ceph not found');
      await setHealth(core, "HEALTH_WARN");
      await until("the message to replace the reason", () => last?.step.endsWith('"cluster-cond-ceph": ceph is HEALTH_WARN') === true);
      assert.deepEqual(boots.downs, [], "nothing goes down while the condition holds");

      await setHealth(core, "HEALTH_OK");
      await until("the first node to be back and the soak to start", () => last?.gate === "soaking", 60000);
      assert.match(last!.step, /^soaking: next node not before /);
      await setHealth(core, "HEALTH_WARN"); // a flap during the soak
      await until("the soak to restart", () => lines.some((l) => l.includes("soak restarted: a condition stopped holding: \"cluster-cond-ceph\": ceph is HEALTH_WARN")));
      assert.match(last!.step, /^soaking: restarted, waiting for the conditions to hold: "cluster-cond-ceph": ceph is HEALTH_WARN/);
      await delay(500);
      assert.equal(boots.downs.length, 1, "the second node waits while the condition is false");
      const okAgain = Date.now();
      await setHealth(core, "HEALTH_OK");
      const final = await run;
      assert.equal(final.phase, "Done");
      assert.deepEqual(versions(s), { "cp-1": TARGET, "w-1": TARGET, "w-2": TARGET });
      const second = (boots.downs as Array<{ at: number }>)[1]; // (narrowed to never[] by the deepEqual above)
      assert.ok(second.at - okAgain >= 3000, `the soak restarted: the second node went down ${second.at - okAgain} ms after the condition held again (soak 3 s)`);
    } finally {
      await s.stop();
    }
  });

  describe("maintenance windows", () => {
    // The run's clock is shifted so "now" sits at a chosen instant of the window's day; waits still take real time.
    const shifted = (to: DateTime): Clock => {
      const offset = to.toMillis() - Date.now();
      return { now: () => Date.now() + offset, sleep: systemClock.sleep };
    };
    const today = DateTime.utc().startOf("day");
    const schedule = parseMaintenanceWindows(["Mon-Sun 02:00-03:00 UTC"]).schedule!;
    const next = today.plus({ days: 1, hours: 2 }).toFormat("ccc yyyy-MM-dd HH:mm");

    it("outside a window no node starts and the run waits (not a failure), saying when the next one opens; inside one it completes; a gate that holds past its end waits the same way", async () => {
      const cluster = "window";
      const s = await sim({ controlPlanes: 1, workers: 1 });
      const { kube, talos } = adapters(s);
      const { core } = clients(s);
      const boots = recordBoots(s);
      try {
        // Closed at the start: ends Waiting before any gate or node, 14h before the next window.
        const waiting = await runRollout(kube, talos, runOptions(cluster, { schedule, clock: shifted(today.plus({ hours: 12 })) }));
        assert.equal(waiting.phase, "Waiting");
        assert.equal(waiting.step, `waiting for the maintenance window: next opens ${next} UTC, in 14h0m`);
        assert.equal(waiting.error, "");
        assert.equal((await kube.readStatus(cluster) as UpgradeStatus).phase, "Waiting", "mirrored");
        assert.deepEqual(boots.downs, []);

        // Open at the start, but the gate holds past the window's end (3 s later): the run stops at the window.
        const clock = shifted(today.plus({ hours: 2, minutes: 59, seconds: 57 }));
        const held = runRollout(kube, talos, runOptions(cluster, { schedule, conditions: [cephGate(cluster)], clock }));
        held.catch(() => undefined);
        // The condition holds the gate until the run's clock has passed the window's end, then opens.
        await until("the run's clock to pass the window's end", () => clock.now() >= today.plus({ hours: 3 }).toMillis(), 30000);
        await setHealth(core, "HEALTH_OK");
        const stopped = await held;
        assert.equal(stopped.phase, "Waiting");
        assert.match(stopped.step, new RegExp(`^waiting for the maintenance window: next opens ${next} UTC, in 2[23]h[0-9]+m$`));
        assert.deepEqual(boots.downs, [], "no node started outside the window");

        // Resumed inside the next window: completes.
        const done = await runRollout(kube, talos, runOptions(cluster, {
          schedule, conditions: [cephGate(cluster)], clock: shifted(today.plus({ days: 1, hours: 2, minutes: 10 })),
        }));
        assert.equal(done.phase, "Done");
        assert.deepEqual(versions(s), { "cp-1": TARGET, "w-1": TARGET });
      } finally {
        await s.stop();
      }
    });
  });

  it("hooks run around each node with its identity in the env; a failing beforeNode stops loudly and afterNode still runs", async () => {
    const cluster = "hooks";
    const s = await sim({ controlPlanes: 1, workers: 1 });
    const { kube, talos } = adapters(s);
    const { core } = clients(s);
    const boots = recordBoots(s);
    const record = [
      'phase=$(echo "$TALOS_GATE_PHASE" | tr A-Z a-z)',
      'kubectl create configmap "hook-$phase-$TALOS_GATE_NODE-${TALOS_GATE_NODE_OUTCOME:-none}" -n default ' +
        '--from-literal=role="$TALOS_GATE_NODE_ROLE" --from-literal=cluster="$TALOS_GATE_CLUSTER"',
    ].join("\n");
    const lines: string[] = [];
    await grantHookWrite(kube, cluster);
    try {
      const done = await runRollout(kube, talos, runOptions(cluster, {
        hooks: { beforeNode: hook(cluster, "noout-set", record), afterNode: hook(cluster, "noout-unset", record) },
        onProgress: (l) => lines.push(l),
      }));
      assert.equal(done.phase, "Done");
      const cm = async (name: string) => (await core.readNamespacedConfigMap({ name, namespace: "default" })).data;
      assert.deepEqual(await cm("hook-beforenode-cp-1-none"), { role: "controlplane", cluster });
      assert.deepEqual(await cm("hook-afternode-cp-1-upgraded"), { role: "controlplane", cluster });
      assert.deepEqual(await cm("hook-beforenode-w-1-none"), { role: "worker", cluster });
      assert.deepEqual(await cm("hook-afternode-w-1-upgraded"), { role: "worker", cluster });
      const index = (re: RegExp) => lines.findIndex((l) => re.test(l));
      assert.ok(index(/node w-1: beforeNode hook "cluster-hooks-noout-set\/w-1" passed/) < index(/node w-1: upgrading /), lines.join("\n"));
      assert.ok(index(/node w-1: afterNode hook "cluster-hooks-noout-unset\/w-1" passed/) > index(/node w-1: back on /), lines.join("\n"));
      const downs = boots.downs.length;

      // A failing beforeNode: the node is not touched, the run stops with the hook's stderr, afterNode runs (failed).
      const failing = 'echo "noout failed: mon quorum lost" >&2; exit 1';
      await assert.rejects(runRollout(kube, talos, runOptions(cluster, {
        targetVersion: "v1.13.3",
        hooks: { beforeNode: hook(cluster, "noout-set", failing), afterNode: hook(cluster, "noout-unset", record) },
      })), (e: RolloutError) => {
        assert.match(e.message, /^beforeNode hook "cluster-hooks-noout-set\/cp-1" failed for node cp-1: noout failed: mon quorum lost; fix the hook/);
        return true;
      });
      assert.equal(boots.downs.length, downs, "no node went down");
      assert.deepEqual(await cm("hook-afternode-cp-1-failed"), { role: "controlplane", cluster });
    } finally {
      await s.stop();
    }
  });

  it("after the drain (>= 1.13), the reboot waits for the node's VolumeAttachments, naming them", async () => {
    const cluster = "volumes";
    const s = await sim({ controlPlanes: 1, workers: 1, version: "v1.13.0" });
    const { kube, talos } = adapters(s);
    const kc = new k8s.KubeConfig();
    kc.loadFromString(s.kubeconfig);
    const storage = kc.makeApiClient(k8s.StorageV1Api);
    const boots = recordBoots(s);
    await storage.createVolumeAttachment({ body: { metadata: { name: "va-w1" }, spec: { attacher: "csi.test.dev", nodeName: "w-1", source: { persistentVolumeName: "pv-data" } } } });
    await storage.patchVolumeAttachmentStatus({ name: "va-w1", body: { status: { attached: true } } }, k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
    const lines: string[] = [];
    try {
      const run = runRollout(kube, talos, runOptions(cluster, { volumeDetachTimeoutMs: 60000, onProgress: (l) => lines.push(l) }));
      run.catch(() => undefined);
      await until("the wait for w-1's volumes", () => lines.some((l) => l.includes("waiting for volumes to detach: pv-data (csi.test.dev)")), 60000);
      await delay(1000);
      assert.equal(boots.downsOf("w-1"), 0, "w-1 does not reboot while its volume is attached");
      assert.equal(boots.downsOf("cp-1"), 1, "cp-1 had none and went through");
      await storage.deleteVolumeAttachment({ name: "va-w1" });
      assert.equal((await run).phase, "Done");
      assert.equal(boots.downsOf("w-1"), 1);
    } finally {
      await s.stop();
    }
  });
});
