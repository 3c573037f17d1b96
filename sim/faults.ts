// Rehearsal faults a user sets on a running simulated cluster (`talos-gate sim fault <node> <fault>`): each maps to
// the sim's own knobs (sim/talos/node.ts NodeFaults, the etcd member's health), and can be listed and cleared.
import { formatDuration, parseDuration } from "../provider/template/duration";
import { simMsg } from "./messages";
import type { TalosNodeSim } from "./talos";

export type RehearsalFault =
  | { kind: "never-comes-back" }
  | { kind: "rollback" }
  | { kind: "slow-boot"; ms: number }
  | { kind: "etcd-unhealthy" }
  | { kind: "pull-failure" }
  | { kind: "static-pod-never-ready" }
  | { kind: "kubelet-never-returns" }
  | { kind: "clear" };

export class FaultError extends Error {
  readonly userFacing = true;
}

/** Parses `never-comes-back`, `rollback`, `slow-boot=30s`, `etcd-unhealthy`, `pull-failure`, `static-pod-never-ready`, `kubelet-never-returns` or `clear`. */
export function parseFault(text: string): RehearsalFault {
  const [name, value] = text.trim().split("=", 2) as [string, string | undefined];
  if (name === "slow-boot") {
    let ms = NaN;
    try {
      ms = value === undefined ? NaN : parseDuration(value);
    } catch {
      // reported below
    }
    if (!(ms > 0)) throw new FaultError(simMsg.badSlowBoot(text));
    return { kind: "slow-boot", ms };
  }
  const plain = ["never-comes-back", "rollback", "etcd-unhealthy", "pull-failure", "static-pod-never-ready", "kubelet-never-returns", "clear"] as const;
  const kind = plain.find((k) => k === name);
  if (value === undefined && kind) return { kind };
  throw new FaultError(simMsg.unknownFault(text));
}

function nodeOf(sim: TalosNodeSim, nameOrAddress: string) {
  const n = sim.nodes().find((x) => x.name === nameOrAddress || x.address === nameOrAddress);
  if (!n) throw new FaultError(simMsg.unknownNode(nameOrAddress, sim.nodes().map((x) => x.name)));
  return n;
}

/** Sets (or, with `clear`, removes) a fault on a node; returns the node's name and its faults now. */
export function applyFault(sim: TalosNodeSim, nameOrAddress: string, fault: RehearsalFault): { node: string; faults: string[] } {
  const n = nodeOf(sim, nameOrAddress);
  switch (fault.kind) {
    case "never-comes-back":
      n.faults.neverComesBack = true;
      n.stayDown(); // set while the node reboots: this reboot already never ends
      break;
    case "rollback": n.faults.rollback = true; break;
    case "slow-boot": n.faults.slowBootMs = fault.ms; break;
    case "pull-failure": n.faults.pullFailure = true; break;
    // a Kubernetes upgrade's node that never comes back: its restarted static pods / kubelet stay down
    case "static-pod-never-ready": n.faults.staticPodNeverReady = true; break;
    case "kubelet-never-returns": n.faults.kubeletNeverReturns = true; break;
    case "etcd-unhealthy":
      if (n.role !== "controlplane") throw new FaultError(simMsg.etcdOnWorker(n.name));
      sim.etcd.holdUnhealthy(n.name, true);
      break;
    case "clear":
      n.faults = {};
      if (n.role === "controlplane" && sim.etcd.isHeldUnhealthy(n.name)) sim.etcd.holdUnhealthy(n.name, false);
      break;
  }
  return { node: n.name, faults: faultsOf(sim, n.name) };
}

/**
 * Brings a node left down by never-comes-back up now (that fault is cleared; the others stay); on a node that is up,
 * ends what static-pod-never-ready / kubelet-never-returns hold (those faults are cleared).
 */
export function recoverNode(sim: TalosNodeSim, nameOrAddress: string): { node: string; faults: string[] } {
  const n = nodeOf(sim, nameOrAddress);
  if (n.up) {
    // what the Kubernetes faults hold: those faults are cleared, the static pods become ready, the kubelet starts
    const held = n.kubernetes.held();
    if (!held) throw new FaultError(simMsg.notDown(n.name));
    n.faults.staticPodNeverReady = undefined;
    n.faults.kubeletNeverReturns = undefined;
    n.kubernetes.recover();
    return { node: n.name, faults: faultsOf(sim, n.name) };
  }
  n.faults.neverComesBack = false;
  if (!n.recover()) throw new FaultError(simMsg.notDown(n.name));
  return { node: n.name, faults: faultsOf(sim, n.name) };
}

/** The rehearsal faults a node has now, in the words `sim fault` takes. */
export function faultsOf(sim: TalosNodeSim, name: string): string[] {
  const n = nodeOf(sim, name);
  const out: string[] = [];
  if (n.faults.neverComesBack) out.push("never-comes-back");
  if (n.faults.rollback) out.push("rollback");
  if (n.faults.slowBootMs) out.push(`slow-boot=${formatDuration(n.faults.slowBootMs)}`);
  if (n.role === "controlplane" && sim.etcd.isHeldUnhealthy(n.name)) out.push("etcd-unhealthy");
  if (n.faults.pullFailure) out.push("pull-failure");
  if (n.faults.staticPodNeverReady) out.push("static-pod-never-ready");
  if (n.faults.kubeletNeverReturns) out.push("kubelet-never-returns");
  return out;
}
