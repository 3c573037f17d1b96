// The next wave's installer images, read from its nodes while its gate runs (issue 23): when a node starts, its image
// is known, and the Talos port sends the pull beside its first look instead of after it. A node's own installer
// (platform, schematic, extensions) changes only when something installs on it, and the run holds the cluster's Lease;
// still, a read done more than PREPARED_FRESH_MS ago (a gate that held long) is not used: the node's start reads it
// again, as it does after a read that failed.
import type { Machine } from "./ports";

/** How long an image read ahead stays usable. */
export const PREPARED_FRESH_MS = 60_000;

interface Prepared {
  machine: Machine;
  target: string;
  /** When the read was done (started, while it runs). */
  at: number;
  /** The read, until it settles; its image once it has. */
  read: Promise<string>;
  image?: string;
}

export class PreparedImages {
  private readonly byNode = new Map<string, Prepared>();

  constructor(
    private readonly imageOf: (machine: Machine, target: string) => string | Promise<string>,
    private readonly now: () => number,
  ) {}

  /** Starts reading each node's image for its target (a node read for the same target recently is not read again). */
  start(nodes: ReadonlyArray<{ machine: Machine; target: string }>): void {
    for (const { machine, target } of nodes) {
      const had = this.byNode.get(machine.name);
      if (had && had.target === target && this.fresh(had)) continue;
      const entry: Prepared = { machine, target, at: this.now(), read: Promise.resolve().then(() => this.imageOf(machine, target)) };
      this.byNode.set(machine.name, entry);
      entry.read.then((image) => {
        entry.image = image;
        entry.at = this.now();
      }, () => {
        if (this.byNode.get(machine.name) === entry) this.byNode.delete(machine.name); // read again at the node's start
      });
    }
  }

  /**
   * The node's image for `target` read ahead: the image when the read is done, the read while it is still under way
   * (read again if it fails), undefined when there is none (never read, failed, stale, or for another target). Used once.
   */
  take(node: string, target: string): string | Promise<string> | undefined {
    const entry = this.byNode.get(node);
    this.byNode.delete(node);
    if (!entry || entry.target !== target || !this.fresh(entry)) return undefined;
    return entry.image ?? entry.read.catch(() => this.imageOf(entry.machine, target));
  }

  private fresh(entry: Prepared): boolean {
    return this.now() - entry.at <= PREPARED_FRESH_MS;
  }
}
