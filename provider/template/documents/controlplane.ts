// The ControlPlane document: a machine set with no name of its own, an optional bootstrap spec and no update or delete
// strategy. Omni: client/pkg/template/internal/models/controlplane.go (siderolabs/omni b1ea5df, v1.10.0-beta).
import * as M from "../messages";
import type { ErrNode } from "../errors";
import type { RawMachineSet } from "../schema";
import type { MachineSet } from "../model";
import type { ParseOptions } from "../validate";
import type { DocContext } from "./context";
import { validateMachineSet } from "./machineset";

function controlPlaneErrors(ctx: DocContext, s: RawMachineSet): ErrNode[] {
  const out: ErrNode[] = [];
  if (s.name) out.push(ctx.leaf(M.machineSet.controlPlaneName, ["name"]));
  if (s.bootstrapSpec) {
    if (!s.bootstrapSpec.clusterUUID) out.push(ctx.leaf(M.machineSet.clusterUUIDRequired, ["bootstrapSpec"]));
    if (!s.bootstrapSpec.snapshot) out.push(ctx.leaf(M.machineSet.snapshotRequired, ["bootstrapSpec"]));
  }
  if (s.updateStrategy) out.push(ctx.leaf(M.machineSet.updateStrategyNotAllowed, ["updateStrategy"]));
  if (s.deleteStrategy) out.push(ctx.leaf(M.machineSet.deleteStrategyNotAllowed, ["deleteStrategy"]));
  return out;
}

export function validateControlPlane(ctx: DocContext, s: RawMachineSet, files: ParseOptions): { node?: ErrNode; model?: Omit<MachineSet, "id"> } {
  return validateMachineSet(ctx, s, "controlplane", controlPlaneErrors(ctx, s), files);
}
