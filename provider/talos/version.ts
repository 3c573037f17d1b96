// Talos version strings (semver with a tolerated leading "v"), compared like talosctl's semver.ParseTolerant.

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  /** Pre-release identifiers, e.g. ["beta", "1"]. */
  pre: string[];
}

const RE = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Parses "v1.13.2", "1.13", "v1.13.0-beta.1"; undefined if not a version. */
export function parseVersion(text: string): SemVer | undefined {
  const m = RE.exec(text.trim());
  if (!m) return undefined;
  return { major: +m[1], minor: +(m[2] ?? 0), patch: +(m[3] ?? 0), pre: m[4] ? m[4].split(".") : [] };
}

/** "v1.13.2" form; the input must parse. */
export function formatVersion(v: SemVer): string {
  return `v${v.major}.${v.minor}.${v.patch}${v.pre.length ? "-" + v.pre.join(".") : ""}`;
}

/** Canonical "vX.Y.Z[-pre]" form, or undefined if `text` is not a version. */
export function normalizeVersion(text: string): string | undefined {
  const v = parseVersion(text);
  return v && formatVersion(v);
}

function comparePre(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return a.length === b.length ? 0 : a.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (i >= a.length) return -1;
    if (i >= b.length) return 1;
    const na = /^\d+$/.test(a[i]), nb = /^\d+$/.test(b[i]);
    if (na && nb && +a[i] !== +b[i]) return +a[i] < +b[i] ? -1 : 1;
    if (na !== nb) return na ? -1 : 1;
    if (!na && a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

export function compareSemVer(a: SemVer, b: SemVer): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch || comparePre(a.pre, b.pre);
}

/** Compares two version strings; unparsable versions sort first. */
export function compareVersions(a: string, b: string): number {
  const va = parseVersion(a), vb = parseVersion(b);
  if (!va || !vb) return va ? 1 : vb ? -1 : 0;
  return Math.sign(compareSemVer(va, vb));
}

export function sameVersion(a: string, b: string): boolean {
  const va = parseVersion(a), vb = parseVersion(b);
  return !!va && !!vb && compareSemVer(va, vb) === 0;
}

const LIFECYCLE_AFTER = parseVersion("v1.13.0-alpha.2")!;

/** ImageService/LifecycleService exist (talosctl's rule: server version > 1.13.0-alpha.2). */
export function supportsLifecycleApi(version: string): boolean {
  const v = parseVersion(version);
  return !!v && compareSemVer(v, LIFECYCLE_AFTER) > 0;
}

/** Omni stages the legacy upgrade when the node runs 1.9.0–1.9.2 (siderolabs/talos#10163). */
export function needsStagedUpgrade(runningVersion: string): boolean {
  const v = parseVersion(runningVersion);
  return !!v && v.major === 1 && v.minor === 9 && v.patch <= 2;
}
