// Talos versions: semantic versions with an optional leading "v" ("v1.13.2", "1.13.0-beta.1"), one implementation for
// every layer (the rollout core plans with it, the Talos port picks upgrade paths with it). PURE: no I/O. Comparison
// follows Semantic Versioning 2.0.0 precedence (build metadata is ignored).

/** The message of a text that is not a version. */
export function invalidVersion(what: string, text: string): string {
  return `invalid ${what} ${JSON.stringify(text)}: expected a semantic version such as "v1.13.2" or "1.13.0-beta.1"`;
}

export interface ParsedVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** Pre-release identifiers ("beta", 1); empty for a release. */
  readonly prerelease: ReadonlyArray<string | number>;
  /** Build metadata identifiers; never affect precedence. */
  readonly build: readonly string[];
}

const SEMVER =
  /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

/**
 * Texts parsed lately (frozen results, undefined for not a version). A rollout compares the same few versions for every
 * machine at every plan and Node event: at 1,000 nodes, parsing them again each time was ~8 % of what the provider
 * allocated (issue 23). Bounded: a run sees a handful of versions; anything more starts the memo afresh.
 */
const parsed = new Map<string, ParsedVersion | undefined>();
const PARSED_MAX = 256;

/** Parses "v1.13.2" / "1.13.2-beta.1+build.5"; undefined if the text is not a semantic version. */
export function parseVersion(text: string): ParsedVersion | undefined {
  const held = parsed.get(text);
  if (held !== undefined || parsed.has(text)) return held;
  const v = parseUncached(text);
  if (parsed.size >= PARSED_MAX) parsed.clear();
  parsed.set(text, v);
  return v;
}

/** How many texts the memo holds (for its bound's test). */
export function parsedVersionsHeld(): number {
  return parsed.size;
}

function parseUncached(text: string): ParsedVersion | undefined {
  const m = SEMVER.exec(text.trim());
  if (!m) return undefined;
  const nums = [m[1], m[2], m[3]].map(Number);
  if (nums.some((n) => !Number.isSafeInteger(n))) return undefined;
  return Object.freeze({
    major: nums[0],
    minor: nums[1],
    patch: nums[2],
    prerelease: Object.freeze(m[4] === undefined ? [] : m[4].split(".").map((id) => (/^\d+$/.test(id) ? Number(id) : id))),
    build: Object.freeze(m[5] === undefined ? [] : m[5].split(".")),
  });
}

export function isValidVersion(text: string): boolean {
  return parseVersion(text) !== undefined;
}

/** Parses or throws an Error naming the offending text and the expected form. */
export function mustParseVersion(text: string, what = "version"): ParsedVersion {
  const v = parseVersion(text);
  if (!v) throw new Error(invalidVersion(what, text));
  return v;
}

/** Canonical form with a leading "v" and without build metadata: "1.13.2+x" → "v1.13.2". */
export function normalizeVersion(text: string): string {
  const v = mustParseVersion(text);
  const pre = v.prerelease.length ? `-${v.prerelease.join(".")}` : "";
  return `v${v.major}.${v.minor}.${v.patch}${pre}`;
}

function compareIdentifiers(a: string | number, b: string | number): number {
  if (typeof a === "number" && typeof b === "number") return a === b ? 0 : a < b ? -1 : 1;
  if (typeof a === "number") return -1; // numeric identifiers have lower precedence
  if (typeof b === "number") return 1;
  return a === b ? 0 : a < b ? -1 : 1; // ASCII order
}

function compareParsed(a: ParsedVersion, b: ParsedVersion): -1 | 0 | 1 {
  for (const k of ["major", "minor", "patch"] as const) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  const pa = a.prerelease, pb = b.prerelease;
  if (pa.length === 0 && pb.length === 0) return 0;
  if (pa.length === 0) return 1; // a release ranks above its pre-releases
  if (pb.length === 0) return -1;
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const c = compareIdentifiers(pa[i], pb[i]);
    if (c !== 0) return c < 0 ? -1 : 1;
  }
  return pa.length === pb.length ? 0 : pa.length < pb.length ? -1 : 1;
}

/** Semver precedence of two version strings: -1, 0 or 1. Throws on text that is not a version. */
export function compareVersions(a: string, b: string): -1 | 0 | 1 {
  return compareParsed(mustParseVersion(a), mustParseVersion(b));
}

/**
 * Whether two versions name the same release ("v1.13.2" = "1.13.2"; build metadata ignored). Undefined or unparsable
 * text is equal only to the identical string, so an unknown version never counts as "at the target".
 */
export function sameVersion(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  // The same text is the same release, parsable or not (asked for every machine of a plan, thousands of times a run).
  if (a === b) return true;
  const pa = parseVersion(a), pb = parseVersion(b);
  if (!pa || !pb) return a.trim() === b.trim();
  return compareParsed(pa, pb) === 0;
}

/** `version >= minimum` by semver precedence (e.g. `atLeast("v1.13.0-beta.0", "1.13.0")` is false). */
export function atLeast(version: string, minimum: string): boolean {
  return compareVersions(version, minimum) >= 0;
}

/** Whether `version` is at least `major.minor` (pre-releases of that minor included): the Talos API feature test. */
export function atLeastMinor(version: string, major: number, minor: number): boolean {
  const v = mustParseVersion(version);
  return v.major !== major ? v.major > major : v.minor >= minor;
}

/** Canonical form, or undefined when `text` is not a version (for tags read from images and nodes). */
export function tryNormalizeVersion(text: string): string | undefined {
  return isValidVersion(text) ? normalizeVersion(text) : undefined;
}

/** Sorts version strings ascending by precedence (stable for equal precedence). */
export function sortVersions(versions: readonly string[]): string[] {
  return [...versions].sort(compareVersions);
}
