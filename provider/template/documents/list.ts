// The documents together as one template: one Cluster, one ControlPlane, workers named once, each machine in one set,
// every Machine document used, no locked control plane machine. Omni: client/pkg/template/internal/models/list.go
// (siderolabs/omni b1ea5df, v1.10.0-beta).
import * as M from "../messages";
import { leaf, type ErrNode, type Where } from "../errors";
import type { RawMachine, RawMachineSet } from "../schema";
import type { MachineDoc, MachineSet } from "../model";
import type { ClusterParts } from "./cluster";

/** Every document of a template as validated, the raw document kept for the cross-document rules. */
export interface Collected {
  cluster?: ClusterParts;
  controlPlanes: { doc: RawMachineSet; model?: MachineSet }[];
  workers: { doc: RawMachineSet; model?: MachineSet }[];
  machines: { doc: RawMachine; model?: MachineDoc }[];
  clusters: number;
}

export function crossDocument(c: Collected, where: Where): ErrNode[] {
  const out: ErrNode[] = [];
  const add = (t: string) => out.push(leaf(t, where));
  if (c.clusters !== 1) add(M.crossDocument.clusterCount(c.clusters));
  if (c.controlPlanes.length !== 1) add(M.crossDocument.controlPlaneCount(c.controlPlanes.length));
  const names = new Map<string, number>();
  for (const w of c.workers) names.set(w.doc.name ?? "", (names.get(w.doc.name ?? "") ?? 0) + 1);
  for (const [n, count] of names) if (count > 1) add(M.crossDocument.duplicateWorkers(n));
  const usedBy = new Map<string, string[]>();
  for (const w of c.workers) for (const id of w.doc.machines ?? []) usedBy.set(id, [...(usedBy.get(id) ?? []), w.doc.name ?? ""]);
  for (const [id, sets] of usedBy) if (sets.length > 1) add(M.crossDocument.machineInMultipleWorkers(id, sets));
  const cpMachines = c.controlPlanes.flatMap((cp) => cp.doc.machines ?? []);
  const both = [...new Set(cpMachines.filter((id) => usedBy.has(id)))];
  if (both.length > 0) add(M.crossDocument.machinesInBoth(both));
  const all = new Set([...cpMachines, ...usedBy.keys()]);
  for (const m of c.machines) if (!all.has(m.doc.name ?? "")) add(M.crossDocument.machineNotUsed(m.doc.name ?? ""));
  const locked = new Set(c.machines.filter((m) => m.doc.locked).map((m) => m.doc.name ?? ""));
  for (const id of cpMachines) if (locked.has(id)) add(M.crossDocument.lockedControlPlane(id));
  return out;
}
