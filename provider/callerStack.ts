// grpc-js captures the caller's stack (`new Error()`) when a call starts and formats it into the error when the call
// fails. Under Pulumi every stack is formatted through source-map-support, and a rollout makes thousands of calls
// that are expected to fail (a rebooting node's polls): capturing and formatting those stacks was ~6 % of the
// provider's CPU. A call started inside `withoutCallerStack` captures no frames; its error still says what failed.

/** Runs `start` (which must start a call synchronously) with stack capture off; the limit is restored at once. */
export function withoutCallerStack<T>(start: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return start();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
