// `talos-gate report`'s pure parts: the model read from a mirrored status (this release's marks, and an older mirror
// without them), the Markdown table and the HTML page, both inert to what the cluster wrote.
import assert from "node:assert/strict";
import { reportHtml, tickStep } from "../../../cli/reportHtml";
import { mdCell, reportMarkdown } from "../../../cli/reportMarkdown";
import { buildReport, reportDuration } from "../../../cli/reportModel";
import { outputOf } from "../../../cli/status";
import { frame } from "../../../cli/watch";

const T0 = Date.UTC(2026, 10, 29, 20, 0, 0);
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

/** A mirrored status as the rollout writes it (JSON-decoded): one node done with marks, one failed, one skipped. */
function mirrored(): Record<string, unknown> {
  return {
    cluster: "prod", phase: "Failed", target: "v1.13.2", lastUpgradeVersion: "v1.12.4", error: "node w-1 not back in 10m",
    startedAt: iso(0), finishedAt: iso(100), updatedAt: iso(100),
    machines: [
      { name: "cp-1", role: "controlplane", from: "v1.12.4", to: "v1.13.2", state: "done", wave: 1, started: iso(10), finished: iso(40), durationMs: 30_000, marks: "g2000 i11000 d20000 r25000 b35000" },
      { name: "w-1", role: "worker", from: "v1.12.4", to: "v1.13.2", state: "failed", wave: 2, started: iso(50), finished: iso(100), durationMs: 50_000, error: "not back | in time", marks: "g42000 d51000 i60000 r62000" },
      { name: "w-2", role: "worker", from: "v1.13.2", to: "v1.13.2", state: "skipped" },
    ],
    healthchecks: [{ id: "cluster-prod-ceph", state: "FAILED", attempts: 4, lastReason: "HEALTH_WARN <b>1 osd</b> down", holds: "3000-9000 44000-" }],
  };
}

describe("cli/report", () => {
  it("reads each node's phases from its marks: gate until the node starts, each phase until the next, the last until the end", () => {
    const r = buildReport(mirrored());
    const cp = r.nodes[0];
    assert.deepEqual(cp.spans.map((s) => [s.phase, (s.start - T0) / 1000, (s.end - T0) / 1000]), [
      ["gate", 2, 10], ["install", 10, 20], ["drain", 20, 25], ["reboot", 25, 35], ["back", 35, 40],
    ]);
    assert.deepEqual(cp.durations, { gate: 8000, install: 10000, drain: 5000, reboot: 10000, back: 5000 });
    assert.equal(cp.totalMs, 30000);
    // The legacy path drains first; a failed node's last phase ends when it failed.
    assert.deepEqual(r.nodes[1].spans.map((s) => [s.phase, (s.start - T0) / 1000, (s.end - T0) / 1000]), [
      ["gate", 42, 50], ["drain", 50, 60], ["install", 60, 62], ["reboot", 62, 100],
    ]);
    assert.deepEqual(r.nodes[2].spans, []);
    assert.deepEqual(r.checks[0].holds.map((h) => [(h.start - T0) / 1000, (h.end - T0) / 1000, h.open]), [[3, 9, false], [44, 100, true]]);
  });

  it("reads a mirror written before the marks existed: one span per node, phase times unknown, totals kept", () => {
    const old = mirrored();
    for (const m of old.machines as Array<Record<string, unknown>>) delete m.marks;
    delete (old.healthchecks as Array<Record<string, unknown>>)[0].holds;
    const r = buildReport(old);
    assert.deepEqual(r.nodes[0].spans.map((s) => s.phase), ["upgrade"]);
    assert.equal(r.nodes[0].detailed, false);
    assert.equal(r.nodes[0].totalMs, 30000);
    assert.deepEqual(r.checks[0].holds, []);
    const md = reportMarkdown(r);
    assert.match(md, /\| cp-1 \| controlplane \| v1\.12\.4 → v1\.13\.2 \| done \| — \| — \| — \| — \| — \| 30\.0s \|/);
    assert.match(md, /phase times are unknown/);
    assert.match(reportHtml(r), /data-phase="upgrade"/);
  });

  it("--markdown: a node table (gate wait, drain, install, reboot, back, total) and a check table (attempts, holds, last failure)", () => {
    const md = reportMarkdown(buildReport(mirrored()));
    assert.equal(md, [
      "### talos-gate rollout of cluster prod",
      "",
      "Failed · target v1.13.2 · 3 machines · 1m40s · started 2026-11-29T20:00:00.000Z",
      "",
      "**failed: node w-1 not back in 10m**",
      "",
      "| node | role | from → to | state | gate wait | drain | install | reboot | back | total |",
      "| --- | --- | --- | --- | --: | --: | --: | --: | --: | --: |",
      "| cp-1 | controlplane | v1.12.4 → v1.13.2 | done | 8.0s | 5.0s | 10.0s | 10.0s | 5.0s | 30.0s |",
      "| w-1 | worker | v1.12.4 → v1.13.2 | failed: not back \\| in time | 8.0s | 10.0s | 2.0s | 38.0s | — | 50.0s |",
      "| w-2 | worker | v1.13.2 → v1.13.2 | skipped | — | — | — | — | — | — |",
      "",
      "| check | state | attempts | holds | last failure |",
      "| --- | --- | --: | --: | --- |",
      "| cluster-prod-ceph | FAILED | 4 | 2 (1m2s) | HEALTH\\_WARN \\<b\\>1 osd\\</b\\> down |",
      "",
    ].join("\n"));
  });

  it("cluster text cannot break out of a cell, inject markup or reach a terminal", () => {
    assert.equal(mdCell("a|b\n<img src=x onerror=alert(1)>\u001b[2J`c`"), "a\\|b \\<img src=x onerror=alert\\(1\\)\\>\\`c\\`");
    const evil = mirrored();
    (evil.machines as Array<Record<string, unknown>>)[0].name = `<script>alert(1)</script>"'&\u001b]0;x\u0007`;
    const html = reportHtml(buildReport(evil));
    assert.doesNotMatch(html, /<script/i);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;&#39;&amp;/);
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(html, /[\u0000-\u0008\u000b-\u001f\u007f]/);
  });

  it("--html: self-contained (no script, nothing fetched), a lane per node and per check, spans by phase, an axis and a legend", () => {
    const html = reportHtml(buildReport(mirrored()));
    assert.doesNotMatch(html, /<script|<link|@import|url\(|https?:\/\/(?!www\.w3\.org)/i);
    assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
    assert.equal([...html.matchAll(/class="lane node-lane"/g)].length, 3);
    assert.equal([...html.matchAll(/class="lane check-lane"/g)].length, 1);
    assert.deepEqual([...html.matchAll(/data-node="([^"]+)"/g)].map((m) => m[1]), ["cp-1", "w-1", "w-2"]);
    assert.equal([...html.matchAll(/data-phase="hold"/g)].length, 2);
    assert.equal([...html.matchAll(/<g class="span" data-phase="(gate|install|drain|reboot|back)"/g)].length, 9);
    assert.match(html, /already on the target/);
    assert.match(html, /<ul class="legend"[^>]*><li>.*gate hold.*drain.*install.*reboot.*back.*check held the gate/s);
    assert.match(html, /class="tick"[^>]*>0s</);
    assert.match(html, /class="tick"[^>]*>1m30s</);
  });

  it("formats durations and picks axis steps on a human scale", () => {
    assert.deepEqual([reportDuration(400), reportDuration(12_345), reportDuration(125_000), reportDuration(3_612_000), reportDuration(undefined)],
      ["0.4s", "12.3s", "2m5s", "1h0m12s", "—"]);
    assert.deepEqual([tickStep(3_000), tickStep(100_000), tickStep(3 * 3600_000)], [500, 15_000, 1800_000]);
  });

  it("status -o: table, yaml or json (--json the same as -o json); anything else is a usage error", () => {
    assert.deepEqual([outputOf({}), outputOf({ output: "table" }), outputOf({ output: "yaml" }), outputOf({ json: true })], ["default", "table", "yaml", "json"]);
    assert.throws(() => outputOf({ output: "wide" }), (e: Error & { exitCode?: number }) =>
      e.message === '-o "wide" is not an output format: use table, yaml or json' && e.exitCode === 2);
  });

  it("status --watch frames: a terminal is redrawn in place; a pipe gets YAML documents separated by --- or one JSON object per line", () => {
    assert.equal(frame("a: 1\n", "yaml", true, false), "\u001b[H\u001b[2Ja: 1\n");
    assert.equal(frame("a: 1\n", "yaml", false, true) + frame("a: 2\n", "default", false, false), "a: 1\n---\na: 2\n");
    assert.equal(frame('{\n  "a": 1\n}\n', "json", false, false), '{"a":1}\n');
  });
});
