// The kubelet emulator next to the real control plane (kube-apiserver, kube-controller-manager, kube-scheduler): what a
// real client (@kubernetes/client-node, kubectl) sees of Nodes, Jobs, Pods, evictions and PDBs when the real Job,
// disruption, ReplicaSet and DaemonSet controllers and the real scheduler act on pods the emulated kubelets run.
// Own control plane: the assertions name this cluster's nodes.
import * as assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import type { ControlPlane } from "../../../sim/controlplane";
import { freshControlPlane } from "../../support/controlPlanes";
import { KubeSim, MachineSpec, TALOS_CORDONED_ANNOTATION, WORKLOAD_NAMESPACE, startKubeSim } from "../../../sim/kube";
import { freshNamespace, kubeConfigOf } from "../../support/kube";
import { applyConfigurationNoReboot, createTalosApi, patchKubernetesImages, readMachineConfig } from "../../../provider/talos";
import { TalosNodeSim } from "../../../sim/talos";

const run = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
const machines: MachineSpec[] = [
  { name: `ks-${run}-cp-1`, role: "controlplane", address: "10.6.0.2", talosVersion: "v1.12.4" },
  { name: `ks-${run}-w-1`, role: "worker", address: "10.6.0.3", talosVersion: "v1.12.4" },
  { name: `ks-${run}-w-2`, role: "worker", address: "10.6.0.4", talosVersion: "v1.12.4" },
  { name: `ks-${run}-w-3`, role: "worker", address: "10.6.0.5", talosVersion: "v1.12.4" },
];
const workers = machines.filter((m) => m.role === "worker").map((m) => m.name);

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const cond = (job: k8s.V1Job, type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === "True");
const finished = (job: k8s.V1Job) => cond(job, "Complete") ?? cond(job, "Failed");

function jobBody(name: string, script: string, extra: { backoffLimit?: number; activeDeadlineSeconds?: number; policy?: string; env?: k8s.V1EnvVar[] } = {}): k8s.V1Job {
  return {
    metadata: { name, labels: { "app.kubernetes.io/name": "talos-gate-healthcheck" } },
    spec: {
      backoffLimit: extra.backoffLimit ?? 0,
      activeDeadlineSeconds: extra.activeDeadlineSeconds,
      template: {
        metadata: { labels: { check: name } },
        spec: {
          restartPolicy: "Never",
          containers: [{ name: "check", image: "bitnami/kubectl:1.34", command: ["sh", "-c", script], env: extra.env, terminationMessagePolicy: extra.policy ?? "FallbackToLogsOnError" }],
        },
      },
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("integration: kube sim (kubelet emulator with the real controllers and scheduler)", function () {
  this.timeout(180000);
  let cp: ControlPlane;
  let sim: KubeSim;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let batch: k8s.BatchV1Api;
  let policy: k8s.PolicyV1Api;

  before(async function () {
    cp = await freshControlPlane();
    kc = kubeConfigOf(cp);
    core = kc.makeApiClient(k8s.CoreV1Api);
    batch = kc.makeApiClient(k8s.BatchV1Api);
    policy = kc.makeApiClient(k8s.PolicyV1Api);
    const t0 = Date.now();
    sim = await startKubeSim({ kubeconfig: cp.kubeconfig, machines, workloadPodsPerNode: 2, containerRestartBackoffMs: 200 });
    process.stdout.write(`      startKubeSim (${machines.length} nodes, 2 workload pods/worker + DaemonSet): ${Date.now() - t0} ms\n`);
  });

  after(async () => {
    await sim?.stop();
    await cp?.stop();
  });

  /** RBAC for the namespace's default ServiceAccount: get one ConfigMap. */
  async function grantConfigMapRead(ns: string, name: string): Promise<void> {
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: "read-gate" }, rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: [name], verbs: ["get"] }] } });
    await rbac.createNamespacedRoleBinding({ namespace: ns, body: {
      metadata: { name: "read-gate" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "read-gate" },
      subjects: [{ kind: "ServiceAccount", name: "default", namespace: ns }],
    } });
  }

  async function jobPods(ns: string, job: string): Promise<k8s.V1Pod[]> {
    return (await core.listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/job-name=${job}` })).items;
  }

  async function waitJob(ns: string, name: string, timeoutMs = 60000): Promise<k8s.V1Job> {
    return waitFor(`Job ${ns}/${name} to finish`, async () => {
      const j = await batch.readNamespacedJob({ name, namespace: ns });
      return finished(j) ? j : undefined;
    }, timeoutMs, 150);
  }

  it("registers Nodes the way a Talos kubelet does", async () => {
    const cpNode = await core.readNode({ name: machines[0].name });
    assert.equal(cpNode.metadata?.labels?.["node-role.kubernetes.io/control-plane"], "");
    assert.equal(cpNode.metadata?.labels?.["kubernetes.io/hostname"], machines[0].name);
    assert.equal(cpNode.metadata?.labels?.["kubernetes.io/os"], "linux");
    assert.deepEqual(cpNode.spec?.taints?.map((t) => `${t.key}:${t.effect}`), ["node-role.kubernetes.io/control-plane:NoSchedule"]);
    const w = await core.readNode({ name: workers[0] });
    assert.equal(w.metadata?.labels?.["node-role.kubernetes.io/control-plane"], undefined);
    assert.deepEqual(w.status?.addresses?.map((a) => ({ type: a.type, address: a.address })), [{ type: "InternalIP", address: "10.6.0.3" }, { type: "Hostname", address: workers[0] }]);
    assert.equal(w.status?.nodeInfo?.osImage, "Talos (v1.12.4)");
    assert.match(w.status?.nodeInfo?.kernelVersion ?? "", /-talos$/);
    assert.match(w.status?.nodeInfo?.kubeletVersion ?? "", /^v1\.\d+\.\d+$/);
    assert.match(w.status?.nodeInfo?.containerRuntimeVersion ?? "", /^containerd:\/\//);
    const ready = w.status?.conditions?.find((c) => c.type === "Ready");
    assert.equal(ready?.status, "True");
    assert.equal(ready?.reason, "KubeletReady");
    assert.equal(ready?.message, "kubelet is posting ready status");
  });

  it("fails a Job whose kubectl check fails, with the stderr tail as termination message; a flipped ConfigMap makes the next one Complete", async () => {
    const ns = await freshNamespace(cp, "ks");
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "gate" }, data: { healthy: "false" } } });
    await grantConfigMapRead(ns, "gate");
    const script = 'v=$(kubectl get configmap gate -n "$NS" -o jsonpath="{.data.healthy}") || exit 2; ' +
      'if [ "$v" != true ]; then echo "checking ceph"; echo "ceph is not healthy: healthy=$v" >&2; exit 1; fi; echo ok';
    const env = [{ name: "NS", value: ns }];
    await batch.createNamespacedJob({ namespace: ns, body: jobBody("check-1", script, { env }) });
    const job = await waitJob(ns, "check-1");
    assert.ok(cond(job, "FailureTarget"), "FailureTarget=True");
    const failed = cond(job, "Failed");
    assert.equal(failed?.reason, "BackoffLimitExceeded");
    assert.equal(failed?.message, "Job has reached the specified backoff limit");
    assert.equal(job.status?.completionTime, undefined);
    assert.equal(job.status?.failed, 1);
    assert.equal(job.status?.active ?? 0, 0);
    assert.ok(job.status?.startTime);
    const [pod] = await jobPods(ns, "check-1");
    assert.equal(pod.status?.phase, "Failed");
    const term = pod.status?.containerStatuses?.[0].state?.terminated;
    assert.equal(term?.exitCode, 1);
    assert.equal(term?.reason, "Error");
    assert.equal(term?.message, "checking ceph\nceph is not healthy: healthy=false\n");
    assert.ok(term?.startedAt && term?.finishedAt);
    // Labels, owner and node like the Job controller + scheduler would set them.
    assert.match(pod.metadata!.name!, /^check-1-[a-z0-9]{5}$/);
    assert.equal(pod.metadata?.labels?.["batch.kubernetes.io/job-name"], "check-1");
    assert.equal(pod.metadata?.labels?.["job-name"], "check-1");
    assert.equal(pod.metadata?.labels?.["batch.kubernetes.io/controller-uid"], job.metadata?.uid);
    assert.equal(pod.metadata?.labels?.["controller-uid"], job.metadata?.uid);
    assert.equal(pod.metadata?.labels?.check, "check-1");
    assert.deepEqual(pod.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller, r.blockOwnerDeletion]), [["Job", "check-1", job.metadata?.uid, true, true]]);
    assert.ok(workers.includes(pod.spec!.nodeName!), `scheduled on a worker (not the tainted control plane): ${pod.spec?.nodeName}`);

    await core.patchNamespacedConfigMap({ namespace: ns, name: "gate", body: { data: { healthy: "true" } } }, k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
    await batch.createNamespacedJob({ namespace: ns, body: jobBody("check-2", script, { env }) });
    const ok = await waitJob(ns, "check-2");
    assert.ok(cond(ok, "SuccessCriteriaMet"));
    assert.equal(cond(ok, "Complete")?.reason, "CompletionsReached");
    assert.equal(ok.status?.succeeded, 1);
    assert.ok(ok.status?.completionTime && ok.status.startTime && ok.status.completionTime >= ok.status.startTime);
    const [okPod] = await jobPods(ns, "check-2");
    assert.equal(okPod.status?.phase, "Succeeded");
    assert.equal(okPod.status?.containerStatuses?.[0].state?.terminated?.reason, "Completed");
    assert.equal(okPod.status?.containerStatuses?.[0].state?.terminated?.message, undefined, "no message: File policy file empty, exit 0");
  });

  it("runs the process as the pod's service account (a token bound to the pod), never admin: RBAC is enforced", async () => {
    const ns = await freshNamespace(cp, "ks");
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "gate" }, data: { healthy: "true" } } });
    const script = [
      "kubectl auth whoami | awk '/^Username/ {print $2} /pod-name/ {print $NF}'",
      'echo "api=$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT ns=$(cat "$SERVICE_ACCOUNT_DIR/namespace")"',
      'grep -q "BEGIN CERTIFICATE" "$SERVICE_ACCOUNT_DIR/ca.crt" && echo ca=ok',
      "kubectl get configmap gate -o name",
    ].join("\n");
    await batch.createNamespacedJob({ namespace: ns, body: jobBody("whoami", script) });
    const job = await waitJob(ns, "whoami");
    assert.ok(cond(job, "Failed"), "listing the ConfigMap without RBAC fails");
    const [pod] = await jobPods(ns, "whoami");
    const server = new URL(cp.server);
    assert.equal(pod.status?.containerStatuses?.[0].state?.terminated?.message,
      `system:serviceaccount:${ns}:default\n[${pod.metadata?.name}]\napi=${server.hostname}:${server.port} ns=${ns}\nca=ok\n` +
      `Error from server (Forbidden): configmaps "gate" is forbidden: User "system:serviceaccount:${ns}:default" cannot get resource "configmaps" in API group "" in the namespace "${ns}"\n`);

    await grantConfigMapRead(ns, "gate");
    await batch.createNamespacedJob({ namespace: ns, body: jobBody("whoami-2", "kubectl get configmap gate -o name") });
    assert.ok(cond(await waitJob(ns, "whoami-2"), "Complete"), "the Role lets the same service account read it");
  });

  it("uses the file at $TERMINATION_MESSAGE_PATH for the File policy, and fails a pod without command clearly", async () => {
    const ns = await freshNamespace(cp, "ks");
    await batch.createNamespacedJob({ namespace: ns, body: jobBody("msg", 'echo "noise on stderr" >&2; printf "disk 93%% full" > "$TERMINATION_MESSAGE_PATH"; exit 3', { policy: "File" }) });
    await waitJob(ns, "msg");
    const [pod] = await jobPods(ns, "msg");
    assert.equal(pod.status?.containerStatuses?.[0].state?.terminated?.exitCode, 3);
    assert.equal(pod.status?.containerStatuses?.[0].state?.terminated?.message, "disk 93% full");

    const body = jobBody("nocmd", "true");
    delete body.spec!.template.spec!.containers[0].command;
    await batch.createNamespacedJob({ namespace: ns, body });
    const job = await waitJob(ns, "nocmd");
    assert.equal(cond(job, "Failed")?.reason, "BackoffLimitExceeded");
    const [p2] = await jobPods(ns, "nocmd");
    assert.equal(p2.status?.containerStatuses?.[0].state?.terminated?.reason, "StartError");
    assert.match(p2.status?.containerStatuses?.[0].state?.terminated?.message ?? "", /has no command/);
  });

  it("enforces activeDeadlineSeconds: the process is killed and the Job fails with DeadlineExceeded", async () => {
    const ns = await freshNamespace(cp, "ks");
    const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ks-")), "pid");
    // "$$$$": Kubernetes reduces $$ to $ in command/args, so the shell sees $$ (its pid).
    await batch.createNamespacedJob({ namespace: ns, body: jobBody("slow", `echo $$$$ > ${pidFile}; exec sleep 300`) });
    const pid = await waitFor("the process to start", async () => fs.existsSync(pidFile) && Number(fs.readFileSync(pidFile, "utf8").trim()));
    // The deadline is set once the process runs (it is mutable on a Job): set at creation, a slow start on a loaded
    // machine let the Job controller end the Job before the process ever started.
    await batch.patchNamespacedJob({ name: "slow", namespace: ns, body: { spec: { activeDeadlineSeconds: 1 } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
    const job = await waitJob(ns, "slow", 30000);
    assert.ok(cond(job, "FailureTarget"));
    assert.equal(cond(job, "Failed")?.reason, "DeadlineExceeded");
    assert.equal(cond(job, "Failed")?.message, "Job was active longer than specified deadline");
    assert.equal(job.status?.completionTime, undefined);
    assert.equal(job.status?.active ?? 0, 0);
    assert.equal(isAlive(pid), false, "the process was killed");
    await waitFor("the pod the Job controller deleted to be gone", async () => (await jobPods(ns, "slow")).length === 0, 30000);
  });

  it("retries with a new pod per failure until backoffLimit is exceeded", async () => {
    const ns = await freshNamespace(cp, "ks");
    // backoffLimit 1: the Job controller waits its 10 s pod-failure back-off before the second pod.
    await batch.createNamespacedJob({ namespace: ns, body: jobBody("flaky", "echo attempt failed >&2; exit 7", { backoffLimit: 1 }) });
    const job = await waitJob(ns, "flaky");
    assert.equal(cond(job, "Failed")?.reason, "BackoffLimitExceeded");
    assert.equal(job.status?.failed, 2);
    const pods = await jobPods(ns, "flaky");
    assert.equal(pods.length, 2);
    assert.ok(pods.every((p) => p.status?.phase === "Failed" && p.status.containerStatuses?.[0].state?.terminated?.exitCode === 7));
    assert.ok(pods.every((p) => !p.metadata?.finalizers?.includes("batch.kubernetes.io/job-tracking")), "counted pods lose the tracking finalizer");
    assert.equal(new Set(pods.map((p) => p.metadata?.name)).size, 2);
  });

  it("restarts the container in place with restartPolicy OnFailure and counts restarts against backoffLimit", async () => {
    const ns = await freshNamespace(cp, "ks");
    const body = jobBody("crashy", "echo crashed >&2; exit 4", { backoffLimit: 1 });
    body.spec!.template.spec!.restartPolicy = "OnFailure";
    await batch.createNamespacedJob({ namespace: ns, body });
    const seen = await waitFor("a restarted container", async () => {
      const [p] = await jobPods(ns, "crashy");
      const cs = p?.status?.containerStatuses?.[0];
      return cs && (cs.restartCount ?? 0) >= 1 ? cs : undefined;
    }, 30000, 50);
    assert.equal(seen.lastState?.terminated?.exitCode, 4);
    assert.equal(seen.lastState?.terminated?.message, "crashed\n");
    const job = await waitJob(ns, "crashy");
    assert.equal(cond(job, "Failed")?.reason, "BackoffLimitExceeded");
    await waitFor("the pod to be removed", async () => (await jobPods(ns, "crashy")).length === 0, 30000);
    assert.equal((await batch.readNamespacedJob({ name: "crashy", namespace: ns })).status?.failed, 1);
  });

  it("kills and removes the pod of a Job deleted while it runs", async () => {
    const ns = await freshNamespace(cp, "ks");
    const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ks-")), "pid");
    await batch.createNamespacedJob({ namespace: ns, body: jobBody("gone", `echo $$$$ > ${pidFile}; exec sleep 300`) });
    const pid = await waitFor("the process to start", async () => fs.existsSync(pidFile) && Number(fs.readFileSync(pidFile, "utf8").trim()));
    await waitFor("the pod to be Running", async () => (await jobPods(ns, "gone"))[0]?.status?.phase === "Running");
    await waitFor("the Job controller to count the pod active and ready", async () => {
      const running = await batch.readNamespacedJob({ name: "gone", namespace: ns });
      return running.status?.active === 1 && running.status?.ready === 1;
    });
    await batch.deleteNamespacedJob({ name: "gone", namespace: ns, propagationPolicy: "Background" });
    await waitFor("the pod to be removed", async () => (await jobPods(ns, "gone")).length === 0, 30000);
    await waitFor("the process to die", async () => !isAlive(pid), 10000);
  });

  it("flips Node readiness and osImage on down/up, and follows Talos lifecycle events (cordon with talos.dev/cordoned)", async () => {
    const name = workers[2];
    // The kubelet reports its node's pods with the node: not Ready while it is down, Ready again once it is back; the
    // pods of other nodes are left alone.
    const dsReady = async (node: string) => {
      const pods = (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items;
      const ds = pods.find((p) => p.metadata?.ownerReferences?.[0]?.kind === "DaemonSet");
      return ds?.status?.conditions?.find((c) => c.type === "Ready")?.status;
    };
    assert.equal(await dsReady(name), "True");
    await sim.nodes.down(name);
    await waitFor("the DaemonSet pod of the node that went down to be reported not Ready", async () => (await dsReady(name)) === "False");
    assert.equal(await dsReady(workers[1]), "True", "another node's pod is left alone");
    let n = await core.readNode({ name });
    let ready = n.status?.conditions?.find((c) => c.type === "Ready");
    assert.equal(ready?.status, "Unknown");
    assert.equal(ready?.reason, "NodeStatusUnknown");
    assert.ok(n.spec?.taints?.some((t) => t.key === "node.kubernetes.io/unreachable"));
    await sim.nodes.up(name, { talosVersion: "v1.13.0", bootId: "boot-2" });
    n = await core.readNode({ name });
    ready = n.status?.conditions?.find((c) => c.type === "Ready");
    assert.equal(ready?.status, "True");
    assert.equal(n.status?.nodeInfo?.osImage, "Talos (v1.13.0)");
    assert.equal(n.status?.nodeInfo?.bootID, "boot-2");
    assert.ok(!n.spec?.taints?.some((t) => t.key === "node.kubernetes.io/unreachable"));
    await waitFor("the DaemonSet pod of the node back up to be reported Ready", async () => (await dsReady(name)) === "True");

    const talos = new EventEmitter();
    const att = sim.attachLifecycle(talos);
    try {
      talos.emit("down", { name }, { reason: "upgrade", cordon: true });
      await att.idle();
      n = await core.readNode({ name });
      assert.equal(n.spec?.unschedulable, true);
      assert.equal(n.metadata?.annotations?.[TALOS_CORDONED_ANNOTATION], "true");
      assert.equal(n.status?.conditions?.find((c) => c.type === "Ready")?.status, "Unknown");
      // The Talos side hears when the kubelet's Ready report of the boot is in (the bench's node times), and then it is.
      const calls: Array<Promise<string>> = [];
      const reported = () => {
        calls.push(core.readNode({ name }).then((r) => `${r.status?.nodeInfo?.bootID} ${r.status?.conditions?.find((c) => c.type === "Ready")?.status}`));
      };
      talos.emit("up", name, { version: "v1.13.1", bootId: "boot-3", reported });
      await att.idle();
      assert.deepEqual(await Promise.all(calls), ["boot-3 True"], "called once, with the report in");
      n = await core.readNode({ name });
      assert.equal(n.spec?.unschedulable, undefined);
      assert.equal(n.metadata?.annotations?.[TALOS_CORDONED_ANNOTATION], undefined);
      assert.equal(n.status?.nodeInfo?.osImage, "Talos (v1.13.1)");
      assert.equal(n.status?.conditions?.find((c) => c.type === "Ready")?.status, "True");
      // A node cordoned by an operator stays cordoned when Talos boots it.
      await sim.nodes.cordon(name);
      talos.emit("up", name, { version: "v1.13.1", bootId: "boot-4" });
      await att.idle();
      n = await core.readNode({ name });
      assert.equal(n.spec?.unschedulable, true);
      await sim.nodes.uncordon(name);
    } finally {
      att.detach();
    }
  });

  it("issue 24: a control plane's mirror pods follow its static pods (a new image replaces the pod, Ready as the static pod) and the Node its kubelet's version", async () => {
    const node = machines[0].name;
    const apiserver = () => core.readNamespacedPod({ name: `kube-apiserver-${node}`, namespace: "kube-system" });
    const ready = (p: k8s.V1Pod) => p.status?.conditions?.find((c) => c.type === "Ready")?.status;
    const old = await apiserver();
    assert.equal(old.spec?.containers[0].image, "registry.k8s.io/kube-apiserver:v1.34.1");
    assert.equal(ready(old), "True", "registered Running and Ready");
    assert.equal(old.status?.hostIP, machines[0].address, "upgrade-k8s finds the pod by the node's IP");
    // the static pod's own status (host network: the node's IP), never one the kubelet emulator made up for a pod it ran
    assert.equal(old.status?.podIP, machines[0].address);
    const talos = new EventEmitter();
    const att = sim.attachLifecycle(talos);
    try {
      const pod = { component: "kube-apiserver", image: "registry.k8s.io/kube-apiserver:v1.35.2", configVersion: "2" };
      talos.emit("staticPod", { name: node }, { ...pod, ready: false });
      await att.idle();
      let p = await apiserver();
      assert.notEqual(p.metadata?.uid, old.metadata?.uid, "a new mirror pod, as the kubelet makes for a changed static pod");
      assert.equal(p.spec?.containers[0].image, pod.image);
      assert.equal(p.metadata?.annotations?.["talos.dev/config-version"], "2");
      assert.equal(p.metadata?.labels?.["app.kubernetes.io/version"], "1.35.2");
      assert.equal(ready(p), "False");
      assert.equal(p.status?.podIP, machines[0].address);
      talos.emit("staticPod", { name: node }, { ...pod, ready: true });
      await att.idle();
      p = await apiserver();
      assert.equal(ready(p), "True");
      assert.equal(p.status?.containerStatuses?.[0].image, pod.image);
      // the node going down marks its mirror pods not ready; back up, they are ready again
      talos.emit("down", { name: node }, { reason: "reboot", cordon: false });
      await att.idle();
      assert.equal(ready(await apiserver()), "False");
      talos.emit("up", { name: node }, { version: "v1.12.4", bootId: "cp-boot-2" });
      await att.idle();
      assert.equal(ready(await apiserver()), "True");
      // the kubelet: stopped, nothing changes; started on another image, the Node reports its version
      talos.emit("kubelet", { name: workers[0] }, { version: "v1.34.1", running: false });
      talos.emit("kubelet", { name: workers[0] }, { version: "v1.35.2", running: true });
      await att.idle();
      assert.equal((await core.readNode({ name: workers[0] })).status?.nodeInfo?.kubeletVersion, "v1.35.2");
    } finally {
      att.detach();
    }
  });

  it("issue 24: end to end on the wire: a machine config applied to a simulated Talos node shows in its mirror pod and its Node", async () => {
    const [cp, w] = [machines[0], machines[1]];
    const talos = await TalosNodeSim.start({
      nodes: [cp, w].map((m) => ({ name: m.name, address: m.address, role: m.role, version: m.talosVersion })),
      timing: { staticPodRestartMs: 20, kubeletRestartMs: 20 },
    });
    const att = sim.attachLifecycle(talos);
    const api = createTalosApi(talos.talosconfig());
    // the node's own report that the restarted static pod is ready / the kubelet runs again
    const reported = (what: "staticPod" | "kubelet", node: string) => new Promise<void>((resolve) => {
      const events: EventEmitter = talos;
      const on = (n: { name: string }, x: { ready?: boolean; running?: boolean }) => {
        if (n.name !== node || !(x.ready ?? x.running)) return;
        events.off(what, on);
        resolve();
      };
      events.on(what, on);
    });
    try {
      let done = reported("staticPod", cp.name);
      await applyConfigurationNoReboot(api.client, cp.address, patchKubernetesImages(await readMachineConfig(api.client, cp.address), { scheduler: "registry.k8s.io/kube-scheduler:v1.35.2" }));
      await done;
      await att.idle();
      const pod = await core.readNamespacedPod({ name: `kube-scheduler-${cp.name}`, namespace: "kube-system" });
      assert.equal(pod.spec?.containers[0].image, "registry.k8s.io/kube-scheduler:v1.35.2");
      assert.equal(pod.metadata?.annotations?.["talos.dev/config-version"], "2");
      assert.equal(pod.status?.conditions?.find((c) => c.type === "Ready")?.status, "True");
      done = reported("kubelet", w.name);
      await applyConfigurationNoReboot(api.client, w.address, patchKubernetesImages(await readMachineConfig(api.client, w.address), { kubelet: "ghcr.io/siderolabs/kubelet:v1.35.3" }));
      await done;
      await att.idle();
      assert.equal((await core.readNode({ name: w.name })).status?.nodeInfo?.kubeletVersion, "v1.35.3");
    } finally {
      api.close();
      att.detach();
      await talos.stop();
    }
  });

  it("answers 429 to an eviction blocked by a PDB, admits it once the PDB allows, and the ReplicaSet replaces the pod", async () => {
    const sel = { matchLabels: { "app.kubernetes.io/name": "sim-workload" } };
    const count = sim.workloads().replicaSetPods;
    assert.equal(count, 2 * workers.length);
    await policy.createNamespacedPodDisruptionBudget({ namespace: WORKLOAD_NAMESPACE, body: { metadata: { name: "ks-pdb" }, spec: { minAvailable: count, selector: sel } } });
    try {
      await waitFor("PDB status", async () => {
        const p = await policy.readNamespacedPodDisruptionBudget({ name: "ks-pdb", namespace: WORKLOAD_NAMESPACE });
        return p.status?.observedGeneration === p.metadata?.generation && p.status?.currentHealthy === count ? p : undefined;
      });
      const pdb = await policy.readNamespacedPodDisruptionBudget({ name: "ks-pdb", namespace: WORKLOAD_NAMESPACE });
      assert.equal(pdb.status?.disruptionsAllowed, 0);
      assert.equal(pdb.status?.desiredHealthy, count);
      assert.equal(pdb.status?.expectedPods, count);
      assert.equal(pdb.status?.conditions?.find((c) => c.type === "DisruptionAllowed")?.reason, "InsufficientPods");
      const pods = (await core.listNamespacedPod({ namespace: WORKLOAD_NAMESPACE, labelSelector: "app.kubernetes.io/name=sim-workload" })).items;
      const victim = pods.find((p) => p.spec?.nodeName === workers[0])!;
      const evict = () => core.createNamespacedPodEviction({ name: victim.metadata!.name!, namespace: WORKLOAD_NAMESPACE, body: { metadata: { name: victim.metadata!.name!, namespace: WORKLOAD_NAMESPACE } } });
      await assert.rejects(evict(), (err: any) => err.code === 429 && /disruption budget/.test(JSON.stringify(err.body)));

      await policy.patchNamespacedPodDisruptionBudget({ name: "ks-pdb", namespace: WORKLOAD_NAMESPACE, body: { spec: { minAvailable: count - 1 } } }, k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
      await waitFor("the PDB to allow one disruption", async () => {
        const p = await policy.readNamespacedPodDisruptionBudget({ name: "ks-pdb", namespace: WORKLOAD_NAMESPACE });
        return p.status?.observedGeneration === p.metadata?.generation && p.status?.disruptionsAllowed === 1;
      });
      await evictAndWait(victim, evict, pods);
    } finally {
      await policy.deleteNamespacedPodDisruptionBudget({ name: "ks-pdb", namespace: WORKLOAD_NAMESPACE });
    }

    async function evictAndWait(p: k8s.V1Pod, evict: () => Promise<unknown>, pods: k8s.V1Pod[]) {
      await evict();
      await waitFor("the evicted pod to be gone", async () => {
        try {
          const cur = await core.readNamespacedPod({ name: p.metadata!.name!, namespace: WORKLOAD_NAMESPACE });
          return cur.metadata?.uid !== p.metadata?.uid;
        } catch (err: any) {
          return err.code === 404;
        }
      }, 30000);
      await waitFor("a replacement workload pod", async () => {
        const now = (await core.listNamespacedPod({ namespace: WORKLOAD_NAMESPACE, labelSelector: "app.kubernetes.io/name=sim-workload" })).items;
        const live = now.filter((x) => !x.metadata?.deletionTimestamp && x.status?.phase === "Running");
        const fresh = live.filter((x) => !pods.some((old) => old.metadata?.uid === x.metadata?.uid));
        return live.length === count && fresh.length === 1;
      });
    }
  });

  it("drains a node like Talos: workload pods move to other nodes, the DaemonSet pod stays", async () => {
    const node = workers[0];
    const report = await sim.drainForTalos(node, { pollMs: 100, retryDelayMs: 200 });
    assert.equal(report.failed.length, 0, JSON.stringify(report.failed));
    assert.ok(report.evicted.length >= 1, JSON.stringify(report));
    assert.ok(report.skipped.some((s) => s.why === "DaemonSet"));
    const n = await core.readNode({ name: node });
    assert.equal(n.spec?.unschedulable, true);
    assert.equal(n.metadata?.annotations?.[TALOS_CORDONED_ANNOTATION], "true");
    await waitFor("workload pods to be re-created on other nodes", async () => {
      const pods = (await core.listNamespacedPod({ namespace: WORKLOAD_NAMESPACE })).items.filter((p) => !p.metadata?.deletionTimestamp);
      const rs = pods.filter((p) => p.metadata?.ownerReferences?.[0].kind === "ReplicaSet");
      const ds = pods.filter((p) => p.metadata?.ownerReferences?.[0].kind === "DaemonSet");
      return rs.length === 2 * workers.length && rs.every((p) => p.spec?.nodeName !== node && p.status?.phase === "Running") && ds.some((p) => p.spec?.nodeName === node);
    });
    await sim.nodes.uncordon(node, { onlyIfTalos: true });
    assert.equal((await core.readNode({ name: node })).spec?.unschedulable, undefined);
  });

  it("leaves a Job pod Unschedulable while no worker can take it, and binds it when one can", async () => {
    const ns = await freshNamespace(cp, "ks");
    for (const w of workers) await sim.nodes.cordon(w);
    try {
      await batch.createNamespacedJob({ namespace: ns, body: jobBody("waits", "echo scheduled") });
      const pending = await waitFor("an Unschedulable pod", async () => {
        const [p] = await jobPods(ns, "waits");
        return p?.status?.conditions?.some((c) => c.type === "PodScheduled" && c.status === "False" && c.reason === "Unschedulable") ? p : undefined;
      });
      assert.equal(pending.spec?.nodeName, undefined);
      assert.equal(pending.status?.phase, "Pending");
      assert.match(pending.status?.conditions?.find((c) => c.type === "PodScheduled")?.message ?? "", /^0\/\d+ nodes are available: .*unschedulable/);
      await sim.nodes.uncordon(workers[1]);
      const job = await waitJob(ns, "waits");
      assert.ok(cond(job, "Complete"));
      assert.equal((await jobPods(ns, "waits"))[0].spec?.nodeName, workers[1]);
    } finally {
      for (const w of workers) await sim.nodes.uncordon(w);
    }
  });

  it("fails its start at once when the API server refuses its credentials (its Node informer would retry for ever)", async function () {
    this.timeout(30000);
    const kc = new k8s.KubeConfig();
    kc.loadFromString(cp.kubeconfig);
    const user = kc.getCurrentUser()!;
    kc.users = kc.users.map((u) => (u.name === user.name ? { name: u.name, token: "not-a-token" } : u));
    const t0 = Date.now();
    await assert.rejects(
      startKubeSim({ kubeconfig: kc.exportConfig(), machines: [{ name: `ks-${run}-refused`, role: "worker", address: "10.6.0.9", talosVersion: "v1.12.4" }] }),
      /Unauthorized|401/,
    );
    assert.ok(Date.now() - t0 < 20000, `refused after ${Date.now() - t0} ms`);
  });

  it("survives an API server restart during its watches and still completes a Job afterwards", async () => {
    const before = sim.stats();
    await cp.restartApiServer(500);
    // kube-controller-manager's informers reconnect with client-go's back-off (up to 30 s): under load its
    // ServiceAccount controller gave the new namespace its default account after the usual 30 s (a CI run failed so).
    // The Job below is allowed 90 s; so is the account it needs.
    const ns = await freshNamespace(cp, "ks", 90000);
    await batch.createNamespacedJob({ namespace: ns, body: jobBody("after-restart", "echo fine") });
    const job = await waitJob(ns, "after-restart", 90000);
    assert.ok(cond(job, "Complete"));
    const after = sim.stats();
    assert.ok(after.rewatches + after.relists > before.rewatches + before.relists, "the watches were re-established");
  });
});
