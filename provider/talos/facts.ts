// What a node's installer image is derived from, read from the node the way Omni reads it: the platform from the
// Version API, the schematic from the ExtensionStatus resources (Image Factory adds a `schematic` meta extension
// whose version is the schematic id) listed through the COSI resource API (/cosi.resource.State/List, namespace
// "runtime"), and SecureBoot from the SecurityState resource. Nodes too old to serve a resource report none.
import type { NodeImageFacts } from "../rollout/ports";
import { parseAllDocuments } from "yaml";
import { CallOptions, TalosClient } from "./client";
import { TalosError } from "./errors";
import { factoryHostOf } from "./image";
import { decodeSpec } from "./proto";
import { refuseBeforeNodeRouting } from "./version";

export const RUNTIME_NAMESPACE = "runtime";
export const EXTENSION_STATUS_TYPE = "ExtensionStatuses.runtime.talos.dev";
export const SECURITY_STATE_TYPE = "SecurityStates.talos.dev";
export const SECURITY_STATE_ID = "securitystate";
/** Image Factory's meta extension (image-factory constants.SchematicIDExtensionName). */
export const SCHEMATIC_EXTENSION = "schematic";
/** Extensions that are not system extensions a user chose (Omni ignores them too). */
const NOT_EXTENSIONS = new Set([SCHEMATIC_EXTENSION, "modules.dep", "embedded-config"]);

export const CONFIG_NAMESPACE = "config";
export const MACHINE_CONFIG_TYPE = "MachineConfigs.config.talos.dev";
/** The active machine configuration (pkg/machinery/resources/config/machine_config.go ActiveID). */
export const MACHINE_CONFIG_ID = "v1alpha1";

/** NOT_FOUND / UNIMPLEMENTED: the node has no such resource (type). */
const absent = (err: unknown) => err instanceof TalosError && (err.code === "NOT_FOUND" || err.code === "UNIMPLEMENTED");

/**
 * `machine.install.image` of a machine configuration (multi-document YAML), or undefined. The configuration holds
 * the cluster's secrets: only this one string is kept, and nothing of the text reaches an error.
 */
export function installImageOf(configYaml: string): string | undefined {
  try {
    for (const doc of parseAllDocuments(configYaml)) {
      const image = (doc.toJS() as { machine?: { install?: { image?: unknown } } } | null)?.machine?.install?.image;
      if (typeof image === "string" && image) return image;
    }
  } catch {
    // not readable: no install image
  }
  return undefined;
}

/** The node's install image, read from its machine configuration (a sensitive resource: os:admin). */
async function readInstallImage(client: TalosClient, node: string, opts: CallOptions): Promise<string | undefined> {
  try {
    const r = await client.getResource(node, CONFIG_NAMESPACE, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID, opts);
    const bytes: Buffer | undefined = decodeSpec("MachineConfigSpec", r.protoSpec).yaml_marshalled;
    return bytes?.length ? installImageOf(Buffer.from(bytes).toString("utf8")) : undefined;
  } catch (err) {
    if (absent(err) || (err instanceof TalosError && err.code === "PERMISSION_DENIED")) return undefined;
    throw err;
  }
}

export async function readImageFacts(client: TalosClient, node: string, opts: CallOptions = {}): Promise<NodeImageFacts> {
  const [version, extensions, security] = await Promise.all([
    client.version(node, opts),
    client.listResources(node, RUNTIME_NAMESPACE, EXTENSION_STATUS_TYPE, opts).catch((err) => {
      if (absent(err)) return [];
      throw err;
    }),
    client.getResource(node, RUNTIME_NAMESPACE, SECURITY_STATE_TYPE, SECURITY_STATE_ID, opts).catch((err) => {
      if (absent(err)) return undefined;
      throw err;
    }),
  ]);
  let schematic: string | undefined;
  const names: string[] = [];
  for (const r of extensions) {
    const meta = decodeSpec("ExtensionStatusSpec", r.protoSpec).metadata ?? {};
    if (meta.name === SCHEMATIC_EXTENSION) schematic = meta.version || undefined;
    else if (meta.name && !NOT_EXTENSIONS.has(meta.name)) names.push(meta.name);
  }
  refuseBeforeNodeRouting(node, version.tag);
  const secureBoot = security ? !!decodeSpec("SecurityStateSpec", security.protoSpec).secure_boot : false;
  const platform = version.platform.name;
  // Only an Image Factory installer needs its factory: a node with a schematic, or one on a platform of its own.
  const factoryHost = schematic || (platform && platform !== "metal") ? factoryHostOf(await readInstallImage(client, node, opts)) : undefined;
  return { platform, ...(schematic ? { schematic } : {}), extensions: names, secureBoot, ...(factoryHost ? { factoryHost } : {}) };
}
