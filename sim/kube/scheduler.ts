// Node choice for the pods the sim creates (Job pods, workload pods) and binding of pods created without a node:
// a node is eligible when it is one of the sim's nodes, Ready, schedulable and its NoSchedule/NoExecute taints are
// tolerated by the pod. Job pods go round-robin; workload pods go to the least loaded node.
import { Reflector } from "./reflector";
import { Node, Pod, nodeReady } from "./types";

interface Taint {
  key: string;
  value?: string;
  effect: string;
}
interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

export function tolerates(tolerations: Toleration[] | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.operator === "Exists") return !t.key || t.key === taint.key;
    return t.key === taint.key && (t.value ?? "") === (taint.value ?? "");
  });
}

export function schedulable(node: Node, podSpec: any): boolean {
  if (!nodeReady(node) || node.spec?.unschedulable) return false;
  const taints: Taint[] = node.spec?.taints ?? [];
  return taints.every((t) => t.effect === "PreferNoSchedule" || tolerates(podSpec?.tolerations, t));
}

export class NodeScheduler {
  private rr = 0;

  constructor(private readonly nodes: Reflector<Node>, private readonly owned: ReadonlySet<string>) {}

  eligible(podSpec: any, exclude?: string): Node[] {
    const out: Node[] = [];
    for (const name of this.owned) {
      if (name === exclude) continue;
      const n = this.nodes.get(undefined, name);
      if (n && schedulable(n, podSpec)) out.push(n);
    }
    return out;
  }

  /** Round-robin over eligible nodes (nodeSelector honoured). */
  pick(podSpec: any): string | undefined {
    const nodes = this.eligible(podSpec).filter((n) => matchesSelector(n, podSpec));
    if (!nodes.length) return undefined;
    return nodes[this.rr++ % nodes.length].metadata.name;
  }

  /** The eligible node with the fewest pods according to `load`, other than `exclude` when there is a choice. */
  leastLoaded(podSpec: any, load: (node: string) => number, exclude?: string): string | undefined {
    let nodes = this.eligible(podSpec, exclude).filter((n) => matchesSelector(n, podSpec));
    if (!nodes.length && exclude) nodes = this.eligible(podSpec).filter((n) => matchesSelector(n, podSpec));
    let best: string | undefined;
    let bestLoad = Infinity;
    for (const n of nodes) {
      const l = load(n.metadata.name);
      if (l < bestLoad) {
        best = n.metadata.name;
        bestLoad = l;
      }
    }
    return best;
  }

  /** The message the scheduler puts on an unschedulable pod's PodScheduled condition. */
  unschedulableMessage(podSpec: any): string {
    let notReady = 0;
    let unschedulable = 0;
    let tainted = 0;
    let total = 0;
    for (const name of this.owned) {
      const n = this.nodes.get(undefined, name);
      if (!n) continue;
      total++;
      if (!nodeReady(n)) notReady++;
      else if (n.spec?.unschedulable) unschedulable++;
      else if (!schedulable(n, podSpec) || !matchesSelector(n, podSpec)) tainted++;
    }
    const parts: string[] = [];
    if (notReady) parts.push(`${notReady} node(s) had untolerated taint {node.kubernetes.io/not-ready: }`);
    if (unschedulable) parts.push(`${unschedulable} node(s) were unschedulable`);
    if (tainted) parts.push(`${tainted} node(s) didn't match Pod's node affinity/selector or had untolerated taints`);
    return `0/${total} nodes are available: ${parts.join(", ")}. preemption: 0/${total} nodes are available: ${total} Preemption is not helpful for scheduling.`;
  }
}

function matchesSelector(node: Node, podSpec: any): boolean {
  const sel: Record<string, string> = podSpec?.nodeSelector ?? {};
  const labels = node.metadata.labels ?? {};
  return Object.entries(sel).every(([k, v]) => labels[k] === v);
}

export function isUnscheduledPod(pod: Pod): boolean {
  return !pod.spec?.nodeName && !pod.metadata.deletionTimestamp && (!pod.spec?.schedulerName || pod.spec.schedulerName === "default-scheduler");
}

/**
 * The scheduler for pods created without spec.nodeName (e.g. a Job pod created while no node was eligible): binds
 * them through pods/binding when a node is eligible, else marks them PodScheduled=False/Unschedulable and retries
 * when nodes change.
 */
export class PodBinder {
  private readonly marked = new Set<string>();
  private timer?: NodeJS.Timeout;
  private busy = false;
  private stopped = false;
  bound = 0;

  constructor(
    private readonly o: {
      rest: import("./rest").Rest;
      pods: Reflector<Pod>;
      nodes: Reflector<Node>;
      scheduler: NodeScheduler;
      log: (m: string) => void;
    },
  ) {}

  start(): void {
    this.o.pods.on("add", (p) => isUnscheduledPod(p) && this.kick());
    this.o.nodes.on("update", () => this.kick());
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private kick(delay = 0): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, delay);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    if (this.busy) return this.kick(200);
    this.busy = true;
    let pending = 0;
    try {
      for (const pod of this.o.pods.list()) {
        if (!isUnscheduledPod(pod) || pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") continue;
        const ns = pod.metadata.namespace!;
        const name = pod.metadata.name;
        const node = this.o.scheduler.pick(pod.spec);
        try {
          if (node) {
            await this.o.rest.post(`/api/v1/namespaces/${ns}/pods/${name}/binding`, {
              apiVersion: "v1", kind: "Binding", metadata: { name, namespace: ns, uid: pod.metadata.uid }, target: { apiVersion: "v1", kind: "Node", name: node },
            });
            this.bound++;
          } else {
            pending++;
            if (!this.marked.has(pod.metadata.uid)) {
              this.marked.add(pod.metadata.uid);
              await this.o.rest.mergePatch(`/api/v1/namespaces/${ns}/pods/${name}/status`, {
                metadata: { uid: pod.metadata.uid },
                status: { conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: this.o.scheduler.unschedulableMessage(pod.spec), lastProbeTime: null, lastTransitionTime: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace(/\.000Z$/, "Z") }] },
              });
            }
          }
        } catch (err) {
          pending++;
          this.o.log(`scheduler: pod ${ns}/${name}: ${(err as Error).message}`);
        }
      }
    } finally {
      this.busy = false;
    }
    if (pending) this.kick(2000);
  }
}
