// Warnings on the resource's row. The dynamic-provider host never connects to the engine, so a provider's stdout and
// stderr reach the user only as info lines on the stack row (pulumi-dynamic-providers.md §3). A problem the rollout
// survives (status mirror writes failing, watches dropped, lease renewals struggling, a failed sweep) must not vanish
// there: it is sent as a WARNING diagnostic through the engine's own `Log` RPC (the protocol every language SDK uses)
// to the address the host was started with, attributed to the resource's URN (an input the SDK computes). Outside the
// host, or when the engine cannot be reached, the line goes to stderr. Callers pass messages built without secrets.
import { engineAddress } from "./engine";

type EngineModule = typeof import("@pulumi/pulumi/proto/engine_grpc_pb");
type EnginePb = typeof import("@pulumi/pulumi/proto/engine_pb");

let client: InstanceType<EngineModule["EngineClient"]> | undefined | null;

export function engineClient(): InstanceType<EngineModule["EngineClient"]> | undefined {
  if (client !== undefined) return client ?? undefined;
  const address = engineAddress();
  if (!address) {
    client = null;
    return undefined;
  }
  const grpc = require("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
  const { EngineClient } = require("@pulumi/pulumi/proto/engine_grpc_pb") as EngineModule;
  client = new EngineClient(address, grpc.credentials.createInsecure());
  return client;
}

/** Warnings already sent (a status mirror refused on every write would otherwise warn every 500 ms). */
const sent = new Set<string>();
const MAX_REMEMBERED = 1000;

/** Sends `text` as a warning on the row of `urn` (or the stack's row without one), once. Never throws. */
export function warn(urn: string | undefined, text: string): void {
  const key = `${urn ?? ""}\0${text}`;
  if (sent.has(key)) return;
  if (sent.size >= MAX_REMEMBERED) sent.clear();
  sent.add(key);
  const engine = engineClient();
  if (!engine) {
    process.stderr.write(`warning: ${text}\n`);
    return;
  }
  const pb = require("@pulumi/pulumi/proto/engine_pb") as EnginePb;
  const req = new pb.LogRequest();
  req.setSeverity(pb.LogSeverity.WARNING);
  req.setMessage(text);
  if (urn) req.setUrn(urn);
  const grpc = require("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
  engine.log(req, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err) => {
    if (err) process.stderr.write(`warning: ${text}\n`);
  });
}
