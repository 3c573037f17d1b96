// A rollout's progress on its own row (issue 22.4): the live line as *ephemeral* status of the TalosUpgrade's URN (the
// engine shows it in the row's info column and leaves it out of the Diagnostics summary), and the transitions worth
// keeping (a node back or failed, the gate open, a wave done, the run's end) as permanent info lines on the same row.
// Sent through the engine's `Log` RPC, as pulumi-kubernetes sends its await status (`host.LogStatus`):
// pulumi/pulumi pkg/host/host_server.go (v3.259.0) routes `LogRequest.ephemeral` to `LogStatus`, which every 3.x
// engine does (since "Implement status sinks", 2018). Before, every line went to stdout, which the CLI (>= 3.146.0,
// #18253) shows on the stack's row without severity and repeats under Diagnostics.
// Outside the engine (the CLI's own commands, tests calling the handlers) every line goes to stdout as before.
import { withoutCallerStack } from "../callerStack";
import { engineClient } from "./diagnostics";
import { progress } from "./common";

type EnginePb = typeof import("@pulumi/pulumi/proto/engine_pb");

/** Ephemeral updates are coalesced to at most one per this spacing (50 nodes in flight report in bursts). */
const STATUS_SPACING_MS = 250;
/** Each Log call's own bound; a flush at the end of a run waits at most this long too. */
const LOG_DEADLINE_MS = 10_000;

export interface RowLog {
  /** False outside the engine: then info and status both print to stdout. */
  readonly connected: boolean;
  /** A transition worth keeping: a permanent info line on the row. */
  info(text: string): void;
  /**
   * The live line: replaces the row's status (ephemeral). Given as a function, it is built only when it is sent (at
   * most every STATUS_SPACING_MS): a 1,000-node status made it over every machine on each transition.
   */
  status(text: string | (() => string)): void;
  /** Sends what is queued (bounded): the run's last line must reach the engine before the step ends. */
  flush(): Promise<void>;
}

/** The row log of `urn`; lines go out in order (one Log call at a time), ephemeral ones coalesced. */
export function rowLog(urn: string | undefined): RowLog {
  const engine = urn ? engineClient() : undefined;
  if (!engine) return { connected: false, info: progress, status: (text) => progress(typeof text === "string" ? text : text()), flush: async () => undefined };
  const pb = require("@pulumi/pulumi/proto/engine_pb") as EnginePb;
  const grpc = require("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
  let tail: Promise<void> = Promise.resolve();
  let latest: string | (() => string) | undefined;
  let lastStatusAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;

  const send = (text: string, ephemeral: boolean) => new Promise<void>((resolve) => {
    const req = new pb.LogRequest();
    req.setSeverity(pb.LogSeverity.INFO);
    req.setMessage(text);
    req.setUrn(urn!);
    req.setEphemeral(ephemeral);
    withoutCallerStack(() => engine.log(req, new grpc.Metadata(), { deadline: Date.now() + LOG_DEADLINE_MS }, (err) => {
      if (err && !ephemeral) progress(text); // not lost: the stack row still shows it
      resolve();
    }));
  });
  const enqueue = (text: string, ephemeral: boolean) => {
    tail = tail.then(() => send(text, ephemeral));
  };
  const sendLatest = () => {
    timer = undefined;
    if (latest === undefined) return;
    lastStatusAt = Date.now();
    enqueue(typeof latest === "string" ? latest : latest(), true);
    latest = undefined;
  };
  return {
    connected: true,
    info(text) {
      enqueue(text, false);
    },
    status(text) {
      latest = text;
      if (timer) return;
      const wait = lastStatusAt + STATUS_SPACING_MS - Date.now();
      if (wait <= 0) sendLatest();
      else timer = setTimeout(sendLatest, wait).unref();
    },
    async flush() {
      if (timer) clearTimeout(timer);
      sendLatest();
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([tail, new Promise<void>((r) => { bound = setTimeout(r, LOG_DEADLINE_MS).unref(); })]);
      clearTimeout(bound);
    },
  };
}
