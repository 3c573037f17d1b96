// `talos-gate report [--markdown] [--html FILE]`: the last rollout, from the status it mirrored into the cluster, as a
// Markdown table for a pull-request comment (stdout) or a self-contained HTML timeline (a file).
import * as fs from "node:fs";
import { coreApi, parseOptions, readKubeconfig, readMirroredStatus, resolveCluster, withCliErrors } from "./common";
import { CliError, cliMsg, REPORT_USAGE, reportMsg } from "./messages";
import { reportHtml } from "./reportHtml";
import { reportMarkdown } from "./reportMarkdown";
import { buildReport } from "./reportModel";

export function run(argv: string[]): Promise<number> {
  return withCliErrors("report", () => body(argv));
}

async function body(argv: string[]): Promise<number> {
  const { values: o } = parseOptions("report", argv, {
    kubeconfig: { type: "string" },
    cluster: { type: "string" },
    markdown: { type: "boolean" },
    html: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (o.help) {
    process.stdout.write(REPORT_USAGE + "\n");
    return 0;
  }
  const kubeconfig = readKubeconfig(o.kubeconfig);
  const core = coreApi(kubeconfig.text);
  const cluster = await resolveCluster(core, o.cluster);
  if (cluster === undefined) throw new CliError(cliMsg.noStatusAtAll());
  const mirrored = await readMirroredStatus(core, cluster);
  if (!mirrored) throw new CliError(cliMsg.noStatus(cluster));
  const report = buildReport({ cluster, ...mirrored.status });
  if (report.startedAt === undefined) throw new CliError(reportMsg.nothingRan(cluster));
  if (o.html !== undefined) {
    try {
      fs.writeFileSync(o.html, reportHtml(report));
    } catch (err) {
      throw new CliError(reportMsg.writeFailed(o.html, (err as Error).message.replace(/^[A-Z]+: /, "")));
    }
    process.stderr.write(reportMsg.wroteHtml(o.html, report.nodes.length, report.checks.length) + "\n");
  }
  if (o.markdown || o.html === undefined) process.stdout.write(reportMarkdown(report));
  return 0;
}
