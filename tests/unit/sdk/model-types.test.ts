// The SDK's public types against the provider's models (issue 21): the SDK declares readable named interfaces (only
// dist/sdk/**/*.d.ts ships, so they cannot be the models' zod types), and this file does not compile when they drift
// apart — a status field the provider outputs that the SDK does not name, an argument the model would refuse.
import * as assert from "node:assert/strict";
import type { MachineArgs, TalosUpgradeHealthcheckStatus, TalosUpgradeMachineStatus, TalosUpgradeStatus, UpgradeStrategyArgs } from "../../../sdk";
import type { GateCheckInput } from "../../../sdk/healthcheck";
import type { MachineOverrideInput } from "../../../provider/resources/cluster";
import type { GateCheckInput as ModelGateCheck, StrategyInput } from "../../../provider/resources/talosUpgrade";
import { outputStatus, type OutputCheck, type OutputMachine, type OutputStatus, type UpgradeStatus } from "../../../provider/rollout/status";

type Extends<A, B> = [A] extends [B] ? true : false;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** Each entry is `true` only while the two sides agree; a drift is a compile error here. */
const agreements: {
  statusReadsAsTheSdkSays: Extends<OutputStatus, TalosUpgradeStatus>;
  statusFields: Same<keyof OutputStatus, keyof TalosUpgradeStatus>;
  machineFields: Same<keyof OutputMachine, keyof TalosUpgradeMachineStatus>;
  checkFields: Same<keyof OutputCheck, keyof TalosUpgradeHealthcheckStatus>;
  strategyArgsParse: Extends<UpgradeStrategyArgs, StrategyInput>;
  machineArgsParse: Extends<MachineArgs, MachineOverrideInput>;
  gateCheckParses: Extends<GateCheckInput, ModelGateCheck>;
} = {
  statusReadsAsTheSdkSays: true, statusFields: true, machineFields: true, checkFields: true,
  strategyArgsParse: true, machineArgsParse: true, gateCheckParses: true,
};

describe("sdk: public types agree with the provider's models", () => {
  it("the status the provider outputs has exactly the fields TalosUpgradeStatus names", () => {
    assert.ok(Object.values(agreements).every((v) => v === true));
    const status = {
      cluster: "prod", phase: "Done", status: "", step: "", error: "", lastUpgradeVersion: "v1.13.2", currentUpgradeVersion: "",
      target: "v1.13.2", mode: "upgrade", wave: 1, waves: 1, gate: "idle", gateAttempt: 0, history: [], historyLimit: 10,
      machines: [{ name: "cp-1", role: "controlplane", to: "v1.13.2", state: "done" }],
      healthchecks: [{ id: "cluster-prod-ceph", state: "PASSED", attempts: 1, detail: "" }],
    } as unknown as UpgradeStatus;
    const out = outputStatus(status);
    assert.deepEqual(Object.keys(out).sort(), ["currentUpgradeVersion", "error", "healthchecks", "lastUpgradeVersion", "machines", "phase", "status", "step"]);
    assert.deepEqual(out.machines[0], { name: "cp-1", role: "controlplane", from: "", to: "v1.13.2", state: "done", started: "", finished: "", durationMs: 0 });
    assert.deepEqual(out.healthchecks[0], { id: "cluster-prod-ceph", state: "PASSED", attempts: 1, lastReason: "", lastRun: "" });
  });
});
