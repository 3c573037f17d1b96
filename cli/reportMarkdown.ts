// `talos-gate report --markdown`: the rollout as GitHub-flavoured Markdown for a pull-request comment. Text from the
// cluster (node names, failure reasons) is made inert: terminal escapes removed (printable), then characters that
// would end a table cell or start Markdown/HTML markup escaped.
import { printable } from "./common";
import { reportMsg } from "./messages";
import { reportDuration, type NodeReport, type RolloutReport } from "./reportModel";

/** Cluster text as one safe table cell (no newline, pipe, HTML or emphasis markup). */
export function mdCell(text: string): string {
  return printable(text).replace(/\s+/g, " ").trim().replace(/[\\`*_{}[\]<>()#+!|~]/g, (c) => `\\${c}`);
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(" | ")} |`;
}

function nodeRow(n: NodeReport): string[] {
  const d = (p: keyof NodeReport["durations"]) => (n.detailed ? reportDuration(n.durations[p]) : "—");
  const state = n.state === "failed" && n.error ? `${mdCell(n.state)}: ${mdCell(n.error)}` : mdCell(n.state);
  return [
    mdCell(n.name), mdCell(n.role), `${mdCell(n.from || "?")} → ${mdCell(n.to)}`, state,
    d("gate"), d("drain"), d("install"), d("reboot"), d("back"), reportDuration(n.totalMs),
  ];
}

export function reportMarkdown(r: RolloutReport): string {
  const total = r.startedAt !== undefined && r.endAt !== undefined ? reportDuration(r.endAt - r.startedAt) : "";
  const lines = [
    `### ${mdCell(reportMsg.title(r.cluster))}`,
    "",
    mdCell(reportMsg.summary(r.phase, r.target, r.nodes.length, total)) +
      (r.startedAt !== undefined ? ` · ${mdCell(reportMsg.started(new Date(r.startedAt).toISOString()))}` : ""),
  ];
  if (r.running) lines.push("", `_${mdCell(reportMsg.running)}_`);
  if (r.error) lines.push("", `**${mdCell(reportMsg.failed(r.error))}**`);
  lines.push("");
  if (r.nodes.length === 0) lines.push(reportMsg.noNodes);
  else {
    const cols = reportMsg.nodeColumns;
    lines.push(row(cols), row(cols.map((_, i) => (i >= 4 ? "--:" : "---"))), ...r.nodes.map((n) => row(nodeRow(n))));
    if (r.nodes.some((n) => !n.detailed && n.totalMs !== undefined)) lines.push("", `_${reportMsg.olderMirror}_`);
  }
  lines.push("");
  if (r.checks.length === 0) lines.push(reportMsg.noChecks);
  else {
    const cols = reportMsg.checkColumns;
    lines.push(row(cols), row(cols.map((_, i) => (i === 2 || i === 3 ? "--:" : "---"))));
    for (const c of r.checks) {
      const held = c.holds.reduce((sum, h) => sum + (h.end - h.start), 0);
      lines.push(row([
        mdCell(c.id), mdCell(c.state), String(c.attempts),
        c.holds.length ? `${c.holds.length} (${reportDuration(held)})` : "0", c.lastReason ? mdCell(c.lastReason) : "—",
      ]));
    }
  }
  return lines.join("\n") + "\n";
}
