// Every user-visible message about the tools the sim runs: where they were looked for, why one was passed over,
// what a build needs, and the build's progress.
import type { ToolResolution } from "./resolve";

const duration = (ms: number) => {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
};

export const toolMsg = {
  duration,
  goModUnreadable: (dir: string, detail: string) =>
    `cannot read the Go wrapper module in ${dir} (${detail}); reinstall the talos-gate package`,
  noVersionInOutput: (args: readonly string[], out: string) =>
    `'${args.join(" ")}' printed no version (${JSON.stringify(out.trim().slice(0, 80))})`,
  probeTimedOut: (args: readonly string[], ms: number) => `no answer to '${args.join(" ")}' within ${ms / 1000}s`,
  probeFailed: (args: readonly string[], detail: string) => `'${args.join(" ")}' failed: ${detail}`,
  wrongVersion: (version: string, wanted: string) => `${version}, not the pinned ${wanted}`,

  passedOver: (p: { path: string; source: string; reason: string }) => `passed over ${p.path} (${p.source}): ${p.reason}`,

  /** `talos-gate sim up` (and any start of the sim) without its tools. */
  missing: (missing: readonly ToolResolution[], looked: readonly string[], command: string) => [
    `missing ${missing.map((r) => `${r.tool} ${r.wanted}`).join(", ")}; looked in ${looked.join(", ")}`,
    ...missing.flatMap((r) => r.passedOver.map((p) => `  ${toolMsg.passedOver(p)}`)),
    `get them with: ${command}`,
  ].join("\n"),

  lookedIn: (cacheDir: string) => [
    "$TALOS_GATE_TOOLS", "$KUBEBUILDER_ASSETS", `the user cache (${cacheDir})`, "PATH",
  ],

  header: (kubernetes: string, etcd: string) =>
    `talos-gate toolchain: the sim runs Kubernetes ${kubernetes} and etcd ${etcd} (pinned by scripts/go/kube/go.mod)`,
  /** Rows of [tool, version, source, where], aligned; a row's notes follow it on their own lines. */
  table: (rows: readonly { cells: readonly string[]; notes?: readonly string[] }[]) => {
    const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r.cells[i].length)));
    return rows.flatMap((r) => [
      `  ${r.cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]) : c)).join("  ")}`.trimEnd(),
      ...(r.notes ?? []).map((n) => `      ${n}`),
    ]);
  },
  unpinnedNote: "(any version: TALOS_GATE_UNPINNED_TOOLS=1)",
  allFound: (ms: number) => `talos-gate toolchain: every tool found (${duration(ms)})`,
  checkMissing: (n: number, command: string) => `talos-gate toolchain: ${n} missing; get them with: ${command}`,
  linked: (tool: string, from: string, to: string) => `  linked ${tool}: ${to} -> ${from}`,
  fromNotFound: (tool: string, dir: string, why: string) => `  ${tool}: not taken from ${dir}: ${why}`,

  /** What a build needs, when it cannot start: Go, a module proxy, or prebuilt binaries instead. */
  needs: (goWanted: string, problem: string, tools: readonly string[], cacheDir: string, command: string) => [
    `cannot build ${tools.join(", ")}: ${problem}. Either:`,
    `  - install Go ${goWanted} or newer (https://go.dev/dl/) with a Go module proxy reachable (GOPROXY, default`,
    `    https://proxy.golang.org), then run: ${command}   (a cold build takes 10-25 minutes on 2 cores), or`,
    "  - put prebuilt binaries at the pinned versions in a directory and set TALOS_GATE_TOOLS=<dir>, or link them",
    `    into the user cache with \`talos-gate toolchain --from <dir>\`, or copy them into ${cacheDir}`,
    "    (setup-envtest's KUBEBUILDER_ASSETS works for kube-apiserver, etcd and kubectl).",
  ].join("\n"),
  needsPulumi: (goWanted: string, problem: string, version: string) =>
    `cannot build pulumi ${version}: ${problem}; install Go ${goWanted} or newer with a Go module proxy reachable, ` +
    `or put the Pulumi CLI ${version} on PATH (TALOS_GATE_UNPINNED_TOOLS=1 accepts another version)`,
  goMissing: "Go is not installed (no `go` on PATH)",
  goTooOld: (have: string, wanted: string) => `${have} is older than the Go ${wanted} the wrapper module needs`,
  goProxyOff: "GOPROXY is 'off', so the Go modules cannot be downloaded",
  goUnusable: (detail: string) => `'go env' failed: ${detail}`,

  buildStart: (n: number, dir: string, go: string, proxy: string) =>
    `talos-gate toolchain: building ${n} tool${n === 1 ? "" : "s"} into ${dir} with ${go} (GOPROXY=${proxy}); a cold build takes 10-25 minutes on 2 cores`,
  stepStart: (i: number, n: number, tool: string, pkg: string, version: string) => `[${i}/${n}] ${tool}: go build ${pkg} (${version})`,
  stepRunning: (i: number, n: number, tool: string, ms: number) => `[${i}/${n}] ${tool}: building, ${duration(ms)} so far`,
  stepDone: (i: number, n: number, tool: string, ms: number) => `[${i}/${n}] ${tool}: built in ${duration(ms)}`,
  stepFailed: (i: number, n: number, tool: string, ms: number, command: string, exit: string, log: string, tail: string) =>
    `[${i}/${n}] ${tool}: FAILED after ${duration(ms)}: ${command} (${exit}); last lines of ${log}:\n${tail}`,
  waitingForLock: (pid: number, dir: string) => `talos-gate toolchain: another toolchain run (pid ${pid}) is building into ${dir}; waiting for it`,
  lockTimedOut: (pid: number, dir: string, ms: number) =>
    `another toolchain run (pid ${pid}) still holds ${dir} after ${duration(ms)}; stop it or remove ${dir}.lock`,
  devToolMissing: (name: string, dir: string) =>
    `${name} is not installed in ${dir}: run 'npm run toolchain' (builds it from Go modules, cached)`,
  ready: (ms: number) => `talos-gate toolchain: ready in ${duration(ms)}`,
};

/** A start of the sim without its tools: says which are missing and the one command that gets them. */
export class ToolsMissingError extends Error {
  readonly userFacing = true;
  constructor(message: string, readonly missing: readonly string[]) {
    super(message);
    this.name = "ToolsMissingError";
  }
}
