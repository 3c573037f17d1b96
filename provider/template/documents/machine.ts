// A Machine document: a machine's id (a UUID), lock, install disk, patches. Omni:
// client/pkg/template/internal/models/machine.go (siderolabs/omni b1ea5df, v1.10.0-beta).
import * as M from "../messages";
import { MultiError, type ErrNode } from "../errors";
import { uuidError } from "../formats";
import type { RawMachine } from "../schema";
import type { MachineDoc } from "../model";
import type { ParseOptions } from "../validate";
import { checkDescriptors, labelsOf, type DocContext } from "./context";
import { validatePatches } from "./patch";

export function validateMachine(ctx: DocContext, m: RawMachine, files: ParseOptions): { node?: ErrNode; model?: MachineDoc } {
  const l = new MultiError();
  const name = m.name ?? "";
  if (!name) l.add(ctx.leaf(M.machine.nameRequired, ["name"]));
  for (const e of checkDescriptors(ctx, m, [])) l.add(e);
  const err = uuidError(name);
  if (err) l.add(ctx.leaf(M.machineSet.invalidMachineId(name, err), ["name"]));
  if (m.install?.disk && m.install?.diskSelector) l.add(ctx.leaf(M.machine.installExclusive, ["install"]));
  const patches = validatePatches(ctx, m.patches, ["patches"], files, l);
  if (!l.empty) return { node: l.wrapped(M.machine.wrap(name)) };
  const model: MachineDoc = { id: name, locked: !!m.locked, patches, ...labelsOf(m) };
  if (m.install && (m.install.disk || m.install.diskSelector)) model.install = { ...m.install };
  if (m.systemExtensions !== undefined) model.systemExtensions = m.systemExtensions;
  if (m.kernelArgs !== undefined) model.kernelArgs = m.kernelArgs;
  return { model };
}
