// Where a CPU profile's time went (the rollout bench's BENCH_CPU_PROF, issue 23): the functions with the most self time,
// and every busy sample charged to the nearest talos-gate frame on its stack (`(none)`: a callback of a library or of
// Node.js with no talos-gate frame above it — sockets, timers, gRPC). Times are the profile's own (wall time between
// samples, so a process waiting for a core charges that wait to what it ran next): compare shares, not seconds.
// Run: `node dist/bench/cpuprofile.js <file.cpuprofile> [top]`.
import * as fs from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const OURS = /\/dist\/(provider|sim)\//;

function frameName(n: ProfileNode): string {
  const f = n.callFrame;
  const where = f.url.replace(/^.*\/node_modules\//, "").replace(/^.*\/dist\//, "").replace(/^file:\/\//, "");
  return `${f.functionName || "(anonymous)"} ${where}:${f.lineNumber + 1}`;
}

export function summarize(p: Profile, top: number): string[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const time = new Map<number, number>();
  p.samples.forEach((id, i) => time.set(id, (time.get(id) ?? 0) + (p.timeDeltas[i + 1] ?? 0)));
  const self = new Map<string, number>();
  const nearest = new Map<string, number>();
  let busy = 0;
  for (const [id, t] of time) {
    const leaf = byId.get(id)!;
    if (leaf.callFrame.functionName === "(idle)") continue;
    busy += t;
    self.set(frameName(leaf), (self.get(frameName(leaf)) ?? 0) + t);
    let owner = "(none)";
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      if (OURS.test(n.callFrame.url)) {
        owner = frameName(n);
        break;
      }
    }
    nearest.set(owner, (nearest.get(owner) ?? 0) + t);
  }
  const table = (title: string, m: Map<string, number>) => [
    `${title} (busy ${(busy / 1e6).toFixed(1)} s)`,
    ...[...m].sort((a, b) => b[1] - a[1]).slice(0, top)
      .map(([k, v]) => `${(v / 1e6).toFixed(2).padStart(8)} s ${((100 * v) / busy).toFixed(1).padStart(5)} %  ${k}`),
  ];
  return [...table("self time", self), "", ...table("charged to the nearest talos-gate frame", nearest)];
}

if (require.main === module) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write("usage: node dist/bench/cpuprofile.js <file.cpuprofile> [top]\n");
    process.exit(2);
  }
  const lines = summarize(JSON.parse(fs.readFileSync(file, "utf8")) as Profile, Number(top) || 30);
  process.stdout.write(lines.join("\n") + "\n");
}
