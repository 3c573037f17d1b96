// Termination messages the way the kubelet builds them (pkg/kubelet/kuberuntime, pkg/kubelet/container):
// - policy File (default): the contents of the file at terminationMessagePath, capped at 4096 bytes;
// - policy FallbackToLogsOnError: that file if non-empty, else — only when the container failed (exit code != 0) —
//   the last 80 lines of its combined stdout/stderr, capped at the last 2048 bytes.
//
// Substitution: a local process cannot write the container's /dev/termination-log, so the sim's kubelet sets
// TERMINATION_MESSAGE_PATH to a per-pod file and reads that file instead of spec.containers[0].terminationMessagePath.
// Scripts that should work in both places write to "${TERMINATION_MESSAGE_PATH:-/dev/termination-log}".
import * as fs from "node:fs";

export const MAX_TERMINATION_MESSAGE_BYTES = 4096;
export const MAX_LOG_TAIL_LINES = 80;
export const MAX_LOG_TAIL_BYTES = 2048;

/** The last `lines` lines of text, then the last `bytes` bytes of those (like the kubelet's circular buffer). */
export function logTail(text: Buffer | string, lines = MAX_LOG_TAIL_LINES, bytes = MAX_LOG_TAIL_BYTES): string {
  const s = Buffer.isBuffer(text) ? text.toString("utf8") : text;
  const last = Buffer.from(s.split(/(?<=\n)/).slice(-lines).join(""));
  return last.subarray(Math.max(0, last.length - bytes)).toString("utf8");
}

function readCapped(file: string, cap: number): string {
  try {
    const fd = fs.openSync(file, "r");
    try {
      const b = Buffer.alloc(cap);
      const n = fs.readSync(fd, b, 0, cap, 0);
      return b.subarray(0, n).toString("utf8");
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return "";
  }
}

export type TerminationMessagePolicy = "File" | "FallbackToLogsOnError";

export function terminationMessage(opts: {
  policy?: string;
  messageFile: string;
  exitCode: number;
  /** Combined stdout/stderr tail kept by the runner. */
  logs: Buffer;
}): string {
  const fromFile = readCapped(opts.messageFile, MAX_TERMINATION_MESSAGE_BYTES);
  if (opts.policy === "FallbackToLogsOnError" && fromFile.length === 0 && opts.exitCode !== 0) {
    return logTail(opts.logs);
  }
  return fromFile;
}
