// Every Node of the cluster, kept current by one list + watch (client-go's informer, on the port's SetObserver): the
// rollout reads machines from it and waits on it — for a node to come back Ready, for an interrupted run's nodes —
// instead of listing every Node every half second (at 1,000 nodes that is megabytes per poll against the API server).
// Nodes are trimmed to what a Machine needs as they arrive, so the cache stays small; an update that changes nothing a
// Machine holds (a heartbeat, another controller's annotation) wakes no one; and each Node's Machine is built once per
// update, not once per change anywhere in the cluster (at 1,000 nodes, rebuilding all of them on every event made
// the provider allocate ~3 MB/s and peak at 600 MB).
import type * as k8s from "./k8s";
import type { Machine, MachineWatch } from "../rollout/ports";
import { KubeClients } from "./client";
import { collator, listTrimmedNodes, machineOf, sameTaints, trimNode } from "./nodes";
import { SetObserver } from "./watch";

/** Two trimmed Nodes that give the same Machine and the same placement answer (their blocking taints). */
function sameMachine(a: k8s.V1Node, b: k8s.V1Node): boolean {
  const ma: Record<string, unknown> = { ...machineOf(a) }, mb: Record<string, unknown> = { ...machineOf(b) };
  const keys = Object.keys(ma);
  return keys.length === Object.keys(mb).length && keys.every((k) => ma[k] === mb[k]) && sameTaints(a.spec?.taints, b.spec?.taints);
}

/**
 * The trimmed Nodes of the port's live Node watches, for the drain's placement check (placement.ts): during a run it
 * asks the run's own watch whether another node could take a pod instead of reading Node pages on the node's critical
 * path (issue 23). Undefined when no watch has listed yet, or every one failed or stopped: then the drain reads.
 */
export class LiveNodes {
  private readonly sources = new Set<() => readonly k8s.V1Node[] | undefined>();

  add(source: () => readonly k8s.V1Node[] | undefined): () => void {
    this.sources.add(source);
    return () => this.sources.delete(source);
  }

  nodes(): readonly k8s.V1Node[] | undefined {
    for (const source of this.sources) {
      const nodes = source();
      if (nodes !== undefined) return nodes;
    }
    return undefined;
  }
}

export function watchMachines(c: KubeClients, log: (line: string) => void, live?: LiveNodes): MachineWatch {
  // The Machine of each trimmed Node the observer holds (the observer replaces the object when the Node changes).
  const machineFor = new WeakMap<k8s.V1Node, Machine>();
  const toMachine = (node: k8s.V1Node): Machine => {
    let m = machineFor.get(node);
    if (m === undefined) machineFor.set(node, (m = machineOf(node)));
    return m;
  };
  const observer = new SetObserver<k8s.V1Node>({
    clients: c,
    path: "/api/v1/nodes",
    list: () => listTrimmedNodes(c),
    trim: trimNode,
    same: sameMachine,
    // The machines' order (byMachineName), kept by the observer between events: sorting 1,000 machines with a
    // collator on every Node event was most of what one cost.
    order: (a, b) => collator.compare(a.metadata?.name ?? "", b.metadata?.name ?? ""),
    log,
  });
  // The Machines are built when asked for, once per generation: a wave's Node events (cordons, reports, taints) come
  // many times between two reads, and a 1,000-machine array for each was ~2 % of what a rollout allocated (issue 23).
  let latest: { generation: number; machines: Machine[] } | undefined;
  let latestNodes: readonly k8s.V1Node[] | undefined;
  const current = (): Machine[] | undefined => {
    if (latestNodes === undefined) return undefined;
    if (latest?.generation !== generation) latest = { generation, machines: latestNodes.map(toMachine) };
    return latest.machines;
  };
  let generation = 0;
  let failure: unknown;
  let stopped = false;
  const waiters = new Set<() => void>();
  const wakeAll = () => {
    for (const w of [...waiters]) w();
  };
  const leave = live?.add(() => (stopped ? undefined : latestNodes)) ?? (() => undefined);
  const first = (async () => {
    try {
      for (let s = await observer.next(); s; s = await observer.next()) {
        latestNodes = s.objects;
        generation++;
        wakeAll();
      }
    } catch (err) {
      failure = err;
    } finally {
      stopped = true;
      leave();
      wakeAll();
    }
  })();
  void first;

  const ready = (): Promise<void> =>
    latestNodes !== undefined || stopped ? Promise.resolve() : new Promise<void>((resolve) => {
      const w = () => {
        waiters.delete(w);
        resolve();
      };
      waiters.add(w);
    });

  return {
    async machines() {
      await ready();
      const machines = current();
      if (machines === undefined) throw failure ?? new Error("the Node watch stopped before its first list");
      return machines;
    },
    get generation() {
      return generation;
    },
    get failed() {
      return failure !== undefined || (stopped && latestNodes === undefined);
    },
    changed(since: number, signal?: AbortSignal): Promise<void> {
      if (generation !== since || stopped || signal?.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          waiters.delete(w);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const w = () => {
          if (generation !== since || stopped) done();
        };
        waiters.add(w);
        signal?.addEventListener("abort", done, { once: true });
      });
    },
    stop() {
      leave();
      observer.stop();
    },
  };
}
