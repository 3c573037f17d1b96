// The defaults of TalosUpgrade's inputs, on their own so the SDK can name them without loading the model (zod, CEL).
// Go durations, as a user writes them.

/** End the update (resumable) when a gate has held this long. */
export const DEFAULT_HOLD_TIMEOUT = "60m";
/** End the update (resumable) when a node is not back on the target within this time. */
export const DEFAULT_NODE_TIMEOUT = "15m";
/** The wait for a node's VolumeAttachments after the drain. */
export const DEFAULT_VOLUME_DETACH = "5m";
