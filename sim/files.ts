// Files the sim writes that hold credentials (kubeconfigs, talosconfigs, keys, tokens): owner-only, also when the file
// already existed (writeFileSync's `mode` applies only to a file it creates, so a rerun kept a world-readable file).
import * as fs from "node:fs";

export function writePrivateFile(file: string, data: string | Uint8Array): void {
  fs.writeFileSync(file, data, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}
