// Workload pods so drains have something to move: a ReplicaSet "sim-workload" with `perNode` pods per eligible
// node and a DaemonSet "sim-node-agent" with one pod per node (drains skip DaemonSet pods). The sim plays both
// controllers: an evicted/deleted ReplicaSet pod is replaced at once on the least loaded other schedulable Ready
// node (capacity is kept), a deleted DaemonSet pod is re-created on its node. The ReplicaSet and DaemonSet objects
// are real API objects (kubectl drain looks the DaemonSet up); their status is written once they are all Running.
import { Reflector } from "./reflector";
import { Rest, isAlreadyExists, isNotFound, mapLimit, retrying } from "./rest";
import { NodeScheduler } from "./scheduler";
import { Node, Pod, controllerOf, isTerminal } from "./types";

export const WORKLOAD_NAMESPACE = "sim-workloads";
export const WORKLOAD_RS = "sim-workload";
export const WORKLOAD_DS = "sim-node-agent";
const RS_HASH = "5d8f7b9c6";
const DS_HASH = "7c9d5f8b4";

export interface WorkloadOptions {
  rest: Rest;
  pods: Reflector<Pod>;
  nodes: Reflector<Node>;
  scheduler: NodeScheduler;
  owned: readonly string[];
  perNode: number;
  daemonSet: boolean;
  namespace?: string;
  concurrency?: number;
  log: (m: string) => void;
}

const pauseContainer = [{ name: "app", image: "registry.k8s.io/pause:3.10", resources: {} }];

export class Workloads {
  readonly namespace: string;
  private rsUid = "";
  private dsUid = "";
  private replicas = 0;
  private pendingRs = 0;
  private readonly pendingDs = new Set<string>();
  private scheduled = false;
  private readonly recent = new Map<string, Pod>();
  private readonly lost = new Set<string>();
  private vacated: string[] = [];
  private stopped = false;
  private reconciling: Promise<void> = Promise.resolve();
  podsCreated = 0;

  constructor(private readonly o: WorkloadOptions) {
    this.namespace = o.namespace ?? WORKLOAD_NAMESPACE;
  }

  private rsTemplateSpec() {
    return { containers: pauseContainer, terminationGracePeriodSeconds: 30, restartPolicy: "Always" };
  }

  private dsTemplateSpec() {
    return {
      containers: pauseContainer.map((c) => ({ ...c, name: "agent" })),
      terminationGracePeriodSeconds: 30,
      restartPolicy: "Always",
      tolerations: [{ operator: "Exists" }],
    };
  }

  /** Creates the namespace and owner objects, then the pods; resolves once the pods are created. */
  async start(): Promise<void> {
    const { rest } = this.o;
    const ns = this.namespace;
    if (this.o.perNode <= 0 && !this.o.daemonSet) return;
    try {
      await rest.post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const eligible = this.o.scheduler.eligible(this.rsTemplateSpec()).length;
    this.replicas = this.o.perNode * eligible;
    const ensure = async (path: string, body: any): Promise<string> => {
      try {
        return (await rest.post(path, body)).metadata.uid;
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const cur = await rest.get(`${path}/${body.metadata.name}`);
        if (cur.spec.replicas !== undefined && body.spec.replicas !== undefined && cur.spec.replicas !== body.spec.replicas) {
          cur.spec.replicas = body.spec.replicas;
          await rest.put(`${path}/${body.metadata.name}`, cur);
        }
        return cur.metadata.uid;
      }
    };
    if (this.o.perNode > 0) {
      this.rsUid = await ensure(`/apis/apps/v1/namespaces/${ns}/replicasets`, {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: { name: WORKLOAD_RS, labels: { "app.kubernetes.io/name": WORKLOAD_RS } },
        spec: {
          replicas: this.replicas,
          selector: { matchLabels: { "app.kubernetes.io/name": WORKLOAD_RS, "pod-template-hash": RS_HASH } },
          template: { metadata: { labels: { "app.kubernetes.io/name": WORKLOAD_RS, "pod-template-hash": RS_HASH } }, spec: this.rsTemplateSpec() },
        },
      });
    }
    if (this.o.daemonSet) {
      this.dsUid = await ensure(`/apis/apps/v1/namespaces/${ns}/daemonsets`, {
        apiVersion: "apps/v1",
        kind: "DaemonSet",
        metadata: { name: WORKLOAD_DS, labels: { "app.kubernetes.io/name": WORKLOAD_DS } },
        spec: {
          selector: { matchLabels: { "app.kubernetes.io/name": WORKLOAD_DS } },
          template: { metadata: { labels: { "app.kubernetes.io/name": WORKLOAD_DS, "controller-revision-hash": DS_HASH } }, spec: this.dsTemplateSpec() },
        },
      });
    }
    const trigger = (p: Pod) => {
      const ref = controllerOf(p);
      if (!ref || (ref.uid !== this.rsUid && ref.uid !== this.dsUid)) return;
      // Remember the node a ReplicaSet pod left (evicted/deleted) so its replacement goes elsewhere.
      if (ref.uid === this.rsUid && (p.metadata.deletionTimestamp || isTerminal(p)) && !this.lost.has(p.metadata.uid)) {
        this.lost.add(p.metadata.uid);
        this.vacated.push(p.spec.nodeName);
      }
      this.kick();
    };
    this.o.pods.on("update", trigger);
    this.o.pods.on("delete", (p) => {
      this.recent.delete(p.metadata.name);
      trigger({ ...p, metadata: { ...p.metadata, deletionTimestamp: p.metadata.deletionTimestamp ?? "deleted" } });
      this.lost.delete(p.metadata.uid);
    });
    this.o.nodes.on("update", () => this.dsUid && this.kick());
    await this.reconcile();
  }

  stop(): Promise<void> {
    this.stopped = true;
    return this.reconciling;
  }

  /** The workload pods that count towards the owners (not terminal, not being deleted). */
  livePods(): { rs: Pod[]; ds: Pod[] } {
    const rs: Pod[] = [];
    const ds: Pod[] = [];
    const pending: Pod[] = [];
    for (const [name, p] of this.recent) {
      if (this.o.pods.get(this.namespace, name)) this.recent.delete(name);
      else pending.push(p);
    }
    for (const p of [...this.o.pods.list(), ...pending]) {
      if (p.metadata.namespace !== this.namespace || p.metadata.deletionTimestamp || isTerminal(p)) continue;
      const uid = controllerOf(p)?.uid;
      if (uid && uid === this.rsUid) rs.push(p);
      else if (uid && uid === this.dsUid) ds.push(p);
    }
    return { rs, ds };
  }

  expected(): number {
    return this.replicas + (this.dsUid ? this.o.owned.length : 0);
  }

  private kick(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.reconciling = this.reconciling.then(() => this.reconcile()).catch((err) => this.o.log(`workloads: ${(err as Error).message}`));
    });
  }

  private podBody(kind: "ReplicaSet" | "DaemonSet", node: string): any {
    const rs = kind === "ReplicaSet";
    const name = rs ? WORKLOAD_RS : WORKLOAD_DS;
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        generateName: `${name}-`,
        namespace: this.namespace,
        labels: rs
          ? { "app.kubernetes.io/name": WORKLOAD_RS, "pod-template-hash": RS_HASH }
          : { "app.kubernetes.io/name": WORKLOAD_DS, "controller-revision-hash": DS_HASH, "pod-template-generation": "1" },
        ownerReferences: [{ apiVersion: "apps/v1", kind, name, uid: rs ? this.rsUid : this.dsUid, controller: true, blockOwnerDeletion: true }],
      },
      spec: { ...(rs ? this.rsTemplateSpec() : this.dsTemplateSpec()), nodeName: node },
    };
  }

  private async create(body: any): Promise<void> {
    try {
      const pod = await retrying(`workloads: create pod on ${body.spec.nodeName}`, () => this.o.rest.post<Pod>(`/api/v1/namespaces/${this.namespace}/pods`, body), { isStopped: () => this.stopped });
      // Counted until the watch delivers it (like a controller's expectations), so it is not created twice.
      this.recent.set(pod.metadata.name, pod);
      this.podsCreated++;
    } catch (err) {
      if (!this.stopped && !isNotFound(err)) this.o.log((err as Error).message);
    }
  }

  private async reconcile(): Promise<void> {
    if (this.stopped) return;
    const { rs, ds } = this.livePods();
    const jobs: (() => Promise<void>)[] = [];
    if (this.rsUid) {
      const load = new Map<string, number>();
      for (const p of rs) load.set(p.spec.nodeName, (load.get(p.spec.nodeName) ?? 0) + 1);
      const missing = this.replicas - rs.length - this.pendingRs;
      for (let i = 0; i < missing; i++) {
        const node = this.o.scheduler.leastLoaded(this.rsTemplateSpec(), (n) => load.get(n) ?? 0, this.vacated.shift());
        if (!node) break;
        load.set(node, (load.get(node) ?? 0) + 1);
        this.pendingRs++;
        jobs.push(() => this.create(this.podBody("ReplicaSet", node)).finally(() => this.pendingRs--));
      }
    }
    this.vacated = [];
    if (this.dsUid) {
      const have = new Set(ds.map((p) => p.spec.nodeName));
      for (const node of this.o.owned) {
        if (have.has(node) || this.pendingDs.has(node) || !this.o.nodes.get(undefined, node)) continue;
        this.pendingDs.add(node);
        jobs.push(() => this.create(this.podBody("DaemonSet", node)).finally(() => this.pendingDs.delete(node)));
      }
    }
    await mapLimit(jobs, this.o.concurrency ?? 16, (f) => f());
  }

  /** Writes ReplicaSet/DaemonSet status from the pods (what their controllers report). */
  async writeOwnerStatus(): Promise<void> {
    const { rs, ds } = this.livePods();
    const ready = (ps: Pod[]) => ps.filter((p) => p.status?.phase === "Running").length;
    const ns = this.namespace;
    const put = async (path: string, status: (cur: any) => any) => {
      await retrying(`workloads: status of ${path}`, async () => {
        const cur = await this.o.rest.get(path);
        cur.status = status(cur);
        await this.o.rest.put(`${path}/status`, cur);
      });
    };
    if (this.rsUid) {
      await put(`/apis/apps/v1/namespaces/${ns}/replicasets/${WORKLOAD_RS}`, (cur) => ({
        replicas: rs.length, fullyLabeledReplicas: rs.length, readyReplicas: ready(rs), availableReplicas: ready(rs), observedGeneration: cur.metadata.generation,
      }));
    }
    if (this.dsUid) {
      await put(`/apis/apps/v1/namespaces/${ns}/daemonsets/${WORKLOAD_DS}`, (cur) => ({
        currentNumberScheduled: ds.length, desiredNumberScheduled: this.o.owned.length, numberMisscheduled: 0, numberReady: ready(ds),
        numberAvailable: ready(ds), updatedNumberScheduled: ds.length, observedGeneration: cur.metadata.generation,
      }));
    }
  }
}
