// What the Pulumi engine tells a dynamic provider, and how we listen, since the dynamic-provider host
// (@pulumi/pulumi/cmd/dynamic-provider) passes none of it on (pulumi-dynamic-providers.md §3, §5):
// - Cancel: on the first Ctrl-C or SIGTERM the CLI sends the gRPC `pulumirpc.ResourceProvider/Cancel` to every
//   provider and lets in-flight steps finish; the host answers it with a no-op. We observe the request itself on the
//   host's HTTP/2 server (Node's http2 `stream` event, before gRPC dispatches it), so a cancelled pipeline stops the
//   rollout before its next node.
// - The engine going away: when the CLI dies outright (SIGKILL, a lost CI runner) the host lives on as an orphan.
//   The engine's address is the host's last argument; while a probe of it is refused, nothing can receive our result,
//   so running rollouts stop before their next node and the process exits once nothing is in flight.
//   The CLI also held the read ends of our stdout and stderr: every write now fails with EPIPE, and the host's own
//   uncaught-exception handler, which prints to stderr, would then spin on its own failure at full CPU for ever (seen:
//   orphans at 100% CPU minutes later). A broken pipe is therefore handled here, and taken as the engine being gone.
//   The probe rule and the broken pipe are engineWatch.ts, shared with this checkout's language host. The parent is
//   not watched here: the CLI starts the provider through a shell script that does not exec node, so our parent is
//   that shell, which outlives the CLI.
// Outside the host (tests, the CLI) none of this is installed.
import * as http2 from "node:http2";
import { isAddress, onBrokenPipe, watchAddress } from "./engineWatch";
import * as msg from "./messages";

const CANCEL_PATH = "/pulumirpc.ResourceProvider/Cancel";

const cancel = new AbortController();
let installed = false;
let engineGone = false;
let inFlight = 0;

/** The engine's gRPC address (host:port) when this process is the dynamic-provider host; else undefined. */
export function engineAddress(): string | undefined {
  const main = require.main?.filename ?? "";
  if (!/[\\/]cmd[\\/]dynamic-provider[\\/]index\.js$/.test(main)) return undefined;
  const last = process.argv[process.argv.length - 1] ?? "";
  return isAddress(last) ? last : undefined;
}

/**
 * Aborted (with the reason as an Error) when the engine cancels the update or is gone. Sticky: one host serves one
 * deployment, and after a cancel the engine starts no new step.
 */
export function engineCancellation(): AbortSignal {
  install();
  return cancel.signal;
}

/** Runs one provider operation, counted so the host can exit once the engine is gone and nothing is in flight. */
export async function tracked<T>(op: () => Promise<T>): Promise<T> {
  install();
  inFlight++;
  try {
    return await op();
  } finally {
    inFlight--;
    exitIfOrphaned();
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  const address = engineAddress();
  if (!address) return;
  observeCancelRequests(() => cancel.abort(new Error(msg.engineCancelled)));
  onBrokenPipe([process.stdout, process.stderr], engineIsGone);
  watchAddress(address, engineIsGone);
}

function engineIsGone(): void {
  if (engineGone) return;
  engineGone = true;
  cancel.abort(new Error(msg.engineGone));
  exitIfOrphaned();
}

/** Calls `onCancel` when any HTTP/2 server of this process receives the provider Cancel RPC. */
export function observeCancelRequests(onCancel: () => void): void {
  for (const probe of [http2.createServer(), http2.createSecureServer()]) {
    const proto = Object.getPrototypeOf(probe) as { emit: (event: string | symbol, ...args: unknown[]) => boolean };
    const emit = proto.emit;
    proto.emit = function (this: unknown, event: string | symbol, ...args: unknown[]): boolean {
      if (event === "stream" && (args[1] as http2.IncomingHttpHeaders | undefined)?.[":path"] === CANCEL_PATH) onCancel();
      return emit.call(this, event, ...args);
    };
  }
}

function exitIfOrphaned(): void {
  if (!engineGone || inFlight > 0) return;
  process.stderr.write(`${msg.engineGoneExit}\n`);
  process.exit(0);
}
