// Reacting to an AbortSignal, including one that has already aborted: a listener added to an aborted signal never
// runs, so a wait that registers its listener after an await (a request, a list) would miss an abort that landed
// during it and run to its own end — past a holdTimeout, a cancel or a node timeout (issue 23, session 18: the
// healthcheck runner, aborted while it POSTed its Job, ran its check to the end).

/**
 * Calls `onAbort` once when `signal` aborts — at once when it already has. Returns a function that removes it (call it
 * when the wait ends another way).
 */
export function whenAborted(signal: AbortSignal | undefined, onAbort: () => void): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    onAbort();
    return () => undefined;
  }
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}
