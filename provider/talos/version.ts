// The Talos API's version rules (talosctl's and Omni's), on the shared version implementation (provider/version.ts).
import { compareVersions, isValidVersion, parseVersion } from "../version";

/** ImageService/LifecycleService exist (talosctl's rule: server version > 1.13.0-alpha.2). */
export function supportsLifecycleApi(version: string): boolean {
  return isValidVersion(version) && compareVersions(version, "v1.13.0-alpha.2") > 0;
}

/** Omni stages the legacy upgrade when the node runs 1.9.0–1.9.2 (siderolabs/talos#10163). */
export function needsStagedUpgrade(runningVersion: string): boolean {
  const v = parseVersion(runningVersion);
  return !!v && v.major === 1 && v.minor === 9 && v.patch <= 2;
}
