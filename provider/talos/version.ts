// The Talos API's version rules (talosctl's and Omni's), on the shared version implementation (provider/version.ts).
import { compareVersions, isValidVersion, parseVersion } from "../version";
import { TalosError } from "./errors";
import { msg } from "./messages";

/**
 * apid routes a call to one node by the `node` header from Talos v1.2.0 (internal/app/apid/pkg/director/director.go:
 * v1.1.0 reads only `nodes`, v1.2.0 reads `node` too). Before, the endpoint answers a call meant for another node
 * itself — an Upgrade would upgrade the endpoint — so a node (or endpoint) answering below v1.2 is refused.
 */
const NODE_HEADER_SINCE = "v1.2.0";

/** Throws TALOS_TOO_OLD, naming the version, when `version` cannot be talked to node by node. */
export function refuseBeforeNodeRouting(node: string, version: string): void {
  if (isValidVersion(version) && compareVersions(version, NODE_HEADER_SINCE) < 0) {
    throw new TalosError("TALOS_TOO_OLD", msg.talosTooOld(node, version), node);
  }
}

/** ImageService/LifecycleService exist (talosctl's rule: server version > 1.13.0-alpha.2). */
export function supportsLifecycleApi(version: string): boolean {
  return isValidVersion(version) && compareVersions(version, "v1.13.0-alpha.2") > 0;
}

/** Omni stages the legacy upgrade when the node runs 1.9.0–1.9.2 (siderolabs/talos#10163). */
export function needsStagedUpgrade(runningVersion: string): boolean {
  const v = parseVersion(runningVersion);
  return !!v && v.major === 1 && v.minor === 9 && v.patch <= 2;
}

/**
 * Whether Talos skips its etcd pre-checks (upgrade mutex, ValidateForUpgrade) for a legacy Upgrade with
 * `preserve: true`, and closes the etcd client those checks open: from v1.12.9, v1.13.4 and v1.14.0-alpha.2
 * (siderolabs/talos 89e307e58 "fix: etcd client leak in the (legacy) Upgrade API", backports 3c576021e in v1.12.9 and
 * cf62af3e2 in v1.13.4; internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go Upgrade:
 * `... && !in.GetForce() && !in.GetPreserve()` and `defer etcdClient.Close()`). Before, each refused Upgrade of a
 * control plane leaked an etcd client. LifecycleService.Upgrade (internal/app/lifecycle/lifecycle.go) checks no etcd.
 */
export function preserveSkipsEtcdChecks(version: string): boolean {
  const at = (v: string) => compareVersions(version, v) >= 0;
  if (!isValidVersion(version)) return false;
  if (at("v1.14.0-alpha.2")) return true;
  if (at("v1.14.0-alpha.0")) return false; // v1.14.0-alpha.0 and alpha.1 were cut before the fix
  if (at("v1.13.4")) return true;
  if (at("v1.13.0-alpha.0")) return false;
  return at("v1.12.9");
}
