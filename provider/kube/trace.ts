// A trace of every Kubernetes API request a port makes, for finding what sits on a rollout's critical path (the
// rollout bench, issue 23): with TALOS_GATE_KUBE_TRACE=<file>, each request appends "<epoch ms> <method> <path>"
// (watches as WATCH). Paths and queries only: credentials travel in headers and never reach the file. Off by default.
import * as fs from "node:fs";

export type RequestTrace = (method: string, url: string) => void;

let shared: RequestTrace | null | undefined;

/** The process's trace (one append stream per process), or undefined when TALOS_GATE_KUBE_TRACE is not set. */
export function requestTrace(): RequestTrace | undefined {
  if (shared === undefined) {
    const file = process.env.TALOS_GATE_KUBE_TRACE;
    if (!file) shared = null;
    else {
      const out = fs.createWriteStream(file, { flags: "a" });
      out.on("error", () => undefined); // a diagnostic: never fails the rollout
      shared = (method, url) => {
        let where = url;
        try {
          const u = new URL(url, "https://x");
          where = u.pathname + u.search;
        } catch {
          // not a URL: as given
        }
        out.write(`${Date.now()} ${method} ${where}\n`);
      };
    }
  }
  return shared ?? undefined;
}
