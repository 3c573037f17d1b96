// What a node's installer image is derived from, read from the node the way Omni reads it: the platform from the
// Version API, the schematic from the ExtensionStatus resources (Image Factory adds a `schematic` meta extension
// whose version is the schematic id) listed through the COSI resource API (/cosi.resource.State/List, namespace
// "runtime"), and SecureBoot from the SecurityState resource. Nodes too old to serve a resource report none.
import type { NodeImageFacts } from "../rollout/ports";
import { CallOptions, TalosClient } from "./client";
import { TalosError } from "./errors";
import { decodeSpec } from "./proto";

export const RUNTIME_NAMESPACE = "runtime";
export const EXTENSION_STATUS_TYPE = "ExtensionStatuses.runtime.talos.dev";
export const SECURITY_STATE_TYPE = "SecurityStates.talos.dev";
export const SECURITY_STATE_ID = "securitystate";
/** Image Factory's meta extension (image-factory constants.SchematicIDExtensionName). */
export const SCHEMATIC_EXTENSION = "schematic";
/** Extensions that are not system extensions a user chose (Omni ignores them too). */
const NOT_EXTENSIONS = new Set([SCHEMATIC_EXTENSION, "modules.dep", "embedded-config"]);

/** NOT_FOUND / UNIMPLEMENTED: the node has no such resource (type). */
const absent = (err: unknown) => err instanceof TalosError && (err.code === "NOT_FOUND" || err.code === "UNIMPLEMENTED");

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
  const secureBoot = security ? !!decodeSpec("SecurityStateSpec", security.protoSpec).secure_boot : false;
  return { platform: version.platform.name, ...(schematic ? { schematic } : {}), extensions: names, secureBoot };
}
