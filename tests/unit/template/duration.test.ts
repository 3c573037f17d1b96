import assert from "node:assert/strict";
import fc from "fast-check";
import { DurationError, formatDuration, formatDurationNs, parseDuration, parseDurationNs } from "../../../provider/template";

describe("template/duration: Go's time.ParseDuration and Duration.String()", () => {
  const valid: [string, number][] = [
    ["0", 0], ["-0", 0], ["+0", 0], ["0s", 0], ["30s", 30_000], ["1h2m3.5s", 3_723_500], ["300ms", 300], ["1.5h", 5_400_000],
    ["-5s", -5_000], ["+5s", 5_000], [".5s", 500], ["5.s", 5_000], ["1us", 0.001], ["1µs", 0.001], ["1μs", 0.001],
    ["1ns", 0.000001], ["2h45m", 9_900_000], ["1m1m", 120_000], ["0.000000001s", 0.000001],
  ];
  for (const [s, ms] of valid) {
    it(`parses ${JSON.stringify(s)} as ${ms} ms`, () => assert.equal(parseDuration(s), ms));
  }

  const invalid: [string, string][] = [
    ["", 'time: invalid duration ""'],
    ["30", 'time: missing unit in duration "30"'],
    ["3600", 'time: missing unit in duration "3600"'],
    ["1d", 'time: unknown unit "d" in duration "1d"'],
    ["1 s", 'time: unknown unit " s" in duration "1 s"'],
    ["s", 'time: invalid duration "s"'],
    [".s", 'time: invalid duration ".s"'],
    ["-", 'time: invalid duration "-"'],
    ["1S", 'time: unknown unit "S" in duration "1S"'],
    ["5 minutes", 'time: unknown unit " minutes" in duration "5 minutes"'],
    ["9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'],
    ["3000000h", 'time: invalid duration "3000000h"'],
    // Object property names are units like any other (found by the property test: "0__proto__" used to throw a TypeError).
    ["0__proto__", 'time: unknown unit "__proto__" in duration "0__proto__"'],
    ["1constructor", 'time: unknown unit "constructor" in duration "1constructor"'],
    ["1é", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'],
  ];
  for (const [s, message] of invalid) {
    it(`rejects ${JSON.stringify(s)} with Go's message`, () => {
      assert.throws(() => parseDuration(s), (err: unknown) => err instanceof DurationError && err.message === message);
    });
  }

  it("accepts the int64 extremes exactly as Go does", () => {
    assert.equal(parseDurationNs("9223372036854775807ns"), 9223372036854775807n);
    assert.equal(parseDurationNs("-9223372036854775808ns"), -9223372036854775808n);
  });

  const formats: [bigint, string][] = [
    [0n, "0s"], [1n, "1ns"], [1_100n, "1.1µs"], [2_200_000n, "2.2ms"], [3_300_000_000n, "3.3s"],
    [4n * 60n * 1_000_000_000n + 5_000_000_000n, "4m5s"], [5_400_000_000_000n, "1h30m0s"], [-5_000_000_000n, "-5s"],
    [9223372036854775807n, "2562047h47m16.854775807s"], [-9223372036854775808n, "-2562047h47m16.854775808s"],
  ];
  for (const [ns, s] of formats) {
    it(`formats ${ns} ns as ${s}`, () => assert.equal(formatDurationNs(ns), s));
  }

  it("formats milliseconds", () => {
    assert.equal(formatDuration(30_000), "30s");
    assert.equal(formatDuration(300), "300ms");
    assert.equal(formatDuration(5_400_000), "1h30m0s");
  });

  it("property: format then parse is the identity on int64 nanoseconds", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (ns) => parseDurationNs(formatDurationNs(ns)) === ns),
      { numRuns: 500 },
    );
  });

  it("property: any string either parses or throws a DurationError, never anything else", () => {
    const alphabet = fc.constantFrom(..."0123456789.+-hmsuµnμ d".split(""));
    const arb = fc.oneof(fc.string(), fc.string({ unit: alphabet, maxLength: 12 }));
    fc.assert(
      fc.property(arb, (s) => {
        try {
          const ms = parseDuration(s);
          return Number.isFinite(ms);
        } catch (err) {
          return err instanceof DurationError;
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("property: accepts exactly Go's grammar ([-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+ with known units, or 0)", () => {
    const grammar = /^[-+]?(0|((\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)$/u;
    const alphabet = fc.constantFrom(..."0123456789.+-hmsuµn".split(""));
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 6 }), (s) => { // short enough never to overflow int64
        let ok = true;
        try {
          parseDurationNs(s);
        } catch {
          ok = false;
        }
        return ok === grammar.test(s);
      }),
      { numRuns: 2000 },
    );
  });
});
