// Event helpers of the simulated nodes: xid-like ids and builders for the machine.* event payloads.
import * as crypto from "node:crypto";
import { AnyMessage, packEvent } from "../../provider/talos/proto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuv"; // base32hex, like rs/xid
const machine = crypto.randomBytes(3);
let counter = crypto.randomBytes(3).readUIntBE(0, 3);

/** A 20-character, time-sortable id in the format of rs/xid (what Talos uses for event ids). */
export function xid(): string {
  const b = Buffer.alloc(12);
  b.writeUInt32BE(Math.floor(Date.now() / 1000), 0);
  machine.copy(b, 4);
  b.writeUInt16BE(process.pid & 0xffff, 7);
  counter = (counter + 1) & 0xffffff;
  b.writeUIntBE(counter, 9, 3);
  let bits = 0, value = 0, out = "";
  for (const byte of b) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out + ALPHABET[(value << (5 - bits)) & 31];
}

export const SequenceAction = { NOOP: 0, START: 1, STOP: 2 } as const;
export const PhaseAction = { START: 0, STOP: 1 } as const;
export const ErrorCode = { FATAL: 0, LOCKED: 1, CANCELED: 2 } as const;
export const Stage = {
  UNKNOWN: 0, BOOTING: 1, INSTALLING: 2, MAINTENANCE: 3, RUNNING: 4, REBOOTING: 5, SHUTTING_DOWN: 6, RESETTING: 7, UPGRADING: 8,
} as const;

export const ev = {
  sequence: (sequence: string, action: number, error?: { code: number; message: string }): AnyMessage =>
    packEvent("SequenceEvent", { sequence, action, ...(error ? { error } : {}) }),
  phase: (phase: string, action: number): AnyMessage => packEvent("PhaseEvent", { phase, action }),
  task: (task: string, action: number): AnyMessage => packEvent("TaskEvent", { task, action }),
  status: (stage: number, ready: boolean, unmet: { name: string; reason: string }[] = []): AnyMessage =>
    packEvent("MachineStatusEvent", { stage, status: { ready, unmet_conditions: unmet } }),
};
