// Go durations: exactly the grammar of Go's time.ParseDuration, and Duration.String() for formatting.
// Internally nanoseconds as bigint (int64 range, like Go); the public API speaks milliseconds.
import { duration as msg } from "./messages";

/** Thrown for a string that is not a Go duration; `message` is Go's own error text. */
export class DurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DurationError";
  }
}

// A Map, not an object literal: a unit like "__proto__" or "constructor" must be unknown, not an inherited property.
const UNITS: ReadonlyMap<string, bigint> = new Map([
  ["ns", 1n],
  ["us", 1_000n],
  ["µs", 1_000n], // U+00B5 micro sign
  ["μs", 1_000n], // U+03BC Greek mu
  ["ms", 1_000_000n],
  ["s", 1_000_000_000n],
  ["m", 60_000_000_000n],
  ["h", 3_600_000_000_000n],
]);

const TWO63 = 1n << 63n;

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}

/** Parses a Go duration into nanoseconds; throws DurationError with Go's message. */
export function parseDurationNs(orig: string): bigint {
  let s = orig;
  let neg = false;
  if (s !== "") {
    const c = s[0];
    if (c === "-" || c === "+") {
      neg = c === "-";
      s = s.slice(1);
    }
  }
  if (s === "0") return 0n;
  if (s === "") throw new DurationError(msg.invalid(orig));
  let d = 0n;
  while (s !== "") {
    if (!(s[0] === "." || isDigit(s[0]))) throw new DurationError(msg.invalid(orig));
    // leading integer
    let i = 0;
    let v = 0n;
    while (i < s.length && isDigit(s[i])) {
      if (v > TWO63 / 10n) throw new DurationError(msg.invalid(orig));
      v = v * 10n + BigInt(s.charCodeAt(i) - 48);
      if (v > TWO63) throw new DurationError(msg.invalid(orig));
      i++;
    }
    const pre = i !== 0;
    s = s.slice(i);
    // fraction
    let post = false;
    let f = 0n;
    let scale = 1;
    if (s !== "" && s[0] === ".") {
      s = s.slice(1);
      let j = 0;
      let overflow = false;
      while (j < s.length && isDigit(s[j])) {
        if (!overflow) {
          if (f > (TWO63 - 1n) / 10n) {
            overflow = true;
          } else {
            const y = f * 10n + BigInt(s.charCodeAt(j) - 48);
            if (y > TWO63) overflow = true;
            else {
              f = y;
              scale *= 10;
            }
          }
        }
        j++;
      }
      post = j !== 0;
      s = s.slice(j);
    }
    if (!pre && !post) throw new DurationError(msg.invalid(orig));
    // unit
    let k = 0;
    while (k < s.length && !(s[k] === "." || isDigit(s[k]))) k++;
    if (k === 0) throw new DurationError(msg.missingUnit(orig));
    const u = s.slice(0, k);
    s = s.slice(k);
    const unit = UNITS.get(u);
    if (unit === undefined) throw new DurationError(msg.unknownUnit(u, orig));
    if (v > TWO63 / unit) throw new DurationError(msg.invalid(orig));
    v *= unit;
    if (f > 0n) {
      // Go: v += uint64(float64(f) * (float64(unit) / scale)), truncated
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > TWO63) throw new DurationError(msg.invalid(orig));
    }
    d += v;
    if (d > TWO63) throw new DurationError(msg.invalid(orig));
  }
  if (neg) return -d;
  if (d > TWO63 - 1n) throw new DurationError(msg.invalid(orig));
  return d;
}

/** Parses a Go duration (`1h2m3.5s`, `300ms`, `-5s`, `0`) into milliseconds; throws DurationError otherwise. */
export function parseDuration(s: string): number {
  return Number(parseDurationNs(s)) / 1e6;
}

/** True if `s` is accepted by Go's time.ParseDuration. */
export function isDuration(s: string): boolean {
  try {
    parseDurationNs(s);
    return true;
  } catch {
    return false;
  }
}

function fmtFrac(v: bigint, prec: number): { frac: string; rest: bigint } {
  let out = "";
  let print = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    print = print || digit !== 0n;
    if (print) out = digit.toString() + out;
    v /= 10n;
  }
  if (print) out = "." + out;
  return { frac: out, rest: v };
}

/** Go's Duration.String() of a nanosecond count: `1h2m3.5s`, `300ms`, `1.5µs`, `0s`. */
export function formatDurationNs(ns: bigint): string {
  const neg = ns < 0n;
  let u = neg ? -ns : ns;
  let out: string;
  if (u < 1_000_000_000n) {
    if (u === 0n) return "0s";
    let unit: string;
    let prec: number;
    if (u < 1_000n) {
      unit = "ns";
      prec = 0;
    } else if (u < 1_000_000n) {
      unit = "µs";
      prec = 3;
    } else {
      unit = "ms";
      prec = 6;
    }
    const { frac, rest } = fmtFrac(u, prec);
    out = rest.toString() + frac + unit;
  } else {
    const { frac, rest } = fmtFrac(u, 9);
    u = rest;
    out = (u % 60n).toString() + frac + "s";
    u /= 60n;
    if (u > 0n) {
      out = (u % 60n).toString() + "m" + out;
      u /= 60n;
      if (u > 0n) out = u.toString() + "h" + out;
    }
  }
  return neg ? "-" + out : out;
}

/** Go's Duration.String() of a millisecond count (rounded to whole nanoseconds). */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`not a finite duration: ${ms}`);
  return formatDurationNs(BigInt(Math.round(ms * 1e6)));
}

/**
 * The longest wait a Node.js timer can hold: setTimeout takes a signed 32-bit millisecond count and fires at once for
 * anything larger (with only a warning), so `holdTimeout: "720h"` would fail every hold immediately. Durations that
 * become timers are refused above it, naming the field.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** MAX_TIMER_MS as a Go duration a user can type (596h31m23.647s, rounded down to whole hours). */
export const MAX_TIMER_TEXT = "596h";
