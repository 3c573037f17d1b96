import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { cpuNote, cpuShares, cpuWindow, machineNote, readCpuTicks } from "../../../bench/metrics";

describe("bench machine notes", () => {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const before = [1000, 10, 200, 5000, 50, 0, 40, 100, 0, 0];

  it("computes the cores' busy and steal shares between two /proc/stat readings", () => {
    const after = [1600, 10, 300, 5100, 50, 0, 40, 200, 0, 0]; // +600 user, +100 system, +100 idle, +100 steal
    const s = cpuShares(before, after)!;
    assert.equal(s.busy, 700 / 900);
    assert.equal(s.steal, 100 / 900);
  });

  it("counts iowait as not busy and ignores guest time (already in user)", () => {
    const after = [1100, 10, 200, 5100, 150, 0, 40, 100, 100, 0];
    const s = cpuShares(before, after)!;
    assert.equal(s.busy, 100 / 300);
    assert.equal(s.steal, 0);
  });

  it("gives nothing for readings that went backwards, are short or span no time", () => {
    assert.equal(cpuShares(before, before), undefined);
    assert.equal(cpuShares(before, [900, 10, 200, 5000, 50, 0, 40, 100]), undefined);
    assert.equal(cpuShares(before, [1000, 10, 200]), undefined);
  });

  it("reads the first line of a stat file, and nothing from a file without it", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-stat-"));
    try {
      const good = path.join(dir, "stat");
      fs.writeFileSync(good, "cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 1 1 1 1 1 1 1 1 1\nintr 5\n");
      assert.deepEqual(readCpuTicks(good), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      const bad = path.join(dir, "other");
      fs.writeFileSync(bad, "intr 5\n");
      assert.equal(readCpuTicks(bad), undefined);
      assert.equal(readCpuTicks(path.join(dir, "missing")), undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("sees this process's own work in a window on the machine's /proc/stat", function () {
    if (!readCpuTicks()) this.skip(); // no /proc: not Linux
    const window = cpuWindow();
    const until = Date.now() + 120; // several clock ticks (USER_HZ 100) of CPU
    while (Date.now() < until) Math.sqrt(Math.random());
    const s = window();
    assert.ok(s, "a window over 120 ms of work has shares");
    assert.ok(s.busy > 0 && s.busy <= 1, `busy ${s.busy}`);
    assert.ok(s.steal >= 0 && s.steal < 1, `steal ${s.steal}`);
  });

  it("says what it measured, and only that", () => {
    assert.equal(cpuNote({ busy: 0.994, steal: 0.0031, speedMs: 112.4 }), "cores 99 % busy, steal 0.3 %, CPU probe 112 ms");
    assert.equal(cpuNote({ speedMs: 98 }), "CPU probe 98 ms");
    assert.match(machineNote(1.5, 5.25, { busy: 1, steal: 0 }), /^load average 1\.5 → 5\.25 \(\d+ shared cores, .*\); cores 100 % busy, steal 0 %$/);
    assert.doesNotMatch(machineNote(1, 2), /busy/);
  });
});
