// `talos-gate report --html FILE`: one self-contained page — inline CSS and SVG, no script, nothing fetched (no fonts,
// no images) — with a timeline of the rollout: one lane per node, its phases as coloured spans (Okabe–Ito colours,
// told apart by colour-blind readers too; each span also has a text label when wide enough and a tooltip), the checks'
// holds on their own lanes, a time axis, a legend, and the Markdown report's tables below. Every text from the cluster
// is escaped (and stripped of control characters) before it enters the page.
import { printable } from "./common";
import { reportMsg } from "./messages";
import { REPORT_PHASES, reportDuration, type NodeReport, type ReportPhase, type RolloutReport, type Span } from "./reportModel";

type Paint = ReportPhase | "hold";
const PALETTE: Record<Paint, { fill: string; text: string }> = {
  gate: { fill: "#E69F00", text: "#000" },
  drain: { fill: "#56B4E9", text: "#000" },
  install: { fill: "#0072B2", text: "#fff" },
  reboot: { fill: "#CC79A7", text: "#000" },
  back: { fill: "#009E73", text: "#000" },
  upgrade: { fill: "#9E9E9E", text: "#000" },
  hold: { fill: "#D55E00", text: "#fff" },
};

const WIDTH = 1200;
const LABEL = 270;
const RIGHT = 24;
const LANE = 26;
const GAP = 8;
const AXIS = 46;
const SECTION = 26;

export function esc(text: string): string {
  return printable(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** A tick step (ms) giving about `ticks` ticks over `span` ms, on a human scale (1s, 2s, 5s, 10s, 15s, 30s, 1m, ...). */
export function tickStep(span: number, ticks = 8): number {
  const steps = [100, 200, 500, 1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 14400e3, 21600e3, 43200e3, 86400e3];
  return steps.find((s) => span / s <= ticks) ?? steps[steps.length - 1];
}

function tickLabel(ms: number, step: number): string {
  if (step < 1000) return `${(ms / 1000).toFixed(1)}s`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  if (h > 0) return `${h}h${m ? `${m}m` : ""}`;
  if (m > 0) return `${m}m${s ? `${s}s` : ""}`;
  return `${s}s`;
}

/** A label cut to what fits the label column (the full text stays in its tooltip). */
const fit = (text: string, chars: number) => (text.length > chars ? `${text.slice(0, chars - 1)}…` : text);

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);

interface Lane { kind: "node" | "check"; key: string; label: string; sub: string; note?: string; failedAt?: number; failure?: string; spans: Array<{ paint: Paint; start: number; end: number; tip: string }> }

function nodeLane(n: NodeReport): Lane {
  const note = n.state === "skipped" ? reportMsg.skipped : n.state === "set-aside" ? reportMsg.setAside
    : n.spans.length === 0 ? reportMsg.pending : undefined;
  return {
    kind: "node", key: n.name, label: n.name, sub: `${n.role} · ${n.from || "?"} → ${n.to} · ${n.state}`,
    ...(note ? { note } : {}),
    ...(n.state === "failed" && n.spans.length ? { failedAt: n.spans[n.spans.length - 1].end, failure: `${n.name}: ${n.state}${n.error ? `: ${n.error}` : ""}` } : {}),
    spans: n.spans.map((s: Span) => ({
      paint: s.phase, start: s.start, end: s.end,
      tip: `${n.name}: ${reportMsg.phase[s.phase]} ${reportDuration(s.end - s.start)} (${clock(s.start)} → ${clock(s.end)})`,
    })),
  };
}

function lanes(r: RolloutReport): Lane[] {
  const checks = r.checks.map((c): Lane => ({
    kind: "check", key: c.id, label: c.id, sub: `${c.state} · ${reportMsg.attempts(c.attempts)}`,
    ...(c.holds.length === 0 ? { note: reportMsg.neverHeld } : {}),
    spans: c.holds.map((h) => ({
      paint: "hold" as const, start: h.start, end: h.end,
      tip: `${c.id}: ${reportMsg.phase.hold} ${reportDuration(h.end - h.start)}${h.open ? reportMsg.stillHolding : ""}${c.lastReason ? ` — ${c.lastReason}` : ""}`,
    })),
  }));
  return [...r.nodes.map(nodeLane), ...checks];
}

function timeline(r: RolloutReport): string {
  const all = lanes(r);
  const t0 = r.startedAt ?? Math.min(...all.flatMap((l) => l.spans.map((s) => s.start)), Date.now());
  const t1 = Math.max(r.endAt ?? t0, ...all.flatMap((l) => l.spans.map((s) => s.end)), t0 + 1000);
  const plot = WIDTH - LABEL - RIGHT;
  const x = (t: number) => LABEL + ((t - t0) / (t1 - t0)) * plot;
  const nodeLanes = all.filter((l) => l.kind === "node");
  const checkLanes = all.filter((l) => l.kind === "check");
  let y = AXIS + SECTION;
  const parts: string[] = [];
  const sectionTitle = (text: string, at: number) => parts.push(`<text class="section" x="8" y="${at - 8}">${esc(text)}</text>`);
  const drawLane = (l: Lane) => {
    const spans = l.spans.map((s) => {
      const sx = x(s.start), w = Math.max(2, x(s.end) - sx);
      const p = PALETTE[s.paint];
      const label = w > 46 ? `<text x="${(sx + w / 2).toFixed(1)}" y="${y + LANE / 2 + 4}" fill="${p.text}" class="span-label">${esc(reportDuration(s.end - s.start))}</text>` : "";
      return `<g class="span" data-phase="${s.paint}"><rect x="${sx.toFixed(1)}" y="${y + 2}" width="${w.toFixed(1)}" height="${LANE - 4}" rx="3" fill="${p.fill}"><title>${esc(s.tip)}</title></rect>${label}</g>`;
    }).join("");
    const note = l.note ? `<text class="note" x="${LABEL + 8}" y="${y + LANE / 2 + 4}">${esc(l.note)}</text>` : "";
    // A failed node ends with a mark in the error colour, its reason as a tooltip.
    const failed = l.failedAt !== undefined
      ? `<g class="failure"><rect x="${(x(l.failedAt) - 3).toFixed(1)}" y="${y}" width="4" height="${LANE}" fill="#a40e26"><title>${esc(l.failure ?? "")}</title></rect></g>`
      : "";
    parts.push(
      `<g class="lane ${l.kind}-lane" data-${l.kind}="${esc(l.key)}">` +
      `<rect class="lane-bg" x="${LABEL}" y="${y}" width="${plot}" height="${LANE}" />` +
      `<text class="lane-label" x="8" y="${y + 12}"><title>${esc(l.label)}</title>${esc(fit(l.label, 30))}</text>` +
      `<text class="lane-sub" x="8" y="${y + 23}">${esc(fit(l.sub, 46))}</text>${note}${spans}${failed}</g>`,
    );
    y += LANE + GAP;
  };
  sectionTitle(reportMsg.nodesLane, y);
  nodeLanes.forEach(drawLane);
  if (checkLanes.length) {
    y += SECTION;
    sectionTitle(reportMsg.checksLane, y);
    checkLanes.forEach(drawLane);
  }
  const height = y + AXIS - GAP;
  const step = tickStep(t1 - t0);
  const ticks: string[] = [];
  for (let t = 0; t <= t1 - t0 + 1; t += step) {
    const tx = x(t0 + t).toFixed(1);
    ticks.push(`<line class="grid" x1="${tx}" x2="${tx}" y1="${AXIS - 6}" y2="${height - AXIS + 6}" />` +
      `<text class="tick" x="${tx}" y="${AXIS - 10}">${tickLabel(t, step)}</text>` +
      `<text class="tick" x="${tx}" y="${height - AXIS + 22}">${tickLabel(t, step)}</text>`);
  }
  return `<svg class="timeline" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-labelledby="timeline-title">` +
    `<title id="timeline-title">${esc(`${reportMsg.htmlHeading(r.cluster)}: ${reportMsg.axis}`)}</title>` +
    `<text class="axis-title" x="${LABEL}" y="13">${esc(reportMsg.axis)}${r.startedAt !== undefined ? ` (${esc(new Date(r.startedAt).toISOString())})` : ""}</text>` +
    ticks.join("") + parts.join("") + `</svg>`;
}

function legend(r: RolloutReport): string {
  const used = new Set<Paint>([...r.nodes.flatMap((n) => n.spans.map((s) => s.phase)), ...(r.checks.some((c) => c.holds.length) ? ["hold" as const] : [])]);
  const paints: Paint[] = [...REPORT_PHASES, ...(used.has("upgrade") ? ["upgrade" as const] : []), "hold"];
  return `<ul class="legend" aria-label="${esc(reportMsg.legend)}">` + paints.map((p) =>
    `<li><svg width="28" height="14" aria-hidden="true"><rect width="28" height="14" rx="3" fill="${PALETTE[p].fill}" /></svg>${esc(reportMsg.phase[p])}</li>`).join("") + "</ul>";
}

function table(head: readonly string[], rows: string[][], numeric: (i: number) => boolean): string {
  return `<table><thead><tr>${head.map((h, i) => `<th${numeric(i) ? ' class="num"' : ""}>${esc(h)}</th>`).join("")}</tr></thead><tbody>` +
    rows.map((r) => `<tr>${r.map((c, i) => `<td${numeric(i) ? ' class="num"' : ""}>${c}</td>`).join("")}</tr>`).join("") + "</tbody></table>";
}

function tables(r: RolloutReport): string {
  const nodes = table(reportMsg.nodeColumns, r.nodes.map((n) => {
    const d = (p: ReportPhase) => esc(n.detailed ? reportDuration(n.durations[p]) : "—");
    return [esc(n.name), esc(n.role), `${esc(n.from || "?")} → ${esc(n.to)}`, esc(n.state) + (n.error ? `<div class="err">${esc(n.error)}</div>` : ""),
      d("gate"), d("drain"), d("install"), d("reboot"), d("back"), esc(reportDuration(n.totalMs))];
  }), (i) => i >= 4);
  const checks = r.checks.length === 0 ? `<p>${esc(reportMsg.noChecks)}</p>` : table(reportMsg.checkColumns, r.checks.map((c) => {
    const held = c.holds.reduce((sum, h) => sum + (h.end - h.start), 0);
    return [esc(c.id), esc(c.state), String(c.attempts), c.holds.length ? `${c.holds.length} (${esc(reportDuration(held))})` : "0", c.lastReason ? esc(c.lastReason) : "—"];
  }), (i) => i === 2 || i === 3);
  const older = r.nodes.some((n) => !n.detailed && n.totalMs !== undefined) ? `<p class="note">${esc(reportMsg.olderMirror)}</p>` : "";
  return nodes + older + checks;
}

const CSS = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1b1f24; background: #fff; margin: 24px 32px; }
h1 { font-size: 22px; margin: 0 0 4px; }
.summary { color: #444; margin: 0 0 12px; }
.error { background: #fdecea; border-left: 4px solid #D55E00; padding: 8px 12px; margin: 8px 0 12px; }
.legend { list-style: none; padding: 0; margin: 8px 0 12px; display: flex; flex-wrap: wrap; gap: 6px 18px; }
.legend li { display: flex; align-items: center; gap: 6px; }
.timeline { max-width: 100%; height: auto; display: block; margin-bottom: 20px; }
.timeline text { font-family: inherit; }
.lane-bg { fill: #f3f4f6; }
.lane-label { font-size: 13px; font-weight: 600; fill: #1b1f24; }
.lane-sub { font-size: 10.5px; fill: #57606a; }
.section { font-size: 12px; font-weight: 700; letter-spacing: .06em; text-transform: uppercase; fill: #57606a; }
.span-label { font-size: 11px; text-anchor: middle; pointer-events: none; }
.note { font-size: 12px; font-style: italic; fill: #57606a; }
.grid { stroke: #d0d7de; stroke-width: 1; }
.tick { font-size: 11px; fill: #57606a; text-anchor: middle; }
.axis-title { font-size: 11px; fill: #57606a; }
table { border-collapse: collapse; margin: 0 0 18px; }
th, td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.err { color: #a40e26; font-size: 12px; max-width: 40em; }
`;

export function reportHtml(r: RolloutReport): string {
  const total = r.startedAt !== undefined && r.endAt !== undefined ? reportDuration(r.endAt - r.startedAt) : "";
  const summary = reportMsg.summary(r.phase, r.target, r.nodes.length, total) +
    (r.startedAt !== undefined ? ` · ${reportMsg.started(new Date(r.startedAt).toISOString())}` : "") + (r.running ? ` · ${reportMsg.running}` : "");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(reportMsg.title(r.cluster))}</title>
<style>${CSS}</style>
</head>
<body>
<h1>${esc(reportMsg.htmlHeading(r.cluster))}</h1>
<p class="summary">${esc(summary)}</p>
${r.error ? `<p class="error">${esc(reportMsg.failed(r.error))}</p>` : ""}
${legend(r)}
${timeline(r)}
${tables(r)}
</body>
</html>
`;
}
