// The seam between the Talos simulator (sim/talos/) and the Kubernetes side: the Talos sim emits "down" when a
// machine goes away (upgrade or reboot) and "up" when it has booted (with its new version and boot id); the kube
// sim flips the matching Node object (Node name = machine name).
//   down: Ready → Unknown (NodeStatusUnknown, unreachable taint) and, if `cordon`, cordon with talos.dev/cordoned;
//   up:   osImage "Talos (<version>)", new bootID, Ready → True, uncordon when Talos cordoned it (annotation present).
//   staticPod: the control plane's mirror pod follows (a new image replaces it; Ready as the static pod);
//   kubelet: the Node's nodeInfo.kubeletVersion follows a kubelet that restarted on another image.
// Events of one node are applied in order; `idle()` resolves when everything received so far has been applied.
// Kubelet timing knobs (read at each event, so tests may change them at any time): a Node that stays Ready with its
// old status while the machine reboots (the node lifecycle controller only marks a Node after its grace period, so a
// fast reboot is never seen), and a kubelet that reports the booted machine late.
import { NodeSim } from "./nodes";
import type { StaticPodMirrors } from "./staticpods";

export interface KubeletKnobs {
  /** While the machine reboots, the Node is not marked down: it stays Ready with the pre-reboot osImage. */
  staleWhileDown: boolean;
  /** After the machine has booted, the kubelet reports (new osImage, Ready) only this much later. */
  reportDelayMs: number;
}

export interface NodeDownInfo {
  reason: "upgrade" | "reboot";
  /** Talos cordons before a legacy upgrade (talos.dev/cordoned). */
  cordon: boolean;
}

export interface NodeUpInfo {
  /** The Talos version the machine booted, e.g. "v1.13.2". */
  version: string;
  bootId: string;
  /**
   * Uncordon on boot. Omitted: uncordon only if Talos cordoned the node (talos.dev/cordoned present), which is what
   * Talos does; true/false force the decision of the emitter (still only for a Talos-cordoned node when true).
   */
  uncordon?: boolean;
  /** Called once the kubelet's Ready report of this boot is in the API server (the sim's node times, bench/waves.ts). */
  reported?: () => void;
}

/** A node by name, or the Talos sim's node object (anything with a `name`). */
export type NodeRef = string | { readonly name: string };

/** A control-plane static pod as the Talos sim reports it (sim/talos/kubernetes.ts SimStaticPod). */
export interface StaticPodInfo {
  component: "kube-apiserver" | "kube-controller-manager" | "kube-scheduler";
  image: string;
  ready: boolean;
  configVersion: string;
}

/** The kubelet as the Talos sim reports it: stopped while it restarts, then running on `version`. */
export interface KubeletInfo {
  version: string;
  running: boolean;
}

/** What the Talos sim exposes (an EventEmitter such as sim/talos's TalosNodeSim fits). */
export interface NodeLifecycleEvents {
  /** Optional: a control plane's static pod restarted or became ready (the mirror pod follows). */
  on(event: "staticPod", fn: (node: NodeRef, pod: StaticPodInfo) => void): unknown;
  /** Optional: the node's kubelet stopped or started (the Node's kubeletVersion follows). */
  on(event: "kubelet", fn: (node: NodeRef, state: KubeletInfo) => void): unknown;
  on(event: "down", fn: (node: NodeRef, info: NodeDownInfo) => void): unknown;
  on(event: "up", fn: (node: NodeRef, info: NodeUpInfo) => void): unknown;
  /** Optional: Talos cordoned the node (legacy upgrade) before draining it. */
  on(event: "cordon", fn: (node: NodeRef) => void): unknown;
  off?(event: "down" | "up" | "cordon" | "staticPod" | "kubelet", fn: (...args: any[]) => void): unknown;
}

const nameOf = (n: NodeRef) => (typeof n === "string" ? n : n.name);

export interface LifecycleAttachment {
  /** Resolves when all events received so far have been applied to the Node objects (rejects with the first error). */
  idle(): Promise<void>;
  detach(): void;
}

export function attachLifecycle(
  source: NodeLifecycleEvents, kubeSim: { nodes: NodeSim; mirrors?: StaticPodMirrors }, opts: { log?: (m: string) => void; kubelet?: Partial<KubeletKnobs> } = {},
): LifecycleAttachment {
  const kubelet = opts.kubelet ?? {};
  const chains = new Map<string, Promise<void>>();
  const errors: Error[] = [];
  const run = (node: string, what: string, fn: () => Promise<void>) => {
    const prev = chains.get(node) ?? Promise.resolve();
    const next = prev.then(fn).catch((err: Error) => {
      const e = new Error(`kube sim: applying "${what}" of node ${node} to its Node object failed: ${err.message}`);
      errors.push(e);
      opts.log?.(e.message);
    });
    chains.set(node, next);
  };
  const onCordon = (ref: NodeRef) => run(nameOf(ref), "cordon", () => kubeSim.nodes.cordon(nameOf(ref), { byTalos: true }));
  const onDown = (ref: NodeRef, info: NodeDownInfo) =>
    run(nameOf(ref), "down", async () => {
      if (info.cordon) await kubeSim.nodes.cordon(nameOf(ref), { byTalos: true });
      if (!kubelet.staleWhileDown) {
        await kubeSim.nodes.down(nameOf(ref), { mode: "unknown" });
        await kubeSim.mirrors?.nodeReadiness(nameOf(ref), false);
      }
    });
  const onUp = (ref: NodeRef, info: NodeUpInfo) =>
    run(nameOf(ref), "up", async () => {
      if (kubelet.reportDelayMs) await new Promise((r) => setTimeout(r, kubelet.reportDelayMs));
      await kubeSim.nodes.up(nameOf(ref), { talosVersion: info.version, bootId: info.bootId, reported: info.reported });
      await kubeSim.mirrors?.nodeReadiness(nameOf(ref), true);
      if (info.uncordon !== false) await kubeSim.nodes.uncordon(nameOf(ref), { onlyIfTalos: true });
    });
  const onStaticPod = (ref: NodeRef, pod: StaticPodInfo) =>
    run(nameOf(ref), `static pod ${pod.component}`, async () => { await kubeSim.mirrors?.update(nameOf(ref), pod); });
  // a stopped kubelet leaves its Node as it was (a restart is shorter than the node lifecycle controller's grace)
  const onKubelet = (ref: NodeRef, state: KubeletInfo) =>
    run(nameOf(ref), "kubelet", async () => { if (state.running) await kubeSim.nodes.setKubeletVersion(nameOf(ref), state.version); });
  source.on("staticPod", onStaticPod);
  source.on("kubelet", onKubelet);
  source.on("cordon", onCordon);
  source.on("down", onDown);
  source.on("up", onUp);
  return {
    async idle() {
      await Promise.all([...chains.values()]);
      if (errors.length) throw errors.shift();
    },
    detach() {
      source.off?.("cordon", onCordon as (...args: any[]) => void);
      source.off?.("staticPod", onStaticPod as (...args: any[]) => void);
      source.off?.("kubelet", onKubelet as (...args: any[]) => void);
      source.off?.("down", onDown as (...args: any[]) => void);
      source.off?.("up", onUp as (...args: any[]) => void);
    },
  };
}
