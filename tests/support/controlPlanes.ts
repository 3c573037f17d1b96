// Fresh control planes for the sims of a test run, one always starting ahead: a control plane takes ~6-15 s to start
// (most of it kube-apiserver), time in which the previous test mostly waits on reboots and Jobs, so the next one is
// started while the current one is used. Each sim still gets a world of its own (nothing is reused or reset).
import { ControlPlane, startControlPlane } from "../../sim/controlplane";
import { onRunEnd } from "./fixtures";

let spare: Promise<ControlPlane> | undefined;
let registered = false;

function startSpare(): Promise<ControlPlane> {
  const p = startControlPlane();
  p.catch(() => undefined); // a failed start is reported to the test that takes it
  return p;
}

/** A control plane nobody used yet (the one started ahead, if any), and the next one starting ahead. */
export function freshControlPlane(): Promise<ControlPlane> {
  if (!registered) {
    registered = true;
    onRunEnd(async () => {
      const left = spare;
      spare = undefined;
      await (await left?.catch(() => undefined))?.stop();
    });
  }
  const taken = spare ?? startSpare();
  spare = startSpare();
  return taken;
}
