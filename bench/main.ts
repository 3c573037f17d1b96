// `npm run bench`: runs every benchmark, prints a table of measured numbers next to the peer or limit each is compared
// with, and writes bench/results.json. Never pass/fail: these machines are shared and noisy. `--only a,b` runs some.
import * as fs from "node:fs";
import * as path from "node:path";
import { Metric } from "./metrics";

type Bench = { name: string; run: () => Promise<Metric[]> };

const benches: Bench[] = [
  { name: "gate-reaction", run: async () => require("./gate-reaction").metrics() },
  { name: "conditions", run: async () => require("./conditions").metrics() },
  { name: "talos-sim", run: async () => require("./talos-sim").metrics() },
  { name: "kube-sim", run: async () => require("./kube-sim").metrics() },
  { name: "rollout", run: async () => require("./rollout").metrics() },
  { name: "kubernetes-rollout", run: async () => require("./kubernetes-rollout").metrics() },
  { name: "provider", run: async () => require("./provider").metrics() },
  { name: "preview", run: async () => require("./preview").metrics() },
];

function table(rows: Metric[]): string {
  const cols = [["metric", ...rows.map((r) => r.name)], ["value", ...rows.map((r) => String(r.value))],
    ["unit", ...rows.map((r) => r.unit)], ["compared with", ...rows.map((r) => r.compared_with)]];
  const widths = cols.map((c) => Math.max(...c.map((s) => s.length)));
  const line = (i: number) => cols.map((c, j) => c[i].padEnd(widths[j])).join("  ").trimEnd();
  return [line(0), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map((_, i) => line(i + 1))].join("\n");
}

async function main(): Promise<void> {
  const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1].split(",") : undefined;
  const out: Metric[] = [];
  const failures: string[] = [];
  for (const b of benches) {
    if (only && !only.includes(b.name)) continue;
    const t = Date.now();
    process.stderr.write(`bench: ${b.name} ...\n`);
    try {
      out.push(...(await b.run()));
      process.stderr.write(`bench: ${b.name} done in ${((Date.now() - t) / 1000).toFixed(1)}s\n`);
    } catch (err) {
      failures.push(`${b.name}: ${(err as Error).stack ?? err}`);
      process.stderr.write(`bench: ${b.name} FAILED: ${(err as Error).message}\n`);
    }
  }
  process.stdout.write(table(out) + "\n");
  const file = path.join(__dirname, "..", "..", "bench", "results.json");
  // With --only, the figures of the benchmarks not run are kept as they were measured last.
  const fresh = new Set(out.map((m) => m.name));
  const kept = only && fs.existsSync(file)
    ? (JSON.parse(fs.readFileSync(file, "utf8")) as Metric[]).filter((m) => !fresh.has(m.name))
    : [];
  fs.writeFileSync(file, JSON.stringify([...kept, ...out], null, 2) + "\n");
  process.stdout.write(`\nwrote ${path.relative(process.cwd(), file)}\n`);
  if (failures.length > 0) {
    process.stderr.write(`\n${failures.length} benchmark(s) failed:\n${failures.join("\n")}\n`);
    process.exitCode = 1;
  }
}

void main();
