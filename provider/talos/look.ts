// PURE: what a look at a node means while an upgrade waits for it to come back (upgrade.ts reads the boot id, and the
// version once the boot id changed). Kept apart from the waiting so each answer is a unit test, not a reboot in the sim.
import { TalosError } from "./errors";
import { msg } from "./messages";
import { sameVersion } from "../version";

/** The last thing the wait saw of the node: the timeout error says it. */
export type LastSeen =
  | { seen: "nothing" }
  | { seen: "down"; detail: string }
  | { seen: "same-boot"; unansweredSince?: string }
  | { seen: "other-version"; version: string };

/** One answered look: the node still on its old boot, or booted anew and running `version`. */
export type Look = { booted: false } | { booted: true; version: string };

/** What the wait knows besides the look. */
export interface WaitFacts {
  node: string;
  target: string;
  /** A staged legacy upgrade (Talos 1.9.0–1.9.2) boots once more before the new version runs. */
  staged: boolean;
  /** Our legacy Upgrade was answered LOCKED: another run's upgrade may be what reboots the node. */
  lockedOut: boolean;
}

export type LookMeaning =
  | { outcome: "back" }
  | { outcome: "waiting"; last: LastSeen }
  | { outcome: "failed"; error: TalosError };

/** What one answered look means: the node is back on the target, still on its way, or the upgrade failed. */
export function lookMeaning(w: WaitFacts, look: Look): LookMeaning {
  if (!look.booted) return { outcome: "waiting", last: { seen: "same-boot" } };
  if (sameVersion(look.version, w.target)) return { outcome: "back" };
  // A staged upgrade boots once more before the new version runs; elsewhere this is an A/B rollback.
  if (w.staged) return { outcome: "waiting", last: { seen: "other-version", version: look.version } };
  if (w.lockedOut) return { outcome: "failed", error: new TalosError("LOCKED", msg.otherUpgradeLanded(w.node, look.version, w.target), w.node) };
  return { outcome: "failed", error: new TalosError("ROLLED_BACK", msg.rolledBack(w.node, look.version, w.target), w.node) };
}

/**
 * What the wait knows after a look that failed. A node that refuses or drops the connection is down. A look that got
 * no answer in time proves nothing about a node last seen up on its old boot (an overloaded node, or a busy machine
 * running the client, answers late): it stays "same boot", noting the looks after it went unanswered, so a lost
 * answer is still named as one at the timeout rather than read as a node that went down.
 */
export function afterFailedLook(last: LastSeen, detail: string, unanswered: boolean): LastSeen {
  if (unanswered && last.seen === "same-boot") return { seen: "same-boot", unansweredSince: detail };
  return { seen: "down", detail };
}

/** The "last seen" words of the timeout message. */
export function lastSeenText(l: LastSeen): string {
  switch (l.seen) {
    case "nothing":
      return msg.lastNothing();
    case "down":
      return msg.lastDown(l.detail);
    case "same-boot":
      return l.unansweredSince === undefined ? msg.lastSameBoot() : msg.lastSameBootThenUnanswered(l.unansweredSince);
    case "other-version":
      return msg.lastOtherVersion(l.version);
  }
}

/** An action whose answer was lost after it may have reached the node (see upgrade.ts' header). */
export interface LostAnswer {
  action: string;
  detail: string;
}

/**
 * The error when nodeTimeout ends the wait: a lost answer and a node that never rebooted say the request may not have
 * arrived; a staged upgrade last seen on another version was rolled back; otherwise the node did not come back.
 */
export function waitTimeoutError(w: Omit<WaitFacts, "lockedOut">, last: LastSeen, lostAnswer: LostAnswer | undefined, nodeTimeoutMs: number): TalosError {
  if (lostAnswer && last.seen === "same-boot") {
    return new TalosError("TIMEOUT", msg.answerLost(w.node, lostAnswer.action, lostAnswer.detail, nodeTimeoutMs, lastSeenText(last)), w.node);
  }
  return new TalosError("TIMEOUT", w.staged && last.seen === "other-version"
    ? msg.rolledBack(w.node, last.version, w.target)
    : msg.notBack(w.node, w.target, nodeTimeoutMs, lastSeenText(last)), w.node);
}
