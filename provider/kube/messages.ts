// Every user-visible message of the Kubernetes port. Each says what failed, where (namespace/object, node, cluster)
// and what to do. Details come from the API server's Status message (errors.ts), never from raw exception text.

const dur = (ms: number): string =>
  ms % 60000 === 0 ? `${ms / 60000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;

/** What the user should do about a failed request, from its HTTP status. */
function hint(status: number | undefined, resource: string, namespace?: string): string {
  const where = namespace ? ` in namespace "${namespace}"` : "";
  switch (status) {
    case 401:
      return "the kubeconfig's credentials were refused; use a current kubeconfig for this cluster";
    case 403:
      return `grant the kubeconfig's user access to ${resource}${where} (see the RBAC the talos-gate docs list)`;
    case undefined:
      return "check that the API server in the kubeconfig is reachable, then retry";
    default:
      return status >= 500 || status === 429 ? "the API server is overloaded or restarting; retry" : "fix the cause above, then retry";
  }
}

export const msg = {
  // --- kubeconfig
  kubeconfigInvalid: (detail: string) => `kubeconfig: cannot be read (${detail}); pass the contents of a kubeconfig file`,
  kubeconfigNoCluster: () =>
    "kubeconfig: no current cluster (current-context is missing or names no cluster); set current-context",

  // --- credentials (credentials.ts)
  execPluginTimeout: (command: string, ms: number) =>
    `kubeconfig: the credential plugin ${command} did not return credentials within ${dur(ms)} and was stopped; ` +
    "check that it runs without a terminal (talos-gate never answers prompts) and can reach its identity provider",
  execPluginMissing: (command: string) =>
    `kubeconfig: the credential plugin ${command} was not found; install it, or give users[].user.exec.command as a ` +
    "path (a relative one is taken from the kubeconfig's folder)",
  execPluginFailed: (command: string, code: number | string | undefined, detail: string) =>
    `kubeconfig: the credential plugin ${command} failed${code !== undefined ? ` with exit code ${code}` : ""}` +
    `${detail ? `: ${detail}` : ""}; run it by hand to see why (its credentials are never shown here)`,
  tokenFileUnreadable: (file: string, detail: string) =>
    `kubeconfig: the token file ${file} cannot be read (${detail}); check users[].user.tokenFile (a relative path is ` +
    "taken from the kubeconfig's folder)",

  // --- healthcheck runner (Omni's wording for the outcome details, §4.3 / §4.4)
  waitingToComplete: () => "waiting to complete",
  jobFailedDefault: () => "healthcheck job failed",
  /** Omni's fallback failure text: `<reason>: <message>`, `healthcheck job failed` for an empty reason. */
  jobConditionText: (reason: string | undefined, message: string | undefined) =>
    `${reason?.trim() || "healthcheck job failed"}${message?.trim() ? `: ${message.trim()}` : ""}`,
  jobNamespaceMissing: (ns: string, job: string) =>
    `healthcheck Job ${ns}/${job}: namespace "${ns}" does not exist; create it (for example in the Cluster's manifests) ` +
    "or set metadata.namespace of the healthcheck's job manifest to an existing namespace",
  jobInvalid: (ns: string, job: string, detail: string) =>
    `healthcheck Job ${ns}/${job}: the cluster rejected the Job: ${detail}; fix the healthcheck's job manifest`,
  jobRequestFailed: (op: string, ns: string, job: string, detail: string, status: number | undefined) =>
    `healthcheck Job ${ns}/${job}: ${op} failed: ${detail}; ${hint(status, "jobs and pods", ns)}`,

  foreignJobReplaced: (ns: string, job: string, uid: string) =>
    `healthcheck Job ${ns}/${job} (uid ${uid}) was not created by this run; deleting it and creating this run's own ` +
    "(only a Job this run created can pass a check; run checks in a namespace only the pipeline may write)",

  // --- dry run
  jobDryRunRejected: (ns: string, job: string, detail: string) =>
    `healthcheck Job ${ns}/${job}: the cluster would reject the Job (server-side dry run): ${detail}; ` +
    "fix the healthcheck's job manifest",

  // --- nodes
  nodeRequestFailed: (op: string, node: string, detail: string, status: number | undefined) =>
    `node ${node}: ${op} failed: ${detail}; ${status === 404 ? "the node does not exist in this cluster; check the node name" : hint(status, "nodes")}`,
  listNodesFailed: (detail: string, status: number | undefined) =>
    `listing the cluster's Nodes failed: ${detail}; ${hint(status, "nodes")}`,

  // --- drain
  drainTimeout: (node: string, timeoutMs: number, blockers: string[], pdbs: string[]) =>
    `drain of node ${node} did not finish within ${dur(timeoutMs)}: ${blockers.length} pod(s) still on the node: ` +
    `${blockers.join(", ")}` +
    (pdbs.length
      ? `; evictions refused by PodDisruptionBudget ${pdbs.join(", ")} — scale up the protected workload or relax the budget`
      : "; check why the pods do not terminate (finalizers, long grace periods)") +
    ", then retry",
  drainCancelled: (node: string) => `drain of node ${node} was cancelled`,
  evictFailed: (node: string, pod: string, detail: string, status: number | undefined) =>
    `drain of node ${node}: evicting pod ${pod} failed: ${detail}; ${hint(status, "pods/eviction")}`,
  blockedPod: (pod: string, why: string) => `${pod} (${why})`,
  blockedByPdb: (pdb: string) => `blocked by PodDisruptionBudget ${pdb}`,
  blockedTerminating: () => "terminating",
  blockedEvicting: () => "eviction pending",

  // --- lease
  leaseHeld: (cluster: string, holder: string, expiresAt: Date) =>
    `cluster ${cluster}: another rollout holds the lease (holder "${holder}") until ${expiresAt.toISOString()}; ` +
    "wait for it to finish, or — if that process is gone — retry after the lease expires",
  leaseRequestFailed: (cluster: string, op: string, detail: string, status: number | undefined) =>
    `cluster ${cluster}: ${op} of the rollout lease failed: ${detail}; ${hint(status, "leases.coordination.k8s.io", "kube-system")}`,
  leaseWatchFailed: (cluster: string, detail: string) =>
    `cluster ${cluster}: cannot watch the rollout lease (${detail}); a stop request (talos-gate stop) is noticed at the next renewal instead`,
  stopRequested: (by: string, at: string) => `stop requested by ${by} at ${at} (talos-gate stop)`,
  leaseLost: (cluster: string, holder: string) =>
    `cluster ${cluster}: the rollout lease was taken over by "${holder}"; stopping so two rollouts never run at once`,
  leaseRenewRetrying: (cluster: string, detail: string, expiresAt: Date) =>
    `cluster ${cluster}: renewing the rollout lease failed (${detail}); retrying every second — the rollout stops ` +
    `before the next node if it is not renewed by ${expiresAt.toISOString()}`,
  leaseRenewFailed: (cluster: string, detail: string) =>
    `cluster ${cluster}: the rollout lease could not be renewed before it expired (${detail}); stopping so two ` +
    "rollouts never run at once — retry when the API server is reachable",

  // --- status mirror and events
  statusWriteFailed: (cluster: string, detail: string) =>
    `cluster ${cluster}: writing the live status to ConfigMap kube-system/talos-gate-status-${cluster} failed: ${detail}`,
  statusUnserializable: (detail: string) => `the status cannot be serialized as JSON: ${detail}`,
  statusUnreadable: (cluster: string, detail: string) =>
    `cluster ${cluster}: ConfigMap kube-system/talos-gate-status-${cluster} does not hold a readable status (${detail}); ` +
    "it is rewritten by the next rollout",
  statusReadFailed: (cluster: string, detail: string, status: number | undefined) =>
    `cluster ${cluster}: reading the live status failed: ${detail}; ${hint(status, "configmaps", "kube-system")}`,
  eventWriteFailed: (object: string, reason: string, detail: string) =>
    `recording event ${reason} on ${object} failed: ${detail}`,
  eventsRefused: (detail: string) =>
    `the cluster refused to record Kubernetes Events (the rollout goes on without them; \`talos-gate rbac\` prints the role that allows them): ${detail}`,
  eventsDropped: (n: number) =>
    `${n} Kubernetes Events are waiting to be written: newer ones are dropped (the rollout goes on; the API server is slow)`,

  // --- manifests
  manifestNotYaml: (manifest: string, detail: string) =>
    `manifest "${manifest}": not valid YAML (${detail}); fix the manifest text`,
  manifestNotObject: (manifest: string, index: number) =>
    `manifest "${manifest}": document ${index + 1} is not a Kubernetes object (needs apiVersion, kind and metadata.name)`,
  manifestApplyFailed: (manifest: string, object: string, detail: string, status: number | undefined) =>
    `manifest "${manifest}": applying ${object} failed: ${detail}; ` +
    (status === 404 ? "the kind is unknown to the cluster (is its CRD installed?) or the namespace is missing" : hint(status, object)),
  manifestPruneSkipped: (what: string) =>
    `manifests: not pruning ${what}: the live object is not the one talos-gate applied for this cluster (another uid, ` +
    "labels or field manager); it is left alone and dropped from the inventory",
  manifestPruneFailed: (object: string, detail: string) => `pruning ${object} (no longer in the manifests) failed: ${detail}`,
  bootstrapApplyFailed: (manifest: string, object: string, detail: string, status: number | undefined) =>
    `syncing Talos' bootstrap manifest "${manifest}" (as talosctl upgrade-k8s does): applying ${object} failed: ${detail}; ` + hint(status, object),
  bootstrapForeignInventory: (manifest: string, object: string, owner: string) =>
    `Talos' bootstrap manifest "${manifest}": ${object} carries config.k8s.io/owning-inventory "${owner}", not Talos' ` +
    `"talos-bootstrap-manifests-inventory"; talosctl upgrade-k8s refuses it too: fix the control plane's extra manifests`,
  daemonSetReadFailed: (ds: string, detail: string, status: number | undefined) =>
    `reading DaemonSet ${ds} failed: ${detail}; ` + hint(status, "daemonsets", ds.split("/")[0]),
  inventoryFailed: (cluster: string, detail: string, status: number | undefined) =>
    `cluster ${cluster}: updating the manifest inventory ConfigMap kube-system/talos-gate-manifests-${cluster} failed: ${detail}; ` +
    hint(status, "configmaps", "kube-system"),

  // --- object selections (condition gates)
  kindNotServed: (apiVersion: string, kind: string) =>
    `${apiVersion} ${kind} is not served by the cluster (is its CRD installed?); install it, or fix the target's apiVersion and kind`,
  discoveryFailed: (apiVersion: string, kind: string, detail: string, status: number | undefined) =>
    `looking up ${apiVersion} ${kind} in the cluster's API discovery failed: ${detail}; ${hint(status, "API discovery")}`,
  kindNeedsNamespace: (apiVersion: string, kind: string) =>
    `${apiVersion} ${kind} is namespaced: set the target's namespace`,
  kindClusterScoped: (apiVersion: string, kind: string) =>
    `${apiVersion} ${kind} is cluster-scoped: remove the target's namespace`,
  objectsListFailed: (what: string, detail: string, status: number | undefined) =>
    `listing ${what} failed: ${detail}; ${hint(status, what)}`,

  // --- volume attachments (storage-aware reboot)
  volumeBlocker: (volume: string, attacher: string, detaching: boolean) =>
    `${volume} (${attacher}${detaching ? ", detaching" : ""})`,
  volumesStillAttached: (node: string, timeoutMs: number, volumes: string[]) =>
    `node ${node}: ${volumes.length} volume(s) still attached ${dur(timeoutMs)} after the drain: ${volumes.join(", ")}; ` +
    "check the CSI driver's attacher (kubectl get volumeattachments), then retry",
  volumeWaitCancelled: (node: string) => `waiting for the volumes of node ${node} to detach was cancelled`,
  volumesListFailed: (node: string, detail: string, status: number | undefined) =>
    `node ${node}: reading its VolumeAttachments failed: ${detail}; ${hint(status, "volumeattachments.storage.k8s.io")}`,

  // --- logged only (best-effort paths)
  pdbListFailed: (ns: string, detail: string) => `drain: listing PodDisruptionBudgets in namespace ${ns} failed: ${detail}`,
  retrying: (detail: string) => `${detail} (retrying)`,
  watchDropped: (what: string, detail: string | undefined) => `watch of ${what} dropped (${detail ?? "closed"}); reconnecting`,
  /** `decidedBy`: which signal settled the pass (runner.ts's table: the pod's Succeeded or the Job's Complete). */
  healthcheckPassedEvent: (decidedBy: string) => `healthcheck passed (${decidedBy})`,
  passedByPod: (pod: string) => `pod ${pod} Succeeded`,
  passedByJob: () => "Job Complete",
  /** The runner's pod watch failed for good (e.g. no watch on pods in the role): passes are read from the Job only. */
  podWatchUnavailable: (ns: string, job: string, detail: string) =>
    `cannot watch the pods of healthcheck Job ${ns}/${job} (${detail}); its pass is read from the Job's Complete ` +
    "instead, about a second later (grant watch on pods: `talos-gate rbac`)",

  // --- sweep (logged only)
  sweepFailed: (what: string, detail: string) => `cleanup of healthcheck runners: ${what} failed: ${detail}`,

  // --- why an exec plugin's output is refused (in the credential error naming the plugin)
  execNotJson: () => "its output is not an ExecCredential (JSON)",
  execApiVersion: (got: string, want: string) => `it returned apiVersion ${got}, not ${want}`,
  execNoCredential: () => "it returned neither a token nor a certificate and key",
};
