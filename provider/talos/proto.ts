// The Talos wire contract, loaded once from proto/talos-wire-subset.proto (machine API) and
// proto/talos-resource-subset.proto (the COSI resource API Talos serves) and shared by the client (provider/talos)
// and the simulated nodes (sim/talos). Field names are kept as on the wire (snake_case).
import * as fs from "node:fs";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import * as protobuf from "protobufjs";
import { msg } from "./messages";

/** Prefix of the non-standard `Any.type_url` Talos uses for event payloads. */
export const EVENT_TYPE_PREFIX = "talos/runtime/";

export const PROTO_FILE = "talos-wire-subset.proto";
export const RESOURCE_PROTO_FILE = "talos-resource-subset.proto";

/** Finds `proto/<file>` (default the machine API) by walking up from this file (works from the sources and from dist/). */
export function protoPath(file = PROTO_FILE): string {
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, "proto", file);
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(msg.protoMissing(file, __dirname));
    dir = parent;
  }
}

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: Number,
  defaults: true,
  oneofs: true,
};

export interface Wire {
  /** Package definition for grpc-js (`machine.MachineService`, `machine.ImageService`, `machine.LifecycleService`). */
  definition: protoLoader.PackageDefinition;
  MachineService: grpc.ServiceDefinition;
  ImageService: grpc.ServiceDefinition;
  LifecycleService: grpc.ServiceDefinition;
  /** The COSI resource API (`cosi.resource.State`: Get, List), through which Talos serves its resources. */
  State: grpc.ServiceDefinition;
  /** protobufjs root, for encoding/decoding event payloads carried in `Any`. */
  root: protobuf.Root;
}

let cached: Wire | undefined;

/** The wire contract, loaded on first use. */
export function wire(): Wire {
  if (cached) return cached;
  const files = [protoPath(), protoPath(RESOURCE_PROTO_FILE)];
  const definition = protoLoader.loadSync(files, LOADER_OPTIONS);
  const svc = (name: string) => definition[name] as unknown as grpc.ServiceDefinition;
  const root = new protobuf.Root().loadSync(files, { keepCase: true });
  cached = {
    definition,
    MachineService: svc("machine.MachineService"),
    ImageService: svc("machine.ImageService"),
    LifecycleService: svc("machine.LifecycleService"),
    State: svc("cosi.resource.State"),
    root,
  };
  return cached;
}

/** `google.protobuf.Any` as grpc-js objects carry it (field names stay `type_url` / `value`). */
export interface AnyMessage {
  type_url: string;
  value: Buffer | Uint8Array;
}

/** Packs an event payload, e.g. `packEvent("MachineStatusEvent", {stage: 4, status: {ready: true}})`. */
export function packEvent(name: string, payload: Record<string, unknown>): AnyMessage {
  const type = wire().root.lookupType(`machine.${name}`);
  return { type_url: `${EVENT_TYPE_PREFIX}machine.${name}`, value: Buffer.from(type.encode(type.fromObject(payload)).finish()) };
}

/** A decoded event payload: the short payload name (e.g. "SequenceEvent") and its fields (snake_case). */
export interface DecodedPayload {
  name: string;
  // protobufjs' toObject of a type looked up at run time: fields as the .proto has them, unknown to tsc
  payload: Record<string, any>;
}

/** Decodes an event payload; undefined for the hello event (empty type URL) and for unknown payload types. */
export function unpackEvent(any: AnyMessage | null | undefined): DecodedPayload | undefined {
  if (!any || !any.type_url) return undefined;
  const full = any.type_url.startsWith(EVENT_TYPE_PREFIX) ? any.type_url.slice(EVENT_TYPE_PREFIX.length) : any.type_url;
  const type = wire().root.lookup(full);
  if (!(type instanceof protobuf.Type)) return undefined;
  const payload = type.toObject(type.decode(any.value), { longs: String, enums: Number, defaults: true });
  return { name: full.replace(/^machine\./, ""), payload };
}

/** Encodes a resource spec (`cosi.resource.<Name>`, e.g. "ExtensionStatusSpec") as it travels in `Spec.proto_spec`. */
export function encodeSpec(name: string, spec: Record<string, unknown>): Buffer {
  const type = wire().root.lookupType(`cosi.resource.${name}`);
  return Buffer.from(type.encode(type.fromObject(spec)).finish());
}

/** Decodes a resource spec from `Spec.proto_spec` (snake_case fields, defaults filled in). */
// Record<string, any>: protobufjs' toObject of a type looked up at run time (the library boundary)
export function decodeSpec(name: string, bytes: Buffer | Uint8Array): Record<string, any> {
  const type = wire().root.lookupType(`cosi.resource.${name}`);
  return type.toObject(type.decode(bytes), { longs: String, enums: Number, defaults: true });
}
