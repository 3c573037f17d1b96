// The rule for "the Pulumi engine is gone", in one place for the two processes the CLI starts that must not outlive
// it: the dynamic provider (engine.ts) and this checkout's Node.js language host (scripts/langhost/, a development
// tool that requires the compiled dist/provider/handlers/engineWatch.js; the provider cannot reach into scripts/,
// which the package does not ship, so the shared piece lives here). Plain Node.js only: no Pulumi, no messages.
// - An address is gone when a TCP connect to it is refused PROBE_FAILURES times in a row, PROBE_EVERY_MS apart. A
//   slow answer is not a refusal (a loaded machine is not a dead engine). Upstream's plugins ask the engine's gRPC
//   health service every 5 minutes (pulumi/pulumi sdk/go/common/util/rpcutil/health.go, v3.x at 1b59498); an orphan
//   living 5 minutes is what this rule exists to avoid, and a refused connect needs no gRPC.
// - A parent is gone when this process has been reparented (to init or a subreaper): the parent that started it died.
// - A standard stream that fails with EPIPE lost its reader, which was the CLI.
import * as net from "node:net";

export const PROBE_EVERY_MS = 2_000;
export const PROBE_TIMEOUT_MS = 2_000;
export const PROBE_FAILURES = 2;
export const PARENT_EVERY_MS = 500;

/** Stops a watch. */
export type Unwatch = () => void;

/** Whether `text` is a gRPC address as the engine passes it (host:port, IPv6 in brackets). */
export function isAddress(text: string): boolean {
  return /^[\w.\-[\]:]+:\d+$/.test(text);
}

/** Calls `onGone` once when connects to `address` (host:port) have been refused PROBE_FAILURES times in a row. */
export function watchAddress(address: string, onGone: () => void, everyMs = PROBE_EVERY_MS): Unwatch {
  const sep = address.lastIndexOf(":");
  const host = address.slice(0, sep).replace(/^\[|\]$/g, "");
  const port = Number(address.slice(sep + 1));
  let refusals = 0;
  let stopped = false;
  const timer = setInterval(() => {
    void refused(host, port).then((no) => {
      refusals = no ? refusals + 1 : 0;
      if (stopped || refusals < PROBE_FAILURES) return;
      stop();
      onGone();
    });
  }, everyMs);
  timer.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return stop;
}

/** Calls `onGone` once when this process's parent is no longer the one it had at the call. */
export function watchParent(onGone: () => void, everyMs = PARENT_EVERY_MS): Unwatch {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Calls `onGone` (once per stream) when a write to one of `streams` fails with EPIPE, and keeps that from throwing. */
export function onBrokenPipe(streams: NodeJS.WritableStream[], onGone: () => void): void {
  for (const stream of streams) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EPIPE") onGone();
    });
  }
}

function refused(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (no: boolean) => {
      socket.destroy();
      resolve(no);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false)); // slow is not gone: only a refusal is
    socket.once("connect", () => done(false));
    socket.once("error", (err: NodeJS.ErrnoException) => done(err.code === "ECONNREFUSED"));
  });
}
