// Shared helpers of the Talos integration tests: a simulated endpoint with a few nodes, and the real client on it.
import * as assert from "node:assert/strict";
import { createTalosApi, TalosApiImpl, TalosApiOptions, TalosError, TalosErrorCode } from "../../../provider/talos";
import { SimNodeSpec, TalosNodeSim, TalosSimOptions } from "../../../sim/talos";

export const image = (v: string) => `ghcr.io/siderolabs/installer:${v}`;

export const spec = (name: string, n: number, version: string, role: "controlplane" | "worker" = "worker"): SimNodeSpec =>
  ({ name, address: `10.5.0.${n}`, role, version });

/** Control planes cp-1..cp-n at 10.5.0.2.., all on `version`. */
export const controlPlanes = (n: number, version: string): SimNodeSpec[] =>
  Array.from({ length: n }, (_, i) => spec(`cp-${i + 1}`, i + 2, version, "controlplane"));

/** Short, test-sized timings: the node is down for 250 ms per reboot. */
export const FAST = { pullMs: 10, installMs: 10, downMs: 250 };

export interface Harness {
  sim: TalosNodeSim;
  api: TalosApiImpl;
  stop(): Promise<void>;
}

export async function startHarness(sim: TalosSimOptions, api: TalosApiOptions = {}): Promise<Harness> {
  const s = await TalosNodeSim.start({ timing: FAST, ...sim });
  const a = createTalosApi(s.talosconfig(), { pollIntervalMs: 25, probeTimeoutMs: 2000, ...api });
  return { sim: s, api: a, stop: async () => { a.close(); await s.stop(); } };
}

/** Awaits `p`, expecting a TalosError with `code`; returns it. */
export async function rejectsWith(p: Promise<unknown>, code: TalosErrorCode): Promise<TalosError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof TalosError, `expected a TalosError, got ${String(err)}`);
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
    assert.doesNotMatch(err.message, /PRIVATE KEY|BEGIN CERTIFICATE/);
    return err;
  }
  assert.fail(`expected a TalosError ${code}, but the call succeeded`);
}
