// An error a simulated node's handler returns to the client as a gRPC status.
import { status as Status } from "@grpc/grpc-js";

export class RpcError extends Error {
  constructor(readonly code: Status, readonly details: string) {
    super(details);
  }
}
