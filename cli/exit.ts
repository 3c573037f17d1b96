// Ending the `talos-gate` process. On Linux, writes to a pipe are asynchronous: `process.exit` right after a large
// write (`talos-gate status --json | jq` at 1,000 nodes is ~200 KB) drops what the pipe has not taken yet, and the
// reader gets truncated JSON. So the command's output is flushed first, then the process exits (explicitly: open
// gRPC channels or watches must not keep a finished command alive).
import type { Writable } from "node:stream";

/** Resolves once everything written to `stream` so far has been handed to the OS (or the stream is gone). */
export function flushed(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.writableEnded) return resolve();
    // Writes complete in order: the callback of an empty write runs after every earlier write's.
    stream.write("", () => resolve());
    // A reader that went away (EPIPE) never completes the write; the error ends the wait.
    stream.once("error", () => resolve());
  });
}

export async function exitAfterFlush(code: number, streams: Writable[] = [process.stdout, process.stderr]): Promise<never> {
  await Promise.all(streams.map(flushed));
  process.exit(code);
}
