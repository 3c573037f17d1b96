// The defaults of TalosUpgrade's inputs, on their own so the SDK can name them without loading the model (zod, CEL).
// Go durations, as a user writes them.
import type { DrainMode, EtcdQuorumLoss } from "../rollout/ports";

/** End the update (resumable) when a gate has held this long. */
export const DEFAULT_HOLD_TIMEOUT = "60m";
/** End the update (resumable) when a node is not back on the target within this time. */
export const DEFAULT_NODE_TIMEOUT = "15m";
/** The wait for a node's VolumeAttachments after the drain. */
export const DEFAULT_VOLUME_DETACH = "5m";

/** How a node is drained before its reboot (TalosUpgrade `drain`; the rollout's DrainMode). */
export const DRAIN_MODES = ["auto", "always", "never"] as const satisfies readonly DrainMode[];
/** Whether a control plane may go down although etcd loses quorum for its reboot (TalosUpgrade `etcdQuorumLoss`). */
export const ETCD_QUORUM_LOSS = ["refuse", "allow"] as const satisfies readonly EtcdQuorumLoss[];
/** Drain unless no other node could take the pods. */
export const DEFAULT_DRAIN: DrainMode = "auto";
