// The Talos wire contract, loaded once from proto/talos-wire-subset.proto and shared by the client
// (provider/talos) and the simulated nodes (sim/talos). Field names are kept as on the wire (snake_case).
import * as fs from "node:fs";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import * as protobuf from "protobufjs";

/** Prefix of the non-standard `Any.type_url` Talos uses for event payloads. */
export const EVENT_TYPE_PREFIX = "talos/runtime/";

export const PROTO_FILE = "talos-wire-subset.proto";

/** Finds `proto/talos-wire-subset.proto` by walking up from this file (works from the sources and from dist/). */
export function protoPath(): string {
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, "proto", PROTO_FILE);
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find proto/${PROTO_FILE} above ${__dirname}`);
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
  /** protobufjs root, for encoding/decoding event payloads carried in `Any`. */
  root: protobuf.Root;
}

let cached: Wire | undefined;

/** The wire contract, loaded on first use. */
export function wire(): Wire {
  if (cached) return cached;
  const file = protoPath();
  const definition = protoLoader.loadSync(file, LOADER_OPTIONS);
  const svc = (name: string) => definition[`machine.${name}`] as unknown as grpc.ServiceDefinition;
  const root = new protobuf.Root().loadSync(file, { keepCase: true });
  cached = {
    definition,
    MachineService: svc("MachineService"),
    ImageService: svc("ImageService"),
    LifecycleService: svc("LifecycleService"),
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
