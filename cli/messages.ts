// Every user-visible message of `talos-gate plan` and `talos-gate status` (usage, errors). The plan lines themselves
// come from provider/rollout (describePlan), the status fields from the mirrored status.

export const PLAN_USAGE = `usage: talos-gate plan --version V [--kubeconfig K] [--talosconfig T] [--cluster NAME]
                      [--worker-parallelism N] [--order node1,node2] [--healthcheck-ids id1,id2]
                      [--last-upgrade-version V] [--path V1,V2] [--etcd-quorum-loss refuse|allow] [--json]
Prints the ordered rollout plan (waves, nodes, from → to, gates) against the cluster in the kubeconfig, without
changing anything. Machines are read from the Kubernetes Nodes; with a talosconfig each node's running version is
read from Talos itself. The upgrade status mirrored by the last run (if any) tells whether the change is a revert.
  --kubeconfig K           kubeconfig file (default: as kubectl finds it: $KUBECONFIG, a list of files merged, else ~/.kube/config)
  --talosconfig T          talosconfig file (default: $TALOSCONFIG; without one, versions come from the Nodes)
  --cluster NAME           cluster name used by the TalosUpgrade (default: the only cluster with a mirrored status)
  --version V              target Talos version, e.g. v1.13.2
  --worker-parallelism N   workers per wave (default 1; control planes always one at a time)
  --order a,b              nodes to upgrade first, in this order (within their role)
  --healthcheck-ids a,b    healthcheck ids that gate every wave (shown in the plan)
  --last-upgrade-version V the version the cluster last converged to (default: from the mirrored status)
  --path V1,V2             intermediate versions (TalosUpgrade's path): the step the nodes are in, then every later step
  --etcd-quorum-loss M     refuse (default) or allow: with 2 control planes, what their reboots cost (TalosUpgrade's input)
  --json                   print the plan as JSON`;

export const STATUS_USAGE = `usage: talos-gate status [--kubeconfig K] [--cluster NAME] [-o table|yaml|json] [--watch]
Prints the live upgrade status a rollout mirrors into the cluster (ConfigMap kube-system/talos-gate-status-<cluster>):
a table of the machines (node, role, from → to, state, duration) above the document shaped like
\`omnictl get talosupgradestatus <cluster> -o yaml\`.
  --kubeconfig K      kubeconfig file (default: as kubectl finds it: $KUBECONFIG, a list of files merged, else ~/.kube/config)
  --cluster NAME      cluster name used by the TalosUpgrade (default: the only cluster with a mirrored status)
  -o, --output FMT    table (the table only), yaml (the document only) or json (the document as JSON)
  --json              the same as -o json
  -w, --watch         print again on each change of the status (a Kubernetes watch, not polling) until interrupted;
                      a terminal is redrawn in place, a pipe gets one document per change (yaml and the default separated
                      by ---, json one object per line)`;

export const REPORT_USAGE = `usage: talos-gate report [--kubeconfig K] [--cluster NAME] [--markdown] [--html FILE]
Reports the last rollout from the status it mirrors into the cluster (ConfigMap kube-system/talos-gate-status-<cluster>):
per node the gate wait, drain, install, reboot and back times; per check its attempts and last failure.
  --kubeconfig K   kubeconfig file (default: as kubectl finds it: $KUBECONFIG, a list of files merged, else ~/.kube/config)
  --cluster NAME   cluster name used by the TalosUpgrade (default: the only cluster with a mirrored status)
  --markdown       print a Markdown table for a pull-request comment (the default)
  --html FILE      write one self-contained HTML page (inline SVG and CSS, nothing loaded from the network) with a
                   timeline: one lane per node, its phases coloured, and the checks' holds on their own lanes`;

/** The words of `talos-gate report` (Markdown and HTML). */
export const reportMsg = {
  title: (cluster: string) => `talos-gate rollout of cluster ${cluster}`,
  summary: (phase: string, target: string, machines: number, total: string) =>
    `${phase}${target ? ` · target ${target}` : ""} · ${machines} machine${machines === 1 ? "" : "s"}${total ? ` · ${total}` : ""}`,
  started: (at: string) => `started ${at}`,
  running: "still running: times up to the last status update",
  failed: (error: string) => `failed: ${error}`,
  nodeColumns: ["node", "role", "from → to", "state", "gate wait", "drain", "install", "reboot", "back", "total"],
  checkColumns: ["check", "state", "attempts", "holds", "last failure"],
  noChecks: "no healthchecks or conditions gated this rollout",
  noNodes: "no machines in this rollout",
  olderMirror: "phase times are unknown where an earlier release wrote the status (it did not store them); totals are shown",
  phase: { gate: "gate hold", install: "install", drain: "drain", reboot: "reboot", back: "back", upgrade: "upgrade (phases unknown)", hold: "check held the gate" } as Record<string, string>,
  checksLane: "checks",
  nodesLane: "nodes",
  axis: "time since the rollout started",
  skipped: "already on the target",
  setAside: "not ready: set aside",
  pending: "not started",
  legend: "legend",
  neverHeld: "never held the gate",
  stillHolding: " (still holding)",
  attempts: (n: number) => `${n} attempt${n === 1 ? "" : "s"}`,
  htmlHeading: (cluster: string) => `Rollout of ${cluster}`,
  wroteHtml: (file: string, nodes: number, checks: number) => `wrote ${file}: ${nodes} node lane${nodes === 1 ? "" : "s"}, ${checks} check lane${checks === 1 ? "" : "s"}`,
  writeFailed: (file: string, detail: string) => `cannot write ${file}: ${detail}; pass a writable path to --html`,
  nothingRan: (cluster: string) => `the upgrade status of cluster ${cluster} has no rollout yet (no start time): run \`pulumi up\` with a version change first`,
};

export const TOOLCHAIN_USAGE = (cacheDir: string) => `usage: talos-gate toolchain [--check] [--from DIR]
Gets the binaries \`talos-gate sim\` runs — kube-apiserver, etcd, kubectl, kube-controller-manager and kube-scheduler — at
the versions this release pins, and prints each one's version and where it came from. Each is looked for in
$TALOS_GATE_TOOLS, then $KUBEBUILDER_ASSETS (setup-envtest's assets), then the user cache, then PATH; a binary at another
version is passed over. The missing ones are built with Go (>= the go.mod's version, with a Go module proxy) into
the user cache: ${cacheDir}
  --check      only report; exit 1 when a tool is missing
  --from DIR   first link the pinned-version binaries found in DIR into the user cache
environment:
  TALOS_GATE_TOOLS           a directory of prebuilt binaries, looked in first
  TALOS_GATE_CACHE           the user cache (default $XDG_CACHE_HOME/talos-gate, else ~/.cache/talos-gate)
  TALOS_GATE_UNPINNED_TOOLS  set to 1 to accept the first binary found at any version`;

export const STOP_USAGE = `usage: talos-gate stop [--kubeconfig K] [--cluster NAME] [--no-wait] [--timeout D]
Asks the rollout running on the cluster to stop before its next node, through the cluster itself (an annotation on
its Lease kube-system/talos-gate-<cluster>), from any shell or pipeline step that has the kubeconfig. The node in
flight finishes; the next \`pulumi up\` resumes where it stopped.
  --kubeconfig K   kubeconfig file (default: as kubectl finds it: $KUBECONFIG, a list of files merged, else ~/.kube/config)
  --cluster NAME   cluster name used by the TalosUpgrade (default: the only cluster with a mirrored status)
  --no-wait        return once the request is written, without waiting for the rollout to stop
  --timeout D      longest wait for the rollout to stop, a Go duration (default 30m: a node in flight finishes first)`;

export const cliMsg = {
  // --- talos-gate sim
  simAlreadyRunning: (dir: string, pid: number, startedAt: string) =>
    `a simulated cluster is already running in ${dir} (pid ${pid}, started ` +
    `${startedAt}); use it, or stop it first with 'talos-gate sim down --dir ${dir}'`,
  simFailedToStart: (exit: number | string | null, log: string, lines: string) =>
    `talos-gate sim: the simulated cluster failed to start (exit ${exit}); last lines of ${log}:\n${lines}\n`,
  simNotUp: (log: string, lines: string) => `talos-gate sim: not up after 180s; last lines of ${log}:\n${lines}\n`,
  simNothingToStop: (dir: string) => `talos-gate sim: no simulated cluster is running in ${dir}; nothing to stop\n`,
  simStopped: (dir: string, pid: number) => `simulated cluster in ${dir} stopped (pid ${pid}); its data is removed\n`,
  simKilled: (dir: string, pid: number) => `simulated cluster in ${dir} did not stop in 60s and was killed (pid ${pid})\n`,
  simStatusHeader: (dir: string, pid: number, startedAt: string) => `simulated cluster in ${dir} (pid ${pid}, up since ${startedAt})\n`,
  demoNeedsClone: () =>
    "the demo runs from a clone of the talos-gate repository (`npm ci && npm run demo` there); in your own project, " +
    "rehearse with `npx talos-gate sim up` and `pulumi up` (README: Install in your project)",
  unknownOption: (cmd: string, opt: string) => `unknown option ${opt}; see 'talos-gate ${cmd} --help'`,
  missingValue: (opt: string) => `option ${opt} needs a value`,
  unexpectedArgument: (cmd: string, arg: string) => `unexpected argument ${JSON.stringify(arg)}; see 'talos-gate ${cmd} --help'`,
  versionRequired: () => "--version is required: the Talos version to plan the upgrade to, e.g. --version v1.13.2",
  badPathVersion: (v: string) => `--path takes the intermediate Talos versions, comma-separated, e.g. --path v1.12.11; got ${JSON.stringify(v)}`,
  badQuorumLoss: (v: string) => `--etcd-quorum-loss must be refuse or allow (TalosUpgrade's etcdQuorumLoss); got ${JSON.stringify(v)}`,
  planLiveNodes: "the live nodes",
  notANumber: (opt: string, value: string) => `${opt} must be a whole number of machines, at least 1; got ${JSON.stringify(value)}`,

  noKubeconfig: (homeFile: string) =>
    `no kubeconfig: pass --kubeconfig <file>, set KUBECONFIG to the kubeconfig of the workload cluster, or put it at ${homeFile}`,
  kubeconfigUnreadable: (file: string, detail: string) =>
    `cannot read kubeconfig ${file}: ${detail}; pass the path of a readable kubeconfig file with --kubeconfig`,
  talosconfigUnreadable: (file: string, detail: string) =>
    `cannot read talosconfig ${file}: ${detail}; pass the path of a readable talosconfig file with --talosconfig, or leave it out to use the Nodes' versions`,

  clusterRequired: (statuses: readonly { name: string; kind: "TalosUpgrade" | "KubernetesUpgrade" }[]) =>
    `the cluster has the upgrade statuses of several rollouts (${statuses.map((s) => `${s.name}: ${s.kind}`).join(", ")}); choose one with --cluster`,
  statusTableColumns: ["NODE", "ROLE", "FROM → TO", "STATE", "DURATION"],
  /** `detail`: the error of a failed run, else the step. */
  statusTableSummary: (cluster: string, phase: string, status: string, detail: string) =>
    `cluster ${cluster}: ${phase}${status ? `, ${status}` : ""}${detail ? ` (${detail})` : ""}`,
  badOutput: (value: string) => `-o ${JSON.stringify(value)} is not an output format: use table, yaml or json`,
  watchDeleted: (cluster: string) => `the upgrade status of cluster ${cluster} was deleted; waiting for the next rollout to write it`,
  watchWaiting: (cluster: string) => `no upgrade status for cluster ${cluster} yet; waiting for a rollout to write it (Ctrl-C to stop)`,
  watchFailed: (cluster: string, detail: string) =>
    `cannot watch the upgrade status of cluster ${cluster}: ${detail}; the kubeconfig needs list and watch on configmaps in kube-system`,
  noStatus: (cluster: string) => `no upgrade status for cluster ${cluster} yet: run \`pulumi up\` first`,
  noStatusAtAll: () =>
    "no upgrade status in this cluster yet (no ConfigMap kube-system/talos-gate-status-*): run `pulumi up` first",
  statusUnreadable: (cluster: string, detail: string) =>
    `the upgrade status of cluster ${cluster} is not readable (${detail}); the next rollout rewrites it`,
  kubeconfigInvalid: (detail: string) => `kubeconfig: cannot be read (${detail}); pass a kubeconfig file`,
  readStatusFailed: (cluster: string, where: string, detail: string) =>
    `cannot read the upgrade status of cluster ${cluster} (ConfigMap ${where}): ${detail}; check that the API server in the kubeconfig is reachable`,
  listStatusesFailed: (detail: string) =>
    `cannot list the mirrored upgrade statuses (ConfigMaps in kube-system): ${detail}; pass --cluster, or check that the API server is reachable and the kubeconfig may read ConfigMaps in kube-system`,

  badTimeout: (value: string, detail: string) => `--timeout ${JSON.stringify(value)} is invalid: ${detail}; use a Go duration such as "10m"`,
  stopNoCluster: () => "no rollout has run on this cluster yet (no mirrored status): name the cluster with --cluster",
  stopNothingRunning: (cluster: string) => `no rollout is running on cluster ${cluster}: nothing to stop`,
  stopFailed: (cluster: string, detail: string) =>
    `cannot ask the rollout of cluster ${cluster} to stop: ${detail}; the kubeconfig needs get and patch on leases in kube-system`,
  rbacUsage: [
    "usage: talos-gate rbac [--service-account <namespace>/<name> | --user <name>]",
    "prints the ClusterRole and Role the pipeline's kubeconfig needs (and, for a subject, their bindings) as YAML",
    "for `kubectl apply -f -`; add get/list/watch on the kinds your Conditions watch and the rights your manifests need",
  ].join("\n"),
  rbacHeader: "# talos-gate: least-privilege RBAC of the pipeline's identity (talos-gate rbac). Not included: the kinds your\n" +
    "# Conditions watch (get, list, watch) and the objects your Cluster manifests apply; grant those beside it.",
  rbacBadServiceAccount: (v: string) => `--service-account must be <namespace>/<name>, got "${v}"`,
  stopAsked: (cluster: string, holder: string) =>
    `asked the rollout of cluster ${cluster} (held by "${holder}") to stop before its next node; waiting for it to stop`,
  stopStillRunning: (cluster: string, holder: string, ms: number) =>
    `the rollout of cluster ${cluster} (held by "${holder}") is still running after ${Math.round(ms / 1000)}s: a node in flight ` +
    "finishes first (bounded by its nodeTimeout); the request stays on its Lease, run `talos-gate status` to follow it",
  stopped: (cluster: string, where: string) => `the rollout of cluster ${cluster} stopped${where ? `: ${where}` : ""}`,
  talosVersionUnavailable: (nodes: readonly string[], detail: string) =>
    `note: Talos did not answer for ${nodes.join(", ")} (${detail}); their versions come from the Kubernetes Nodes`,
  talosNoAnswer: (ms: number) => `no answer within ${ms / 1000}s`,
  talosVersionDiffers: (node: string, nodeVersion: string, talosVersion: string) =>
    `note: node ${node} reports ${nodeVersion} to Kubernetes but Talos runs ${talosVersion}; planned from Talos`,
  planUsingStatus: (cluster: string, last: string) =>
    `(last converged version ${last}, from the upgrade status of cluster ${cluster})`,

  // --- talos-gate sim fault | recover
  simNotRunning: (dir: string) => `no simulated cluster is running in ${dir}; start one with 'talos-gate sim up'`,
  simNoControl: (dir: string, pid: number) =>
    `the simulated cluster in ${dir} (pid ${pid}) was started by an earlier talos-gate without a control endpoint; ` +
    "restart it ('talos-gate sim down', then 'talos-gate sim up') to set faults",
  simFaultArgs: () => "usage: talos-gate sim fault <node> <never-comes-back|rollback|slow-boot=30s|etcd-unhealthy|pull-failure|" +
    "static-pod-never-ready|kubelet-never-returns|clear> [--dir D]",
  simRecoverArgs: () => "usage: talos-gate sim recover <node> [--dir D]",
  simFaults: (node: string, faults: readonly string[]) =>
    faults.length ? `node ${node}: ${faults.join(", ")}` : `node ${node}: no faults`,
  simRecovered: (node: string, faults: readonly string[]) =>
    `node ${node} is booting again${faults.length ? ` (faults still set: ${faults.join(", ")})` : ""}`,
  simFaultsUnknown: (detail: string) => `(faults unknown: the sim's control endpoint did not answer: ${detail})`,
  simUp: (secs: string, pid: number, controlPlanes: string, workers: string, version: string, kubernetes: string) =>
    `simulated cluster up in ${secs}s (pid ${pid}): ${controlPlanes}, ${workers}, Talos ${version}, Kubernetes ${kubernetes}`,
  simUpgradeTimes: (pullMs: number, installMs: number, bootSeconds: number) =>
    `  upgrades:    ${pullMs} ms image pull, ${installMs} ms install, ${bootSeconds}s reboot per node`,

  unknownCommand: (name: string, usage: string) => `talos-gate: unknown command "${name}"\n\n${usage}`,

  // --- talos-gate demo (each line prefixed with the seconds since the start)
  demoLine: (secs: number, line: string) => `[demo ${secs.toFixed(1).padStart(5)}s] ${line}\n`,
  demoStarting: () =>
    "starting a simulated Talos cluster: 3 control planes + 2 workers on Talos v1.12.4 (real etcd, kube-apiserver, kube-controller-manager, kube-scheduler)",
  demoClusterUp: (kubeconfig: string, talosconfig: string) => `cluster up: kubeconfig ${kubeconfig}, talosconfig ${talosconfig}`,
  demoGateClosed: (gate: string) => `gate closed: configmap ${gate} open=false (the healthcheck fails until it is true)`,
  demoPreview: () => "pulumi preview: the rollout plan a pull-request reviewer sees",
  demoUp: (version: string) => `pulumi up: upgrading to ${version}, control planes first, each node gated by the healthcheck`,
  demoOpening: (gate: string) => `opening the gate: configmap ${gate} open=true`,
  demoUpDone: (result: string, phase: string, lastUpgradeVersion: string) =>
    `pulumi up ${result}: phase ${phase}, lastUpgradeVersion ${lastUpgradeVersion}`,
  demoSecondPreview: (changes: string) => `a second pulumi preview: ${changes} (nothing left to do)`,
  demoStopped: () => "simulated cluster stopped",
};

/** A failure whose message is meant for the user as it is (cli/main.ts prints it without a stack). */
export class CliError extends Error {
  readonly userFacing = true;
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = "CliError";
  }
}
