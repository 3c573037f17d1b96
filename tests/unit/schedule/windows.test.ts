import assert from "node:assert/strict";
import { DateTime } from "luxon";
import { MaintenanceSchedule, parseMaintenanceWindows } from "../../../provider/schedule";

/** An instant given as local wall-clock time in a zone, e.g. at("2026-08-08T02:00", "Europe/Berlin"). */
const at = (local: string, zone = "Europe/Berlin") => {
  const d = DateTime.fromISO(local, { zone });
  assert.ok(d.isValid, `test instant ${local}`);
  return d.toJSDate();
};
const utc = (iso: string) => new Date(iso);
const hours = (a: Date | undefined, b: Date | undefined) => (b!.getTime() - a!.getTime()) / 3_600_000;

function schedule(windows: unknown[]): MaintenanceSchedule {
  const r = parseMaintenanceWindows(windows);
  assert.deepEqual(r.failures, []);
  return r.schedule!;
}
const failures = (input: unknown) => parseMaintenanceWindows(input).failures;

describe("schedule: maintenance windows", () => {
  // 2026-08-08 is a Saturday; Europe/Berlin is on CEST (UTC+2) in August.
  const sat = schedule(["Sat 02:00-06:00 Europe/Berlin"]);

  it("is open inside the window only, the end excluded", () => {
    assert.equal(sat.isOpen(at("2026-08-08T01:59")), false);
    assert.equal(sat.isOpen(at("2026-08-08T02:00")), true);
    assert.equal(sat.isOpen(at("2026-08-08T05:59")), true);
    assert.equal(sat.isOpen(at("2026-08-08T06:00")), false);
    assert.equal(sat.isOpen(at("2026-08-09T03:00")), false, "Sunday");
  });

  it("knows when the current window ends and when the next one starts", () => {
    assert.deepEqual(sat.currentWindowEnd(at("2026-08-08T03:00")), at("2026-08-08T06:00"));
    assert.equal(sat.currentWindowEnd(at("2026-08-08T07:00")), undefined);
    assert.deepEqual(sat.nextWindowStart(at("2026-08-08T07:00")), at("2026-08-15T02:00"));
    assert.deepEqual(sat.nextWindowStart(at("2026-08-08T01:00")), at("2026-08-08T02:00"));
    assert.deepEqual(sat.nextWindowStart(at("2026-08-08T03:00")), at("2026-08-15T02:00"), "strictly after now");
  });

  it("says when it resumes, in the window's zone with UTC beside it", () => {
    assert.equal(sat.closedReason(at("2026-08-08T06:00")),
      "outside the maintenance window, resumes in the next one at Sat 2026-08-15 02:00 Europe/Berlin (00:00 UTC)");
    assert.equal(sat.closedReason(at("2026-08-08T03:00")), undefined);
    assert.equal(sat.planLine(at("2026-08-07T12:00")), "first node starts at Sat 2026-08-08 02:00 Europe/Berlin (00:00 UTC), when the next maintenance window opens");
    assert.equal(sat.planLine(at("2026-08-08T03:00")), "maintenance window open until Sat 2026-08-08 06:00 Europe/Berlin (04:00 UTC)");
    const late = schedule(["Sat 00:30-02:00 Europe/Berlin"]);
    assert.equal(late.planLine(at("2026-08-07T12:00")), "first node starts at Sat 2026-08-08 00:30 Europe/Berlin (2026-08-07 22:30 UTC), when the next maintenance window opens");
  });

  it("day ranges, lists and wrap-around ranges; a range ending before it starts crosses midnight", () => {
    const nights = schedule(["Mon-Fri 22:00-02:00 UTC"]);
    assert.equal(nights.isOpen(utc("2026-08-08T01:00:00Z")), true, "Saturday 01:00 belongs to Friday's window");
    assert.equal(nights.isOpen(utc("2026-08-10T01:00:00Z")), false, "Monday 01:00 would be Sunday's window");
    assert.deepEqual(nights.currentWindowEnd(utc("2026-08-10T23:00:00Z")), utc("2026-08-11T02:00:00Z"));
    const weekend = schedule(["Fri-Mon 10:00-11:00 UTC", "Wed,thursday 10:00-11:00 UTC"]);
    for (const [day, open] of [["03", true], ["04", false], ["05", true], ["06", true], ["07", true], ["08", true], ["09", true]] as const) {
      assert.equal(weekend.isOpen(utc(`2026-08-${day}T10:30:00Z`)), open, `2026-08-${day}`);
    }
    const whole = schedule(["Sun 00:00-24:00 UTC"]);
    assert.equal(hours(utc("2026-08-09T00:00:00Z"), whole.currentWindowEnd(utc("2026-08-09T00:00:00Z"))), 24);
  });

  it("says what a closed window waits for, with the time left to the minute; nothing to wait for when none opens ahead", () => {
    assert.equal(sat.waitingReason(at("2026-08-07T22:48")),
      "waiting for the maintenance window: next opens Sat 2026-08-08 02:00 Europe/Berlin (00:00 UTC), in 3h12m");
    assert.equal(sat.waitingReason(at("2026-08-08T06:00")),
      "waiting for the maintenance window: next opens Sat 2026-08-15 02:00 Europe/Berlin (00:00 UTC), in 6d20h");
    assert.equal(sat.waitingReason(at("2026-08-08T01:59:30")), "waiting for the maintenance window: next opens Sat 2026-08-08 02:00 Europe/Berlin (00:00 UTC), in 1m",
      "rounded up: never \"in 0m\"");
    assert.equal(sat.waitingReason(at("2026-08-08T03:00")), undefined, "open");
    const leap = schedule([{ cron: "0 0 29 2 *", duration: "1h", timeZone: "UTC" }]); // next opens in 2028
    assert.equal(leap.waitingReason(utc("2026-03-01T00:00:00Z")), undefined);
    assert.match(leap.closedReason(utc("2026-03-01T00:00:00Z"))!, /none opens within 366 days/);
  });

  it("names UTC windows once", () => {
    assert.equal(schedule(["Sun 01:00-02:00 UTC"]).closedReason(utc("2026-08-08T12:00:00Z")),
      "outside the maintenance window, resumes in the next one at Sun 2026-08-09 01:00 UTC");
  });

  it("merges adjoining and overlapping windows of both forms into one", () => {
    const s = schedule(["Sat 02:00-04:00 UTC", "Sat 04:00-05:00 UTC", { cron: "30 4 * * 6", duration: "2h", timeZone: "UTC" }]);
    assert.deepEqual(s.currentWindowEnd(utc("2026-08-08T02:30:00Z")), utc("2026-08-08T06:30:00Z"));
  });

  describe("across DST in Europe/Berlin", () => {
    // 2026-03-29: 02:00 CET → 03:00 CEST (the night is 1 h shorter); 2026-10-25: 03:00 CEST → 02:00 CET (1 h longer).
    const night = schedule(["Sun 01:00-05:00 Europe/Berlin"]);

    it("spring forward: a wall-clock window is one hour shorter and ends at 05:00 CEST", () => {
      const start = night.nextWindowStart(at("2026-03-28T12:00"));
      assert.deepEqual(start, utc("2026-03-29T00:00:00Z"), "01:00 CET");
      const end = night.currentWindowEnd(start!);
      assert.deepEqual(end, utc("2026-03-29T03:00:00Z"), "05:00 CEST");
      assert.equal(hours(start, end), 3);
      assert.equal(night.isOpen(utc("2026-03-29T02:59:00Z")), true);
      assert.equal(night.isOpen(utc("2026-03-29T03:00:00Z")), false);
    });

    it("fall back: a wall-clock window is one hour longer and ends at 05:00 CET", () => {
      const start = night.nextWindowStart(at("2026-10-24T12:00"));
      assert.deepEqual(start, utc("2026-10-24T23:00:00Z"), "01:00 CEST");
      const end = night.currentWindowEnd(start!);
      assert.deepEqual(end, utc("2026-10-25T04:00:00Z"), "05:00 CET");
      assert.equal(hours(start, end), 5);
    });

    it("a start in the skipped hour begins when the clock jumps; in the repeated hour at its later occurrence", () => {
      const skipped = schedule(["Sun 02:30-04:00 Europe/Berlin"]);
      assert.deepEqual(skipped.nextWindowStart(at("2026-03-28T12:00")), utc("2026-03-29T01:30:00Z"), "03:30 CEST");
      assert.deepEqual(skipped.nextWindowStart(at("2026-10-24T12:00")), utc("2026-10-25T01:30:00Z"), "02:30 CET, the later one");
    });

    it("cron starts keep an elapsed duration; a start in the skipped hour fires at the jump, the repeated hour once", () => {
      const spring = schedule([{ cron: "0 2 * * 0", duration: "3h", timeZone: "Europe/Berlin" }]);
      const s = spring.nextWindowStart(at("2026-03-28T12:00"));
      assert.deepEqual(s, utc("2026-03-29T01:00:00Z"), "03:00 CEST");
      assert.equal(hours(s, spring.currentWindowEnd(s!)), 3);
      const fall = schedule([{ cron: "30 2 * * 0", duration: "1h", timeZone: "Europe/Berlin" }]);
      const f = fall.nextWindowStart(at("2026-10-24T12:00"));
      assert.deepEqual(f, utc("2026-10-25T00:30:00Z"), "02:30 CEST, the first occurrence");
      assert.deepEqual(fall.nextWindowStart(utc("2026-10-25T01:31:00Z")), utc("2026-11-01T01:30:00Z"), "not again at 02:30 CET");
      assert.equal(fall.isOpen(utc("2026-10-25T01:45:00Z")), false, "the 1 h window ended at 01:30Z");
    });
  });

  it("cron windows: open from each start for the duration", () => {
    const s = schedule([{ cron: "0 2 * * 6", duration: "4h", timeZone: "Europe/Berlin" }]);
    assert.equal(s.isOpen(at("2026-08-08T01:59")), false);
    assert.equal(s.isOpen(at("2026-08-08T02:00")), true);
    assert.equal(s.isOpen(at("2026-08-08T05:59")), true);
    assert.equal(s.isOpen(at("2026-08-08T06:00")), false);
    assert.deepEqual(s.nextWindowStart(at("2026-08-08T06:00")), at("2026-08-15T02:00"));
  });

  it("an every-minute cron is stepped, not probed: the plan says open at least until the chain it followed", () => {
    // On the repro this took 41 s of synchronous CPU (a cron parse per probe, half a million probes).
    const s = schedule([{ cron: "* * * * *", duration: "1m", timeZone: "UTC" }]);
    assert.equal(s.isOpen(utc("2026-08-08T00:00:30Z")), true);
    assert.equal(s.planLine(utc("2026-08-08T00:00:30Z")),
      "maintenance window open until at least Fri 2026-08-14 22:40 UTC (adjoining windows without a gap)");
  });

  it("an H (hashed) cron field means the same minute in every parse, so the plan and the run agree", () => {
    const w = [{ cron: "H 2 * * *", duration: "1h", timeZone: "UTC" }];
    const starts = new Set([1, 2, 3, 4, 5].map(() => schedule(w).nextWindowStart(utc("2026-08-08T00:00:00Z"))!.getTime()));
    assert.equal(starts.size, 1, `one start, got ${[...starts].map((t) => new Date(t).toISOString()).join(", ")}`);
  });

  it("no window within the horizon says so", () => {
    const leap = schedule([{ cron: "0 0 29 2 *", duration: "1h", timeZone: "UTC" }]);
    assert.equal(leap.nextWindowStart(utc("2026-03-01T00:00:00Z")), undefined);
    assert.equal(leap.closedReason(utc("2026-03-01T00:00:00Z")),
      "outside the maintenance window, and none opens within 366 days; check maintenanceWindows");
  });

  it("no windows: no restriction", () => {
    for (const input of [undefined, null, []]) {
      const r = parseMaintenanceWindows(input);
      assert.equal(r.schedule!.isOpen(utc("2026-08-08T00:00:00Z")), true);
      assert.equal(r.schedule!.planLine(utc("2026-08-08T00:00:00Z")), undefined);
    }
  });

  it("invalid windows name maintenanceWindows[i] (and the key) and say what is wrong", () => {
    assert.deepEqual(failures("Sat 02:00-06:00 UTC").map((f) => f.field), ["maintenanceWindows"]);
    const f = failures([
      "Sat 02:00-06:00",
      "Sa 02:00-06:00 UTC",
      "Sat 2:00-25:00 UTC",
      "Sat 02:00-02:00 UTC",
      "Sat 02:00-06:00 Mars/Base",
      42,
      { cron: "0 2 * *", duration: "4h", timeZone: "UTC" },
      { cron: "61 2 * * *", duration: "soon", timeZone: "Europe/Berlln" },
      { cron: "0 2 * * *", duration: "30s", timeZone: "UTC", every: "week" },
      { duration: "1h" },
    ]);
    const by = (field: string) => f.filter((x) => x.field === field).map((x) => x.message);
    assert.match(by("maintenanceWindows[0]")[0], /must have three parts, days, time range and time zone/);
    assert.match(by("maintenanceWindows[1]")[0], /"Sa" is not a day/);
    assert.match(by("maintenanceWindows[2]")[0], /"2:00-25:00" is not a time range/);
    assert.match(by("maintenanceWindows[3]")[0], /starts and ends at the same time/);
    assert.match(by("maintenanceWindows[4]")[0], /"Mars\/Base" is not an IANA time zone/);
    assert.match(by("maintenanceWindows[5]")[0], /42 is not a maintenance window/);
    assert.match(by("maintenanceWindows[6].cron")[0], /it has 4 fields, not five/);
    assert.match(by("maintenanceWindows[7].cron")[0], /"61 2 \* \* \*" is not a cron expression/);
    assert.match(by("maintenanceWindows[7].duration")[0], /"soon" is not a duration/);
    assert.match(by("maintenanceWindows[7].timeZone")[0], /"Europe\/Berlln" is not an IANA time zone/);
    assert.match(by("maintenanceWindows[8].duration")[0], /at least 1m/);
    assert.match(by("maintenanceWindows[8]")[0], /unknown field "every"/);
    assert.deepEqual(by("maintenanceWindows[9].cron"), ["cron is required"]);
    assert.deepEqual(by("maintenanceWindows[9].timeZone"), ["timeZone is required"]);
  });
});
