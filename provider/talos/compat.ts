// Talos' upgrade paths and Kubernetes ranges, on the table generated from Talos' own compatibility package
// (compatTable.ts, scripts/gen-compat.ts). PURE: no I/O. The rules compare as Talos does (siderolabs/talos
// pkg/machinery/compatibility/talos_version.go UpgradeableFrom, kubernetes_version.go SupportedWith, at the commit
// named in compatTable.ts): major.minor.patch only, pre-release ignored; a release not in the table is not checked.
import { compareVersions, normalizeVersion, parseVersion } from "../version";
import { msg } from "./messages";
import { TALOS_COMPAT_SOURCE, TALOS_RELEASES, type TalosReleaseRule } from "./compatTable";

export { TALOS_COMPAT_SOURCE, TALOS_RELEASES, type TalosReleaseRule };

type Core = [number, number, number];

function core(version: string): Core | undefined {
  const v = parseVersion(version);
  return v && [v.major, v.minor, v.patch];
}

/** Talos' ordered triple comparison (pre-release and build ignored). */
function cmp(a: Core, b: Core): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

const releaseOf = (c: Core) => `${c[0]}.${c[1]}`;

/** The rules of the release `version` belongs to ("v1.13.2" → 1.13's), or undefined when the table does not know it. */
export function releaseRule(version: string): TalosReleaseRule | undefined {
  const c = core(version);
  return c && TALOS_RELEASES.find((r) => r.release === releaseOf(c));
}

export interface PathRefusal {
  /** What Talos' installer checks: too old to upgrade, too new to go down, or a denied host version. */
  kind: "tooOld" | "tooNew" | "denied";
  /** The rule in words, e.g. "Talos 1.13 upgrades from ≥ 1.11.0". */
  rule: string;
  downgrade: boolean;
}

/**
 * Why Talos' installer of `target` refuses a host on `host`; undefined when it accepts it, or when the table does not
 * know the target's release (see `releaseRule`) or either text is not a version.
 */
export function upgradeRefusal(host: string, target: string): PathRefusal | undefined {
  const h = core(host), t = core(target), rule = releaseRule(target);
  if (!h || !t || !rule) return undefined;
  const downgrade = cmp(h, t) > 0;
  if (cmp(h, core(rule.minHostUpgrade)!) < 0) return { kind: "tooOld", rule: msg.pathTooOld(rule.release, rule.minHostUpgrade), downgrade };
  if (cmp(h, core(rule.maxHostDowngrade)!) >= 0) return { kind: "tooNew", rule: msg.pathTooNew(rule.release, rule.maxHostDowngrade), downgrade };
  if (rule.deniedHostUpgrade.some((d) => compareVersions(d, host) === 0)) return { kind: "denied", rule: msg.pathDenied(rule.release, host), downgrade };
  return undefined;
}

export interface KubernetesRefusal {
  tooNew: boolean;
  release: string;
  min: string;
  max: string;
}

/** Whether Talos `target`'s release supports Kubernetes `kubernetes`; undefined when it does, or is not known. */
export function kubernetesRefusal(kubernetes: string, target: string): KubernetesRefusal | undefined {
  const k = core(kubernetes), rule = releaseRule(target);
  if (!k || !rule) return undefined;
  const base = { release: rule.release, min: rule.minKubernetes, max: rule.maxKubernetes };
  if (cmp(k, core(rule.minKubernetes)!) < 0) return { tooNew: false, ...base };
  if (cmp(k, core(rule.maxKubernetes)!) >= 0) return { tooNew: true, ...base };
  return undefined;
}

/** The version a path stops at for a release: its newest stable patch when the table knows one, else `.0`. */
const stopOf = (r: TalosReleaseRule) => r.latestPatch ?? `v${r.release}.0`;

/**
 * Intermediate versions that take a node on `host` to `target` with every step accepted by Talos' installer and every
 * stop's release supporting each of `kubernetes`: at each step the newest release that accepts the node (the fewest
 * reboots). [] when the step is direct; undefined when the known releases give no path.
 */
export function suggestPath(host: string, target: string, kubernetes: readonly string[] = []): string[] | undefined {
  const t = core(target);
  if (!t || !core(host)) return undefined;
  const via: string[] = [];
  let at = host;
  for (let i = 0; i < TALOS_RELEASES.length && upgradeRefusal(at, target); i++) {
    const candidates = TALOS_RELEASES.filter((r) => {
      const stop = stopOf(r);
      return cmp(core(stop)!, core(at)!) > 0 && cmp(core(stop)!, t) < 0 && !upgradeRefusal(at, stop)
        && kubernetes.every((k) => !kubernetesRefusal(k, stop));
    });
    const next = candidates[candidates.length - 1];
    if (!next) return undefined;
    at = stopOf(next);
    via.push(at);
  }
  return upgradeRefusal(at, target) ? undefined : via;
}

/** The refusal of one node's step as the user reads it: the rule, and a path that works (or that there is none). */
export function describeRefusal(node: string, from: string, to: string, r: PathRefusal, kubernetes: readonly string[] = [], finalTarget = to): string {
  const head = msg.pathCannot(node, normalizeVersion(from), normalizeVersion(to), r.rule, r.downgrade);
  if (r.downgrade) return head;
  const via = suggestPath(from, finalTarget, kubernetes);
  return head + (via && via.length ? msg.pathSuggest(via) : msg.pathNoSuggestion());
}

/** Kubernetes outside a step's range, with what to do. `where`: "the API server", "kubelet of w-1". */
export function describeKubernetes(kubernetes: string, where: string, r: KubernetesRefusal): string {
  return msg.kubernetesOutside(normalizeVersion(kubernetes), where, r.release, r.min, r.max) + msg.kubernetesAdvice(r.tooNew);
}

/** Whether the table knows `version`'s release (an unknown one is allowed, with a warning). */
export function knownRelease(version: string): boolean {
  return releaseRule(version) !== undefined;
}

export interface PathInput {
  /** Each node and the version it runs (undefined: unknown, not checked). */
  nodes: ReadonlyArray<{ name: string; version?: string }>;
  /** The Kubernetes versions the cluster runs, each with where it was read ("the API server", "kubelet of w-1"). */
  kubernetes: ReadonlyArray<{ where: string; version: string }>;
  /** The versions still to roll, in order, the last one the target: `[...path, version]` from the current step on. */
  steps: readonly string[];
}

/**
 * Every step each node would take (from its version through the later steps), against Talos' rules: the failures
 * (node, both versions, the rule, a path that works; Kubernetes outside a step's range) and the warnings (a release
 * the table does not know). A node already past a step is refused: a rollout never takes a node back to a step.
 */
export function checkUpgradePath(input: PathInput): { failures: string[]; warnings: string[] } {
  const failures: string[] = [], warnings: string[] = [];
  const target = input.steps[input.steps.length - 1];
  if (!target) return { failures, warnings };
  for (const step of input.steps) {
    if (!knownRelease(step) && parseVersion(step)) warnings.push(msg.unknownRelease(normalizeVersion(step), TALOS_COMPAT_SOURCE));
  }
  const k8s = input.kubernetes.map((k) => k.version);
  const seen = new Set<string>();
  for (const n of input.nodes) {
    if (!n.version || !parseVersion(n.version)) continue;
    const ahead = input.steps.slice(0, -1).find((s) => compareVersions(n.version!, s) > 0);
    if (ahead) {
      failures.push(msg.pathStepBehind(n.name, normalizeVersion(n.version), normalizeVersion(ahead)));
      continue;
    }
    let at = n.version;
    for (const step of input.steps) {
      if (compareVersions(at, step) === 0) continue;
      const r = upgradeRefusal(at, step);
      if (r) {
        failures.push(describeRefusal(n.name, at, step, r, k8s, target));
        break;
      }
      at = step;
    }
  }
  for (const step of input.steps) {
    for (const k of input.kubernetes) {
      const r = kubernetesRefusal(k.version, step);
      const key = `${k.version}|${r?.release}`;
      if (r && !seen.has(key)) {
        seen.add(key);
        failures.push(describeKubernetes(k.version, k.where, r));
      }
    }
  }
  return { failures, warnings };
}
