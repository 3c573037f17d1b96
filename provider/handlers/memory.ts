// Memory of the provider process during a long rollout. Pulumi starts the provider host itself (`node …/dynamic-
// provider`), so talos-gate cannot pass V8 a heap size; and V8 sizes its first full collection from the memory of the
// machine: on a 24 GiB machine it let a 1,000-node rollout's garbage reach ~220 MB of heap before collecting it once
// (peak RSS ~430 MB, of which ~190 MB is the host and the libraries before any work). So while a rollout runs, the
// heap is looked at every few seconds and collected in full once it has grown by GROWTH_BYTES since the last
// collection — one such GC took 121 ms in a measured 1,000-node run, where V8 itself also collected 38 times.
import * as v8 from "node:v8";
import * as vm from "node:vm";

const GROWTH_BYTES = 32 * 1024 * 1024;
const LOOK_EVERY_MS = 2_000;

export interface HeapPolicy {
  /** Heap in use now, in bytes. */
  heapUsed(): number;
  /** A full collection. */
  collect(): void;
}

/** Decides, at each look, whether to collect: once the heap has grown by `growth` since the last collection. */
export function heapBound(policy: HeapPolicy, growth = GROWTH_BYTES): () => boolean {
  let base = policy.heapUsed();
  return () => {
    if (policy.heapUsed() - base < growth) return false;
    policy.collect();
    base = policy.heapUsed();
    return true;
  };
}

let fullGc: (() => void) | undefined;

/**
 * V8's full collection, made callable once (the flag only exposes `gc` to contexts created after it is set); undefined
 * where the runtime does not allow it — the rollout then runs without the bound rather than not at all.
 */
function processGc(): (() => void) | undefined {
  if (!fullGc) {
    try {
      v8.setFlagsFromString("--expose-gc");
      const gc: unknown = vm.runInNewContext("typeof gc === 'function' ? gc : undefined");
      if (typeof gc === "function") fullGc = gc as () => void;
    } catch {
      // no bound
    }
  }
  return fullGc;
}

/** Bounds the heap while `body` runs (see above). */
export async function withBoundedHeap<T>(body: () => Promise<T>): Promise<T> {
  const gc = processGc();
  if (!gc) return body();
  const look = heapBound({ heapUsed: () => process.memoryUsage().heapUsed, collect: gc });
  const timer = setInterval(look, LOOK_EVERY_MS);
  timer.unref();
  try {
    return await body();
  } finally {
    clearInterval(timer);
  }
}
