// The status's machine list, read and changed without a pass over all of it where one machine is meant. PURE.
import type { MachineStatus } from "./status";

// Every transition is reduced over the whole list (1,000 machines at 1,000 nodes, several passes per event, thousands
// of events per rollout): counts without building arrays, and one machine found and replaced by its position.

/** How many machines `pred` holds for. */
export function countMachines(machines: readonly MachineStatus[], pred: (m: MachineStatus) => boolean): number {
  let n = 0;
  for (const m of machines) if (pred(m)) n++;
  return n;
}

/** Each machine list's positions by name, built once per list and carried over to the copies `replaceMachine` makes. */
const positions = new WeakMap<readonly MachineStatus[], ReadonlyMap<string, number>>();

function positionsOf(machines: readonly MachineStatus[]): ReadonlyMap<string, number> {
  let p = positions.get(machines);
  if (!p) {
    p = new Map(machines.map((m, i) => [m.name, i]));
    positions.set(machines, p);
  }
  return p;
}

/** The machine named `name`, if the list has it. */
export function machineNamed(machines: readonly MachineStatus[], name: string): MachineStatus | undefined {
  const i = positionsOf(machines).get(name);
  return i === undefined ? undefined : machines[i];
}

/** A copy of `machines` with the one named `name` replaced by `f` of it (the same list when there is none). */
export function replaceMachine(machines: MachineStatus[], name: string, f: (m: MachineStatus) => MachineStatus): MachineStatus[] {
  const p = positionsOf(machines);
  const i = p.get(name);
  if (i === undefined) return machines;
  const next = machines.slice();
  next[i] = f(machines[i]);
  positions.set(next, p);
  return next;
}
