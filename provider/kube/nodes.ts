// Cluster reads and node scheduling: machines from Kubernetes Nodes, cordon / uncordon.
import type * as k8s from "@kubernetes/client-node";
import type { Machine } from "../rollout/ports";
import { KubeClients } from "./client";
import { apiMessage, KubeError, statusOf } from "./errors";
import {
  CONTROL_PLANE_LABEL, CONTROL_PLANES_SET, LEGACY_MASTER_LABEL, MACHINE_SET_LABEL, WORKERS_SET,
} from "./labels";
import { msg } from "./messages";

/** "Talos (v1.13.2)" → "v1.13.2"; undefined for any other OS image. */
export function talosVersionOf(osImage: string | undefined): string | undefined {
  const m = /^Talos \((v\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)\)$/.exec((osImage ?? "").trim());
  return m?.[1];
}

export function machineOf(node: k8s.V1Node): Machine {
  const labels = node.metadata?.labels ?? {};
  const controlPlane = CONTROL_PLANE_LABEL in labels || LEGACY_MASTER_LABEL in labels;
  const addresses = node.status?.addresses ?? [];
  const address =
    addresses.find((a) => a.type === "InternalIP")?.address ??
    addresses.find((a) => a.type === "ExternalIP")?.address ??
    addresses[0]?.address ??
    node.metadata?.name ??
    "";
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
  const machine: Machine = {
    name: node.metadata?.name ?? "",
    role: controlPlane ? "controlplane" : "worker",
    address,
    ready,
    cordoned: node.spec?.unschedulable === true,
    machineSet: labels[MACHINE_SET_LABEL] || (controlPlane ? CONTROL_PLANES_SET : WORKERS_SET),
  };
  const version = talosVersionOf(node.status?.nodeInfo?.osImage);
  if (version) machine.talosVersion = version;
  return machine;
}

export async function listMachines(c: KubeClients): Promise<Machine[]> {
  let nodes: k8s.V1Node[];
  try {
    nodes = (await c.core.listNode({})).items;
  } catch (err) {
    throw new KubeError(msg.listNodesFailed(apiMessage(err), statusOf(err)), statusOf(err));
  }
  return nodes.map(machineOf).sort((a, b) => a.name.localeCompare(b.name));
}

/** Sets spec.unschedulable (JSON patch `add` works whether or not the field is present). */
export async function setUnschedulable(c: KubeClients, node: string, value: boolean): Promise<void> {
  try {
    await c.core.patchNode({ name: node, body: [{ op: "add", path: "/spec/unschedulable", value }] });
  } catch (err) {
    throw new KubeError(msg.nodeRequestFailed(value ? "cordon" : "uncordon", node, apiMessage(err), statusOf(err)), statusOf(err));
  }
}
