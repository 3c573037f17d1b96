// What ControlPlane and Workers documents share (machines or a machine class, patches, strategies); each kind's own
// rules come from controlplane.ts / workers.ts. Omni: client/pkg/template/internal/models/machineset.go
// (siderolabs/omni b1ea5df, v1.10.0-beta).
import * as M from "../messages";
import { MultiError, type ErrNode } from "../errors";
import { uuidError } from "../formats";
import type { RawMachineSet, RawStrategy } from "../schema";
import type { MachineSet, Strategy } from "../model";
import type { ParseOptions } from "../validate";
import { checkDescriptors, labelsOf, type DocContext } from "./context";
import { validatePatches } from "./patch";

export type MachineSetRole = "controlplane" | "worker";

function strategyModel(s: RawStrategy | undefined, defaultType: "Rolling" | "Unset"): Strategy | undefined {
  if (!s) return undefined;
  const m: Strategy = { type: s.type ?? defaultType };
  if (s.rolling?.maxParallelism !== undefined) m.maxParallelism = s.rolling.maxParallelism;
  return m;
}

/**
 * A machine set: the role's own errors (`roleErrors`, first, as Omni checks them), then the shared ones; the model
 * without its id (the id needs the cluster's name).
 */
export function validateMachineSet(
  ctx: DocContext, s: RawMachineSet, role: MachineSetRole, roleErrors: ErrNode[], files: ParseOptions,
): { node?: ErrNode; model?: Omit<MachineSet, "id"> } {
  const l = new MultiError();
  for (const e of roleErrors) l.add(e);
  for (const e of checkDescriptors(ctx, s, [])) l.add(e);
  const machines = s.machines ?? [];
  if (machines.length > 0 && s.machineClass) l.add(ctx.leaf(M.machineSet.machinesAndClass, ["machineClass"]));
  if (s.kernelArgs !== undefined && s.machineClass) l.add(ctx.leaf(M.machineSet.kernelArgsWithClass, ["kernelArgs"]));
  machines.forEach((id, i) => {
    const err = uuidError(id);
    if (err) l.add(ctx.leaf(M.machineSet.invalidMachineId(id, err), ["machines", i]));
  });
  const patches = validatePatches(ctx, s.patches, ["patches"], files, l);
  if (!l.empty) return { node: l.wrapped(role === "controlplane" ? M.machineSet.controlPlaneWrap : M.machineSet.workersWrap) };
  const model: Omit<MachineSet, "id"> = { role, machines, patches, ...labelsOf(s) };
  if (s.name) model.name = s.name;
  if (s.machineClass) {
    const size = s.machineClass.size;
    model.machineClass = { name: s.machineClass.name ?? "", size: size === undefined ? 0 : size.unlimited ? "unlimited" : size.count };
  }
  if (s.bootstrapSpec) model.bootstrapSpec = { clusterUUID: s.bootstrapSpec.clusterUUID!, snapshot: s.bootstrapSpec.snapshot! };
  const up = strategyModel(s.updateStrategy, "Rolling");
  if (up) model.updateStrategy = up;
  const del = strategyModel(s.deleteStrategy, "Unset");
  if (del) model.deleteStrategy = del;
  const upg = strategyModel(s.upgradeStrategy, "Unset");
  if (upg) model.upgradeStrategy = upg;
  if (s.systemExtensions !== undefined) model.systemExtensions = s.systemExtensions;
  if (s.kernelArgs !== undefined) model.kernelArgs = s.kernelArgs;
  return { model };
}
