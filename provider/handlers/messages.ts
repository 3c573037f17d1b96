// Every user-visible message of the Pulumi layer (errors, progress lines of the handlers); check failures are the
// models' (provider/resources/messages.ts), re-exported so a handler names each message from one module.
export * from "../resources/messages";
export const noAnswer = (what: string, ms: number) => `${what} did not answer within ${ms / 1000}s`;
/** What a handler's bounded call to the cluster waits on, in `noAnswer`. */
export const KUBERNETES_API = "the Kubernetes API";
export const unknownKind = (kind: string | undefined) =>
  `talos-gate: unknown resource kind ${JSON.stringify(kind)}; the installed talos-gate package ` +
  "is older than the one that wrote this state: upgrade the talos-gate package";
export const mirrorIgnored = (cluster: string, version: string, writer: string) =>
  `cluster ${cluster}: the status ConfigMap kube-system/talos-gate-status-${cluster} says the cluster last converged to ` +
  `${version}, but it was written by ${writer ? `"${writer}"` : "someone else"}, not this resource; ignored (only this ` +
  "resource's own state and the versions the live nodes run decide a revert). Check who writes that ConfigMap";
export const planUnavailable = (reason: string) => `(plan computed at apply time: ${reason})`;
/** "installer factory.talos.dev/aws-installer/<schematic>:v1.13.2: w-2, w-3" (no names: every node). */
export const planImage = (image: string, nodes: readonly string[]) => {
  const shown = nodes.length > 12 ? [...nodes.slice(0, 12), `and ${nodes.length - 12} more`] : nodes;
  return `installer ${image}: ${nodes.length ? shown.join(", ") : "every node"}`;
};
export const planImageUnknown = (reason: string) => `(read from the node at apply time: ${reason})`;
export const planImageNotReadInTime = (budgetMs: number) =>
  `not read within the preview's ${Math.round(budgetMs / 100) / 10}s for installer images`;
export const planUnknownInputs = "(plan computed at apply time: inputs are not known yet)";

export const deleteUnreachable = (what: string, cluster: string, reason: string) =>
  `${what}: cluster "${cluster}" is unreachable (${reason}); nothing on it was changed and the resource is removed from the stack`;
export const dryRunFailed = (jobName: string, reason: string) =>
  `the API server rejects the runner Job "${jobName}" (server-side dry run): ${reason}`;
export const manifestsApplied = (applied: number, skipped: number, pruned: number) =>
  `manifests: applied ${applied}, skipped ${skipped}, pruned ${pruned}`;
export const clusterPrefix = (cluster: string) => `[talos-gate/${cluster}]`;
export const deleteKeepsNodes = (cluster: string, version: string) =>
  `${clusterPrefix(cluster)} TalosUpgrade removed from the stack; nodes stay on their versions (last converged ${version || "unknown"}); nothing is downgraded`;
export const deleteUncordoned = (cluster: string, node: string) =>
  `${clusterPrefix(cluster)} node ${node}: uncordoned (an interrupted run of this upgrade had cordoned it)`;
export const sweepDone = (cluster: string, jobs: number, pods: number) =>
  `${clusterPrefix(cluster)} removed ${jobs} runner Job(s) and ${pods} runner pod(s)`;
export const refreshWarning = (cluster: string, reason: string) =>
  `${clusterPrefix(cluster)} refresh could not read the cluster (${reason}); keeping the last known state`;
export const cancelled = (signal: string) => `received ${signal}: stopping before the next node`;

// --- Condition, and the gate-shaping inputs of TalosUpgrade
export const conditionKindWarning = (id: string, reason: string) =>
  `condition "${id}": ${reason}; the gate holds with this reason until it is`;
export const conditionTargetRejected = (id: string, reason: string) => `condition "${id}": ${reason}`;
export const planSoak = (ms: number) =>
  `soak: after each node is back and Ready, at least ${formatMs(ms)} with every gate passing before the next one`;
export const planHook = (phase: string, id: string) =>
  `${phase} hook "${id}" runs ${phase === "beforeNode" ? "before each node goes down" : "after each node (also when it fails)"}`;
const formatMs = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`);
export const receivedSignal = (signal: string) => `the provider process received ${signal}`;
export const stoppingBecause = (why: string) => `${why}: stopping before the next node`;
export const credentialsUpdated = "credentials updated (kubeconfig/talosconfig); nothing to roll out";
export const engineCancelled = "the Pulumi engine cancelled the update (Ctrl-C or SIGTERM to the pulumi CLI)";
export const engineGone = "the Pulumi CLI is gone (killed, or its runner was lost), so no result can be saved";
export const engineGoneExit = "talos-gate: the Pulumi CLI is gone and nothing is in flight; the provider process exits";
export const smokeMessageRequired = "message is required and must be a non-empty string";

// --- upgrade paths (upgradePath.ts)
/** "kube-apiserver on cp-1, kube-scheduler on cp-1 and 2 more": where a Kubernetes version was read. */
export const listedPlaces = (places: readonly string[]) =>
  places.length > 3 ? `${places.slice(0, 3).join(", ")} and ${places.length - 3} more` : places.join(", ");
export const kubeletsOf = (nodes: readonly string[]) => `kubelet${nodes.length === 1 ? "" : "s"} of ${listedPlaces(nodes)}`;
export const planLiveCluster = "the live cluster";

/** The warning on the TalosUpgrade's row when an up ends at a closed maintenance window (issue 22.3). */
export const rolloutWaiting = (cluster: string, step: string, pending: number) =>
  `${clusterPrefix(cluster)} ${step}; ${pending} machine(s) still to upgrade: the next \`pulumi up\` inside a window continues the rollout`;

/** Why a run stopped at the resource's customTimeouts (issue 22.8), worded like holdTimeout's reason. */
export const runTimedOut = (op: "create" | "update", bound: string) =>
  `the ${op} ran longer than customTimeouts.${op} ${bound} (nodes in flight finished, no further node was started); ` +
  "run `pulumi up` again to resume from the first node not on the target, or raise customTimeouts";

// --- KubernetesUpgrade (issue 24.3)
export const deleteKeepsKubernetes = (cluster: string, version: string) =>
  `${clusterPrefix(cluster)} KubernetesUpgrade removed from the stack; Kubernetes stays on its version (last converged ${version || "unknown"}); nothing is downgraded`;
