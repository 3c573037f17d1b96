// The preview plan's installer-image lines at scale (issue 23.3): read under their own budget with a bounded number in
// flight; when the budget ends, the nodes not read yet are named as read at apply time and the lines of those read stand.
// The preview's two looks at the live cluster (upgrade path, plan) share one LIST of the Nodes.
import * as assert from "node:assert/strict";
import { imagePlanLines, imageReadBudgetMs, PLAN_READS_IN_FLIGHT } from "../../../provider/handlers/imagePlan";
import { previewLive } from "../../../provider/handlers/talosUpgrade";
import type { KubeClient } from "../../../provider/kube";
import type { Machine } from "../../../provider/rollout/ports";
import { TalosError } from "../../../provider/talos/errors";
import { upgrade } from "./checkCases";

const machine = (name: string): Machine => ({ name, role: "worker", address: name, ready: true, cordoned: false, machineSet: "workers" });
const VANILLA = "ghcr.io/siderolabs/installer:v1.13.2";

describe("unit: handlers — the preview's installer-image lines (imagePlan.ts)", () => {
  it("groups the nodes by image, sorted, and says why a node could not be read", async () => {
    const nodes = ["w-3", "w-1", "cp-1", "w-2"].map(machine);
    const { lines, refusals } = await imagePlanLines(nodes, async (m) => {
      if (m.name === "w-2") throw new Error("node w-2: connection refused");
      return m.name === "w-3" ? "factory.talos.dev/metal-installer/abc:v1.13.2" : VANILLA;
    }, 5_000);
    assert.deepEqual(lines, [
      "installer (read from the node at apply time: node w-2: connection refused): w-2",
      "installer factory.talos.dev/metal-installer/abc:v1.13.2: w-3",
      `installer ${VANILLA}: cp-1, w-1`,
    ]);
    assert.deepEqual(refusals, [], "an error is no refusal unless `refuses` takes it");
  });

  it("a node whose image cannot be derived is a refusal, not a line; the others' lines stand", async () => {
    const refusal = (name: string) => new TalosError("CONFIG", `node ${name} boots with SecureBoot without an Image Factory schematic`, name);
    const nodes = ["w-3", "w-1", "cp-1", "w-2"].map(machine);
    const { lines, refusals } = await imagePlanLines(nodes, async (m) => {
      if (m.name === "w-3" || m.name === "w-1") throw refusal(m.name);
      if (m.name === "w-2") throw new TalosError("UNAVAILABLE", "node w-2: connection refused", "w-2");
      return VANILLA;
    }, 5_000, (err) => err instanceof TalosError && err.code === "CONFIG");
    assert.deepEqual(refusals, [refusal("w-1").message, refusal("w-3").message], "by node name");
    assert.deepEqual(lines, [
      "installer (read from the node at apply time: node w-2: connection refused): w-2",
      `installer ${VANILLA}: cp-1`,
    ]);
  });

  it("keeps at most PLAN_READS_IN_FLIGHT reads in flight, and names the nodes not read when the budget ends", async () => {
    const nodes = Array.from({ length: 200 }, (_, i) => machine(`w-${String(i).padStart(3, "0")}`));
    let inFlight = 0;
    let most = 0;
    const aborted: string[] = [];
    const { lines } = await imagePlanLines(nodes, (m, signal) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // The first 100 answer at once; the others hang until the budget ends (their signal aborts).
      if (Number(m.name.slice(2)) < 100) {
        inFlight--;
        return Promise.resolve(VANILLA);
      }
      return new Promise<string>((_, reject) => signal.addEventListener("abort", () => {
        inFlight--;
        aborted.push(m.name);
        reject(new Error("aborted"));
      }, { once: true }));
    }, 200);
    assert.equal(most, PLAN_READS_IN_FLIGHT);
    assert.equal(aborted.length, PLAN_READS_IN_FLIGHT, "the reads in flight are aborted at the budget's end");
    assert.equal(lines.length, 2);
    assert.match(lines[0], /^installer \(read from the node at apply time: not read within the preview's 0\.2s for installer images\): w-100, w-101, .* and 88 more$/);
    assert.match(lines[1], new RegExp(`^installer ${VANILLA.replace(/[.]/g, "\\.")}: w-000, w-001, .* and 88 more$`));
  });

  it("the budget grows with the nodes: 5 s, plus 10 ms a node, at most 30 s", () => {
    assert.deepEqual([imageReadBudgetMs(3), imageReadBudgetMs(1000), imageReadBudgetMs(10_000)], [5_030, 15_000, 30_000]);
  });
});

describe("unit: handlers — the preview's looks at the live cluster (talosUpgrade.ts previewLive)", () => {
  const news = upgrade({ installerImage: VANILLA });

  it("the upgrade-path check and the plan share one LIST of the Nodes, and the kubelets come from it", async () => {
    const machines: Machine[] = ["cp-1", "w-1", "w-2"].map((name) => ({
      ...machine(name), ...(name === "cp-1" ? { role: "controlplane" as const, machineSet: "control-planes" } : {}),
      talosVersion: "v1.13.0", kubeletVersion: "v1.34.1",
    }));
    let lists = 0;
    let kubeletsFrom: readonly Machine[] | undefined;
    let closed = 0;
    const kube = {
      listMachines: async () => {
        lists++;
        await new Promise((r) => setTimeout(r, 10)); // both looks ask while it is in flight
        return machines.map((m) => ({ ...m }));
      },
      kubernetesVersions: async (listing?: Promise<readonly Machine[]>) => {
        const nodes = await listing;
        kubeletsFrom = nodes;
        return { controlPlane: [{ where: "kube-apiserver on cp-1", version: "v1.34.1" }], kubelets: (nodes ?? []).map((m) => ({ node: m.name, version: m.kubeletVersion! })) };
      },
      readStatusRecord: async () => undefined,
      close: async () => { closed++; },
    } as unknown as KubeClient;
    const [refused, plan] = await previewLive(news, {}, () => kube);
    assert.deepEqual(refused, []);
    assert.deepEqual(plan.slice(0, 1), ["upgrade 3 of 3 machines to v1.13.2 in 3 waves"]);
    assert.ok(plan.includes(`installer ${VANILLA}: every node`), plan.join("\n"));
    assert.equal(lists, 1, "one LIST of the Nodes for both looks");
    assert.deepEqual(kubeletsFrom?.map((m) => m.name), ["cp-1", "w-1", "w-2"], "the kubelets from that listing");
    assert.equal(closed, 1);
  });

  it("a node whose installer image cannot be derived refuses the preview (check), naming it, with the plan's other looks", async () => {
    const machines: Machine[] = ["cp-1", "w-1"].map((name) => ({
      ...machine(name), ...(name === "cp-1" ? { role: "controlplane" as const, machineSet: "control-planes" } : {}),
      talosVersion: "v1.13.0", kubeletVersion: "v1.34.1",
    }));
    const kube = {
      listMachines: async () => machines.map((m) => ({ ...m })),
      kubernetesVersions: async () => ({ controlPlane: [{ where: "kube-apiserver on cp-1", version: "v1.34.1" }], kubelets: [] }),
      readStatusRecord: async () => undefined,
      close: async () => undefined,
    } as unknown as KubeClient;
    let pending: string[] = [];
    const [refused] = await previewLive(upgrade({}), {}, () => kube, async (_spec, nodes, target) => {
      pending = nodes.map((m) => m.name);
      return { lines: [`installer ${VANILLA}: cp-1`], refusals: [`node w-1 boots with SecureBoot (${target})`] };
    });
    assert.deepEqual(pending, ["cp-1", "w-1"]);
    assert.deepEqual(refused, [{ property: "installerImage", reason: "node w-1 boots with SecureBoot (v1.13.2)" }]);
  });

  it("a cluster that cannot be listed: no refusal, the plan says why, the client is closed", async () => {
    let closed = 0;
    const kube = {
      listMachines: async () => { throw new Error("listing the Nodes failed: connection refused"); },
      kubernetesVersions: async () => ({ controlPlane: [], kubelets: [] }),
      readStatusRecord: async () => undefined,
      close: async () => { closed++; },
    } as unknown as KubeClient;
    const [refused, plan] = await previewLive(news, {}, () => kube);
    assert.deepEqual(refused, []);
    assert.equal(plan.length, 1);
    assert.match(plan[0], /connection refused/);
    assert.equal(closed, 1);
  });
});
