// A Workers document: a machine set whose name is not the control plane's and which has no bootstrap spec. Omni:
// client/pkg/template/internal/models/workers.go (siderolabs/omni b1ea5df, v1.10.0-beta).
import * as M from "../messages";
import type { ErrNode } from "../errors";
import type { RawMachineSet } from "../schema";
import type { MachineSet } from "../model";
import type { ParseOptions } from "../validate";
import type { DocContext } from "./context";
import { validateMachineSet } from "./machineset";

function workersErrors(ctx: DocContext, s: RawMachineSet): ErrNode[] {
  const out: ErrNode[] = [];
  if (s.name === "control-planes") out.push(ctx.leaf(M.machineSet.workersReservedName(s.name), ["name"]));
  if (s.bootstrapSpec) out.push(ctx.leaf(M.machineSet.bootstrapSpecInWorkers, ["bootstrapSpec"]));
  return out;
}

export function validateWorkers(ctx: DocContext, s: RawMachineSet, files: ParseOptions): { node?: ErrNode; model?: Omit<MachineSet, "id"> } {
  return validateMachineSet(ctx, s, "worker", workersErrors(ctx, s), files);
}
