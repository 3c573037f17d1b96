// Memory of the provider process during a long rollout. Pulumi starts the provider host itself (`node …/dynamic-
// provider`), so talos-gate cannot pass V8 a heap size; and V8 sizes its collections from the memory of the machine: on
// a 24 GiB machine it let a 1,000-node rollout's garbage reach ~220 MB of heap before collecting it once (peak RSS
// ~430 MB, of which ~190 MB is the host and the libraries before any work). So while a rollout runs:
// - V8's growth factor for its old generation is HEAP_GROWING_PERCENT, from one full collection at the start (which
//   also takes the plan's garbage: the Node list, the images read), so V8 itself collects, incrementally, once the
//   heap is half again what survived;
// - the heap is looked at every few seconds and collected in full (one pause for the whole collection: up to 604 ms
//   on the shared 2-core machine) once it has grown by GROWTH_BYTES from the lowest heap seen since the last
//   collection anyway — the lowest, as V8's own collections bring it down between looks (counted from the heap at the
//   start, one run's heap grew 67 → 138 MB before its first collection).
// Measured in bench/README.md (provider_rss_mb_1000, session 12).
import * as v8 from "node:v8";
import * as vm from "node:vm";

const GROWTH_BYTES = 48 * 1024 * 1024;
const LOOK_EVERY_MS = 2_000;

export interface HeapPolicy {
  /** Heap in use now, in bytes. */
  heapUsed(): number;
  /** A full collection. */
  collect(): void;
}

/**
 * Decides, at each look, whether to collect: once the heap has grown by `growth` from the lowest heap seen since the
 * last collection (V8's own collections bring it down between looks; the lowest is the nearest to what survives).
 */
export function heapBound(policy: HeapPolicy, growth = GROWTH_BYTES): () => boolean {
  let base = policy.heapUsed();
  return () => {
    const used = policy.heapUsed();
    base = Math.min(base, used);
    if (used - base < growth) return false;
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

/**
 * V8's growth factor for its old generation while a rollout runs: its next full collection is due once the old
 * generation is 1.5× what survived the last one, where it picks up to 4× on a 24 GiB machine. V8 reads the flag each
 * time it sets that limit (src/heap/heap-controller.cc MemoryController::GrowingFactor), so it holds from the next
 * full collection on; with Node 22's V8 12.4 a 1,000-node run then needed no forced collection (heap ≤ 99 MB). The flag is the process's: other dynamic providers in this host share it
 * while a rollout runs, and it is set back to 0 (V8's own factor, its default) after the last.
 */
const HEAP_GROWING_PERCENT = 50;

/** What the bound asks of V8 (replaced in tests). */
export interface HeapControls {
  /** A full collection; undefined where the runtime does not allow one (then there is no bound). */
  gc: (() => void) | undefined;
  setGrowingPercent(percent: number): void;
  heapUsed(): number;
}

function v8Controls(): HeapControls {
  return {
    gc: processGc(),
    setGrowingPercent(percent) {
      try {
        v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
      } catch {
        // V8's own factor: the bound still holds
      }
    },
    heapUsed: () => process.memoryUsage().heapUsed,
  };
}

/** Rollouts running in this process (a program may run several at once): the factor is V8's own again after the last. */
let rolloutsRunning = 0;

/** Bounds the heap while `body` runs (see above). */
export async function withBoundedHeap<T>(body: () => Promise<T>, controls: HeapControls = v8Controls()): Promise<T> {
  const { gc } = controls;
  if (!gc) return body();
  let timer: NodeJS.Timeout | undefined;
  try {
    if (rolloutsRunning++ === 0) {
      controls.setGrowingPercent(HEAP_GROWING_PERCENT);
      // V8 sets its next limit from what survives this, with the factor above. Not again for a rollout that starts
      // beside a running one: its pause would stop that one too.
      gc();
    }
    timer = setInterval(heapBound({ heapUsed: controls.heapUsed, collect: gc }), LOOK_EVERY_MS);
    timer.unref();
    return await body();
  } finally {
    clearInterval(timer);
    if (--rolloutsRunning === 0) controls.setGrowingPercent(0);
  }
}
