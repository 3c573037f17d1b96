// The installer's pre-flight check on upgrades, as Talos' does it: the target's installer asks the host's version and
// refuses one its release does not take (siderolabs/talos cmd/installer/pkg/install/preflight.go `talosVersion` →
// pkg/machinery/compatibility/talos_version.go `UpgradeableFrom`, at the commit named in provider/talos/compatTable.ts),
// logging the reason and exiting non-zero. Versions print as Go's semver String() does (no leading "v").
import { upgradeRefusal } from "../../provider/talos/compat";
import { versionFromImage } from "../../provider/talos/image";

const bare = (v: string) => v.replace(/^v/, "");

/** The installer's log line when it refuses to upgrade a host on `host` with `image`; undefined when it accepts. */
export function preflightRefusal(host: string, image: string): string | undefined {
  const target = versionFromImage(image);
  const r = target ? upgradeRefusal(host, target) : undefined;
  if (!r || !target) return undefined;
  const why = r.kind === "tooOld" ? "is too old to upgrade to" : r.kind === "tooNew" ? "is too new to downgrade to" : "is denied for upgrade to";
  return `pre-flight checks failed: host version ${bare(host)} ${why} Talos ${bare(target)}`;
}
