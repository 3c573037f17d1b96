// Per-node installer images, like Omni: the port reads each node's platform (Version API), schematic (the
// `schematic` ExtensionStatus Image Factory adds, listed through the COSI resource API) and SecureBoot (SecurityState),
// and nodeInstallerImage builds that node's image. Upgrading with it keeps the node's schematic and extensions; the
// vanilla installer would drop them (why the rule exists).
import * as assert from "node:assert/strict";
import { decodeSpec } from "../../../provider/talos/proto";
import { nodeInstallerImage } from "../../../provider/talos";
import { DEFAULT_SCHEMATIC } from "../../../provider/talos/image";
import { SIM_CONFIG_SECRET } from "../../../sim/talos/resources";
import { Harness, rejectsWith, spec, startHarness } from "./helpers";

const S1 = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";
const S2 = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515";
const TARGET = "v1.13.2";
/** A private Image Factory with a port and a path prefix, where w-aws was installed from. */
const PRIVATE_FACTORY = "registry.corp.example:5000/factory";

describe("talos: each node's platform, schematic and SecureBoot, and its own installer image", function () {
  this.timeout(30000);
  let h: Harness;
  before(async () => {
    h = await startHarness({
      nodes: [
        { ...spec("cp-1", 2, "v1.13.1", "controlplane"), platform: "metal", schematic: S1, installImage: `factory.talos.dev/metal-installer/${S1}:v1.13.0` },
        { ...spec("w-aws", 3, "v1.13.1"), platform: "aws", schematic: S2, extensions: [{ name: "iscsi-tools", version: "v0.2.0" }, { name: "modules.dep", version: "6.18.2-talos" }],
          installImage: `${PRIVATE_FACTORY}/aws-installer/${S2}:v1.12.0` },
        { ...spec("w-sb", 4, "v1.12.3"), platform: "metal", schematic: S1, secureBoot: true },
        { ...spec("w-plain", 5, "v1.13.1") },
        { ...spec("w-custom", 6, "v1.13.1"), extensions: [{ name: "nvidia-container-toolkit", version: "570.124" }] },
        { ...spec("w-gcp", 7, "v1.13.1"), platform: "gcp" },
        { ...spec("w-old", 8, "v1.1.2") },
      ],
    });
  });
  after(async () => h?.stop());

  it("the resource API on the wire: ExtensionStatuses in namespace runtime, the schematic as the `schematic` extension's version", async () => {
    const list = await h.api.client.listResources("10.5.0.3", "runtime", "ExtensionStatuses.runtime.talos.dev");
    assert.deepEqual(list.map((r) => [r.namespace, r.type, r.id, r.phase]), [
      ["runtime", "ExtensionStatuses.runtime.talos.dev", "0", "running"],
      ["runtime", "ExtensionStatuses.runtime.talos.dev", "1", "running"],
      ["runtime", "ExtensionStatuses.runtime.talos.dev", "2", "running"],
    ]);
    const specs = list.map((r) => decodeSpec("ExtensionStatusSpec", r.protoSpec).metadata);
    assert.deepEqual(specs.map((m) => [m.name, m.version]), [["iscsi-tools", "v0.2.0"], ["modules.dep", "6.18.2-talos"], ["schematic", S2]]);
    assert.match(list[2].yamlSpec, new RegExp(`name: schematic\\n\\s+version: ${S2}`));
    const sec = await h.api.client.getResource("10.5.0.4", "runtime", "SecurityStates.talos.dev", "securitystate");
    assert.equal(decodeSpec("SecurityStateSpec", sec.protoSpec).secure_boot, true);
    const missing = await rejectsWith(h.api.client.getResource("10.5.0.4", "runtime", "SecurityStates.talos.dev", "nope"), "NOT_FOUND");
    assert.equal(missing.retryable, false);
  });

  it("imageFacts: platform, schematic, extensions (without the virtual and meta ones) and SecureBoot per node", async () => {
    const facts = Object.fromEntries(await Promise.all(["cp-1", "w-aws", "w-sb", "w-plain", "w-custom"].map(async (n) =>
      [n, await h.api.imageFacts(h.sim.node(n).address)] as const)));
    assert.deepEqual(facts, {
      "cp-1": { platform: "metal", schematic: S1, extensions: [], secureBoot: false, factoryHost: "factory.talos.dev" },
      "w-aws": { platform: "aws", schematic: S2, extensions: ["iscsi-tools"], secureBoot: false, factoryHost: PRIVATE_FACTORY },
      "w-sb": { platform: "metal", schematic: S1, extensions: [], secureBoot: true },
      "w-plain": { platform: "metal", extensions: [], secureBoot: false },
      "w-custom": { platform: "metal", extensions: ["nvidia-container-toolkit"], secureBoot: false },
    });
  });

  it("each node's own image, and an upgrade with it keeps the node's schematic and extensions", async () => {
    const images: Record<string, string> = {};
    for (const n of ["cp-1", "w-aws", "w-sb", "w-plain", "w-gcp"]) {
      images[n] = nodeInstallerImage(n, TARGET, await h.api.imageFacts(h.sim.node(n).address));
    }
    assert.deepEqual(images, {
      "cp-1": `factory.talos.dev/metal-installer/${S1}:${TARGET}`,
      "w-aws": `${PRIVATE_FACTORY}/aws-installer/${S2}:${TARGET}`,
      "w-sb": `factory.talos.dev/metal-installer-secureboot/${S1}:${TARGET}`,
      "w-plain": `ghcr.io/siderolabs/installer:${TARGET}`,
      "w-gcp": `factory.talos.dev/gcp-installer/${DEFAULT_SCHEMATIC}:${TARGET}`,
    });
    const aws = h.sim.node("w-aws");
    await h.api.upgradeNode(aws.address, { image: images["w-aws"], targetVersion: TARGET, nodeTimeoutMs: 8000 });
    assert.equal(aws.version, TARGET);
    assert.deepEqual(await h.api.imageFacts(aws.address),
      { platform: "aws", schematic: S2, extensions: ["iscsi-tools"], secureBoot: false, factoryHost: PRIVATE_FACTORY });
  });

  it("issue 18 point 8: the factory is the node's own (its machine.install.image's host), unless an imageFactoryHost is given", async () => {
    const facts = await h.api.imageFacts(h.sim.node("w-aws").address);
    assert.equal(nodeInstallerImage("w-aws", TARGET, facts), `${PRIVATE_FACTORY}/aws-installer/${S2}:${TARGET}`);
    assert.equal(nodeInstallerImage("w-aws", TARGET, facts, { factoryHost: "factory.mirror.example" }), `factory.mirror.example/aws-installer/${S2}:${TARGET}`);
    // The machine config carries the cluster's secrets: only the install image is kept.
    assert.doesNotMatch(JSON.stringify(facts), new RegExp(SIM_CONFIG_SECRET));
  });

  it("issue 18 point 8: a non-metal node without a schematic gets its platform's installer of the default schematic (Omni's)", async () => {
    const facts = await h.api.imageFacts(h.sim.node("w-gcp").address);
    assert.deepEqual(facts, { platform: "gcp", extensions: [], secureBoot: false }, "installed from the vanilla installer: no factory of its own");
    assert.equal(nodeInstallerImage("w-gcp", TARGET, facts), `factory.talos.dev/gcp-installer/${DEFAULT_SCHEMATIC}:${TARGET}`);
    assert.equal(nodeInstallerImage("w-gcp", "v1.9.5", facts), "ghcr.io/siderolabs/installer:v1.9.5", "no platform installers before Talos 1.10");
  });

  it("issue 18 point 8: Talos before v1.2 (no `node` routing in apid) is refused with its version named, before any action", async () => {
    const old = h.sim.node("w-old");
    const facts = await rejectsWith(h.api.imageFacts(old.address), "TALOS_TOO_OLD");
    assert.match(facts.message, /node 10\.5\.0\.8 answered as Talos v1\.1\.2: Talos before v1\.2 cannot route a call to one node through an endpoint/);
    const up = await rejectsWith(h.api.upgradeNode(old.address, { image: `ghcr.io/siderolabs/installer:${TARGET}`, targetVersion: TARGET, nodeTimeoutMs: 4000 }), "TALOS_TOO_OLD");
    assert.match(up.message, /upgrade this cluster to v1\.2 or later with talosctl first/);
    assert.equal(old.received.upgrade, 0);
    assert.equal(old.version, "v1.1.2");
  });

  it("a node with extensions but no schematic: no image can be derived (the vanilla installer would drop them)", async () => {
    const facts = await h.api.imageFacts(h.sim.node("w-custom").address);
    assert.throws(() => nodeInstallerImage("w-custom", TARGET, facts),
      /node w-custom runs system extensions \(nvidia-container-toolkit\) without an Image Factory schematic: set installerImage/);
    assert.equal(nodeInstallerImage("w-custom", TARGET, facts, { installerImage: "registry.local/installer-nvidia:v1.13.2" }), "registry.local/installer-nvidia:v1.13.2");
  });

  it("why: the vanilla installer on an Image Factory node drops its schematic and extensions", async () => {
    const sb = h.sim.node("w-sb");
    await h.api.upgradeNode(sb.address, { image: `ghcr.io/siderolabs/installer:${TARGET}`, targetVersion: TARGET, nodeTimeoutMs: 8000 });
    const facts = await h.api.imageFacts(sb.address);
    assert.equal(facts.schematic, undefined);
  });
});
