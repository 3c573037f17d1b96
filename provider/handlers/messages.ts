// Every user-visible message of the Pulumi layer (check failures, errors, progress lines of the handlers).
export const required = (field: string, what: string) => `${field} is required: ${what}`;
export const kubeconfigInvalid = (reason: string) =>
  `kubeconfig is not a usable kubeconfig (${reason}); pass the file's contents, e.g. fs.readFileSync(path, "utf8"), not its path`;
export const talosconfigInvalid = (reason: string) => `talosconfig is not a usable talosconfig: ${reason}`;
export const manifestNameMissing = (i: number) => `manifests[${i}].name is required`;
export const manifestDuplicate = (name: string) => `duplicate manifest name "${name}"`;
export const manifestModeInvalid = (i: number, mode: unknown) =>
  `manifests[${i}].mode must be "full" or "one-time", got ${JSON.stringify(mode)}`;
export const manifestInlineMissing = (i: number) => `manifests[${i}].inline is required (a YAML string, an object or a list of objects)`;
export const manifestInvalid = (name: string, reason: string) => `manifest "${name}" is invalid: ${reason}`;
export const reservedKey = (field: string, key: string, prefix: string) =>
  `${field} key "${key}" is invalid: prefix "${prefix}" is reserved for internal use`;
export const machineInvalid = (i: number, reason: string) => `machines[${i}] ${reason}`;
export const machineNotANode = (name: string, known: readonly string[]) =>
  `machine "${name}" is not a Node of the cluster; known: ${known.join(", ") || "none"}; fix the Cluster's machines list`;

export const versionInvalid = (v: unknown) => `version must be a Talos version like "v1.13.2", got ${JSON.stringify(v)}`;
export const durationInvalid = (field: string, v: unknown, reason: string) => `${field} ${JSON.stringify(v)} is invalid: ${reason}`;
export const durationTooShort = (field: string, min: string) => `${field} must be at least ${min}`;
export const durationTooLong = (field: string, value: string, max: string) =>
  `${field} ${JSON.stringify(value)} is longer than a timer can wait (2^31 ms, about 24 days); use at most "${max}"`;
export const strategyInvalid = (reason: string) => `strategy ${reason}`;
export const healthchecksInvalid = (i: number) =>
  `healthchecks[${i}] must be a talos-gate Healthcheck (its gateCheck: cluster, name or idOverride, job or file, interval)`;
export const healthcheckInvalidInputs = (i: number) =>
  `healthchecks[${i}] cannot gate the upgrade: that Healthcheck's inputs are invalid (its own error says which field)`;
export const imageInvalid = (reason: string) => `installerImage: ${reason}`;

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
export const conditionNameInvalid = (v: unknown) =>
  `name must be 1-63 lowercase letters, digits and '-' (the condition's id is cluster-<cluster>-<name>), got ${JSON.stringify(v)}`;
export const fieldFailure = (field: string, message: string) => `${field}: ${message}`;
export const conditionKindWarning = (id: string, reason: string) =>
  `condition "${id}": ${reason}; the gate holds with this reason until it is`;
export const conditionTargetRejected = (id: string, reason: string) => `condition "${id}": ${reason}`;
export const conditionsInvalid = (i: number) =>
  `conditions[${i}] must be a talos-gate Condition (its conditionId, target and expression)`;
/** Names only the type it got: the value can hold a Job manifest with credentials in it. */
export const hooksInvalid = (got: unknown) =>
  `hooks must be { beforeNode?: hook, afterNode?: hook }, got ${Array.isArray(got) ? "a list" : got === null ? "null" : `a ${typeof got}`}`;
export const hooksUnknownKey = (key: string) => `hooks: unknown field "${key}"; hooks has beforeNode and afterNode`;
export const planSoak = (ms: number) =>
  `soak: after each node is back and Ready, at least ${formatMs(ms)} with every gate passing before the next one`;
export const planHook = (phase: string, id: string) =>
  `${phase} hook "${id}" runs ${phase === "beforeNode" ? "before each node goes down" : "after each node (also when it fails)"}`;
const formatMs = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`);
export const receivedSignal = (signal: string) => `the provider process received ${signal}`;
export const stoppingBecause = (why: string) => `${why}: stopping before the next node`;
export const credentialsUpdated = "credentials updated (kubeconfig/talosconfig); nothing to roll out";
export const clusterNameInvalid = (field: string, name: string, problems: string, suggestion: string) =>
  `${field} ${JSON.stringify(name)} cannot name the cluster's Kubernetes objects (the Lease talos-gate-<name>, the ` +
  `status ConfigMap, the talos-gate.dev/cluster label): it ${problems}; use lowercase letters, digits and '-', ` +
  `starting and ending with a letter or digit, at most 63 characters${suggestion ? `, e.g. ${JSON.stringify(suggestion)}` : ""}`;
export const engineCancelled = "the Pulumi engine cancelled the update (Ctrl-C or SIGTERM to the pulumi CLI)";
export const engineGone = "the Pulumi CLI is gone (killed, or its runner was lost), so no result can be saved";
export const engineGoneExit = "talos-gate: the Pulumi CLI is gone and nothing is in flight; the provider process exits";
