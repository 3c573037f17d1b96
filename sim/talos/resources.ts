// The Talos resources a simulated node serves over the COSI resource API (`/cosi.resource.State/Get|List`), as
// machined's state does: ExtensionStatuses.runtime.talos.dev (one per system extension, ids "0", "1", ..., the
// `schematic` meta extension that Image Factory adds carrying the schematic id as its version) and
// SecurityStates.talos.dev/securitystate. Specs travel protobuf-encoded in `proto_spec`, with `yaml_spec` alongside.
import { status as Status } from "@grpc/grpc-js";
import { stringify } from "yaml";
import { encodeSpec } from "../../provider/talos/proto";
import type { SimNode } from "./node";
import { RpcError } from "./rpcerror";

export const RUNTIME_NAMESPACE = "runtime";
export const EXTENSION_STATUS_TYPE = "ExtensionStatuses.runtime.talos.dev";
export const SECURITY_STATE_TYPE = "SecurityStates.talos.dev";
export const SECURITY_STATE_ID = "securitystate";
export const CONFIG_NAMESPACE = "config";
export const MACHINE_CONFIG_TYPE = "MachineConfigs.config.talos.dev";
/** A stand-in for the cluster's secrets in the simulated machine config: none of it may leave the provider. */
export const SIM_CONFIG_SECRET = "sim-machine-secret-do-not-leak";

interface WireResource {
  metadata: Record<string, unknown>;
  spec: { proto_spec: Buffer; yaml_spec: string };
}

const timestamp = (ms: number) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 });

function resource(node: SimNode, type: string, id: string, owner: string, specName: string, spec: Record<string, unknown>, yamlSpec: unknown,
  namespace = RUNTIME_NAMESPACE): WireResource {
  const at = timestamp(node.bootedAt);
  return {
    metadata: { namespace, type, id, version: "1", owner, phase: "running", created: at, updated: at },
    spec: { proto_spec: encodeSpec(specName, spec), yaml_spec: typeof yamlSpec === "string" ? yamlSpec : stringify(yamlSpec) },
  };
}

/** The active machine configuration (id v1alpha1): a v1alpha1 document with the install image, and secrets. */
export function machineConfig(node: SimNode): WireResource {
  const text = stringify({
    version: "v1alpha1",
    machine: { type: node.role, token: SIM_CONFIG_SECRET, install: { disk: "/dev/sda", image: node.installImage } },
    cluster: { secret: SIM_CONFIG_SECRET },
  }) + "---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: " + node.name + "\n";
  return resource(node, MACHINE_CONFIG_TYPE, "v1alpha1", "", "MachineConfigSpec", { yaml_marshalled: Buffer.from(text) }, text, CONFIG_NAMESPACE);
}

/** The node's ExtensionStatus resources: its extensions, then the `schematic` meta extension (Image Factory). */
export function extensionStatuses(node: SimNode): WireResource[] {
  const all = [...node.extensions, ...(node.schematic ? [{ name: "schematic", version: node.schematic }] : [])];
  return all.map((x, i) => resource(node, EXTENSION_STATUS_TYPE, String(i), "runtime.ExtensionStatusController", "ExtensionStatusSpec",
    { image: `${String(i).padStart(3, "0")}.${x.name}.sqsh`, metadata: { name: x.name, version: x.version } },
    { image: `${String(i).padStart(3, "0")}.${x.name}.sqsh`, metadata: { name: x.name, version: x.version } }));
}

export function securityState(node: SimNode): WireResource {
  return resource(node, SECURITY_STATE_TYPE, SECURITY_STATE_ID, "runtime.SecurityStateController", "SecurityStateSpec",
    { secure_boot: node.secureBoot, booted_with_uki: node.secureBoot },
    { secureBoot: node.secureBoot, bootedWithUKI: node.secureBoot });
}

const notFound = (type: string, ns: string, id: string) =>
  new RpcError(Status.NOT_FOUND, `resource ${type}(${ns}/${id}@undefined) doesn't exist`);

/** State.List of one resource type in a namespace. */
export function listResources(node: SimNode, namespace: string, type: string): WireResource[] {
  if (namespace === RUNTIME_NAMESPACE && type === EXTENSION_STATUS_TYPE) return extensionStatuses(node);
  if (namespace === RUNTIME_NAMESPACE && type === SECURITY_STATE_TYPE) return [securityState(node)];
  if (namespace === CONFIG_NAMESPACE && type === MACHINE_CONFIG_TYPE) return [machineConfig(node)];
  throw new RpcError(Status.NOT_FOUND, `the simulated node serves no resources of type ${type} in namespace ${namespace}`);
}

/** State.Get of one resource. */
export function getResource(node: SimNode, namespace: string, type: string, id: string): WireResource {
  const found = listResources(node, namespace, type).find((r) => r.metadata.id === id);
  if (!found) throw notFound(type, namespace, id);
  return found;
}
