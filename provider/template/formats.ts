// Library formats that appear in Omni's messages: blang/semver v4 ParseTolerant and google/uuid Parse.
import { uuid as uuidMsg } from "./messages";
import { goQuote } from "./goquote";

export interface SemVer {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: (string | bigint)[];
  build: string[];
}

const DIGITS = /^[0-9]*$/;
const ALNUM = /^[0-9A-Za-z-]*$/;

function parseUint(p: string): bigint {
  if (p === "" || !/^[0-9]+$/.test(p)) throw new Error(`strconv.ParseUint: parsing ${goQuote(p)}: invalid syntax`);
  const v = BigInt(p);
  if (v > 0xffffffffffffffffn) throw new Error(`strconv.ParseUint: parsing ${goQuote(p)}: value out of range`);
  return v;
}

const leadingZero = (p: string) => p.length > 1 && p[0] === "0";

/** blang/semver v4 ParseTolerant; throws Error with the library's message. */
export function parseSemverTolerant(input: string): SemVer {
  let s = input.trim();
  if (s.startsWith("v")) s = s.slice(1);
  let parts = splitN(s, ".", 3).map((p) => {
    if (p.length > 1) {
      p = p.replace(/^0+/, "");
      if (p.length === 0 || !/^[0-9]/.test(p)) p = "0" + p;
    }
    return p;
  });
  if (parts.length < 3) {
    if (/[+-]/.test(parts[parts.length - 1]!)) throw new Error("Short version cannot contain PreRelease/Build meta data");
    while (parts.length < 3) parts = [...parts, "0"];
  }
  return parseSemverStrict(parts.join("."));
}

function splitN(s: string, sep: string, n: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (out.length < n - 1) {
    const i = rest.indexOf(sep);
    if (i < 0) break;
    out.push(rest.slice(0, i));
    rest = rest.slice(i + 1);
  }
  out.push(rest);
  return out;
}

function parseSemverStrict(s: string): SemVer {
  if (s.length === 0) throw new Error("Version string empty");
  const parts = splitN(s, ".", 3);
  if (parts.length !== 3) throw new Error("No Major.Minor.Patch elements found");
  const [maj, min] = parts as [string, string, string];
  if (!DIGITS.test(maj)) throw new Error(`Invalid character(s) found in major number ${goQuote(maj)}`);
  if (leadingZero(maj)) throw new Error(`Major number must not contain leading zeroes ${goQuote(maj)}`);
  const major = parseUint(maj);
  if (!DIGITS.test(min)) throw new Error(`Invalid character(s) found in minor number ${goQuote(min)}`);
  if (leadingZero(min)) throw new Error(`Minor number must not contain leading zeroes ${goQuote(min)}`);
  const minor = parseUint(min);
  let patchStr = parts[2]!;
  let build: string[] = [];
  let pre: string[] = [];
  const b = patchStr.indexOf("+");
  if (b >= 0) {
    build = patchStr.slice(b + 1).split(".");
    patchStr = patchStr.slice(0, b);
  }
  const p = patchStr.indexOf("-");
  if (p >= 0) {
    pre = patchStr.slice(p + 1).split(".");
    patchStr = patchStr.slice(0, p);
  }
  if (!DIGITS.test(patchStr)) throw new Error(`Invalid character(s) found in patch number ${goQuote(patchStr)}`);
  if (leadingZero(patchStr)) throw new Error(`Patch number must not contain leading zeroes ${goQuote(patchStr)}`);
  const patch = parseUint(patchStr);
  const preOut: (string | bigint)[] = [];
  for (const pr of pre) {
    if (pr.length === 0) throw new Error("Prerelease is empty");
    if (DIGITS.test(pr)) {
      if (leadingZero(pr)) throw new Error(`Numeric PreRelease version must not contain leading zeroes ${goQuote(pr)}`);
      preOut.push(parseUint(pr));
    } else if (ALNUM.test(pr)) preOut.push(pr);
    else throw new Error(`Invalid character(s) found in prerelease ${goQuote(pr)}`);
  }
  for (const bd of build) {
    if (bd.length === 0) throw new Error("Build meta data is empty");
    if (!ALNUM.test(bd)) throw new Error(`Invalid character(s) found in build meta data ${goQuote(bd)}`);
  }
  return { major, minor, patch, pre: preOut, build };
}

/** Semver precedence: -1, 0, 1. */
export function compareSemver(a: SemVer, b: SemVer): number {
  for (const k of ["major", "minor", "patch"] as const) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  if (a.pre.length === 0 && b.pre.length === 0) return 0;
  if (a.pre.length === 0) return 1;
  if (b.pre.length === 0) return -1;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i]!;
    const y = b.pre[i]!;
    if (x === y) continue;
    if (typeof x === "bigint" && typeof y === "bigint") return x < y ? -1 : 1;
    if (typeof x === "bigint") return -1;
    if (typeof y === "bigint") return 1;
    return x < y ? -1 : 1;
  }
  return a.pre.length === b.pre.length ? 0 : a.pre.length < b.pre.length ? -1 : 1;
}

const HEX = /^[0-9a-fA-F]$/;

/** google/uuid Parse (byte-length based); returns the error text or undefined when valid. */
export function uuidError(id: string): string | undefined {
  const bytes = new TextEncoder().encode(id);
  const chr = (i: number) => String.fromCharCode(bytes[i]!);
  let off = 0;
  switch (bytes.length) {
    case 36:
      break;
    case 45: {
      const prefix = new TextDecoder().decode(bytes.slice(0, 9));
      if (prefix.toLowerCase() !== "urn:uuid:") return uuidMsg.urnPrefix(prefix);
      off = 9;
      break;
    }
    case 38:
      off = 1;
      break;
    case 32:
      for (let i = 0; i < 32; i++) if (!HEX.test(chr(i))) return uuidMsg.format;
      return undefined;
    default:
      return uuidMsg.length(bytes.length);
  }
  for (let i = 0; i < 36; i++) {
    const c = chr(off + i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== "-") return uuidMsg.format;
    } else if (!HEX.test(c)) return uuidMsg.format;
  }
  return undefined;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Kubernetes IsDNS1123Label: the list of problems (empty when valid). */
export function dnsLabelErrors(s: string, maxLength: (n: number) => string, format: string): string[] {
  const errs: string[] = [];
  if (s.length > 63) errs.push(maxLength(63));
  if (!DNS_LABEL.test(s)) errs.push(format);
  return errs;
}
