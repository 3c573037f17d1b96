// A worker's cordon lift at the end of its upgrade: sent as soon as its Node reports Ready on the target from its new
// boot (node.ts), its answer no longer holds the wave's end, so the next gate starts meanwhile (issue 23: the PATCH's
// round trip, ~90 ms p50 per wave on the 1,000-node bench's busy API server). Every lift has landed before any next node
// starts (its drain counts the schedulable nodes) and before the run ends; one that failed stops the run at once (its
// `failed` signal is part of the run's stop: a soak or gate that needs the node schedulable does not wait out its
// bound), naming the node.
import { errorText } from "../errorText";

export interface LiftFailure {
  node: string;
  error: string;
}

export class LiftsInFlight {
  private readonly lifts = new Map<string, Promise<string | undefined>>();
  private readonly failure = new AbortController();
  /** The first lift that failed, as soon as it failed (until then undefined). */
  firstFailure: LiftFailure | undefined;

  /** Aborted when a lift fails. */
  get failed(): AbortSignal {
    return this.failure.signal;
  }

  /** Starts `lift` for `node` now; its failure is kept (never thrown here) for `landed`, and aborts `failed`. */
  add(node: string, lift: () => Promise<unknown>): void {
    this.lifts.set(node, Promise.resolve().then(lift).then(() => undefined, (e: unknown) => {
      const error = errorText(e);
      this.firstFailure ??= { node, error };
      this.failure.abort();
      return error;
    }));
  }

  /** Waits for every lift sent so far; the ones that failed, by node name (and forgets them all). */
  async landed(): Promise<LiftFailure[]> {
    const sent = [...this.lifts.entries()];
    this.lifts.clear();
    const errors = await Promise.all(sent.map(([, lift]) => lift));
    return sent.flatMap(([node], i) => (errors[i] === undefined ? [] : [{ node, error: errors[i] }]))
      .sort((a, b) => a.node.localeCompare(b.node));
  }
}
