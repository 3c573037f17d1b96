// Every check failure of the resource models: what `pulumi preview` prints for an input it refuses, naming the field.
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
export const versionInvalid = (v: unknown) => `version must be a Talos version like "v1.13.2", got ${JSON.stringify(v)}`;
export const pathInvalid = (v: unknown) => `path must be a list of Talos versions rolled before version, e.g. ["v1.12.11"], got ${JSON.stringify(v)}`;
export const pathStepInvalid = (i: number, v: unknown) => `path[${i}] must be a Talos version like "v1.12.11", got ${JSON.stringify(v)}`;
export const pathNotAscending = (i: number, v: string, prev: string) =>
  `path[${i}] ${v} is not newer than the step before it (${prev}); list the versions in the order they are rolled`;
export const pathNotBelowVersion = (i: number, v: string, version: string) =>
  `path[${i}] ${v} is not older than version ${version}; path lists the versions rolled before version`;
export const durationInvalid = (field: string, v: unknown, reason: string) => `${field} ${JSON.stringify(v)} is invalid: ${reason}`;
export const durationTooShort = (field: string, min: string) => `${field} must be at least ${min}`;
export const durationTooLong = (field: string, value: string, max: string) =>
  `${field} ${JSON.stringify(value)} is longer than a timer can wait (2^31 ms, about 24 days); use at most "${max}"`;
export const drainInvalid = (v: unknown) =>
  `drain must be "auto" (drain unless no other node could take the pods), "always" or "never", got ${JSON.stringify(v)}`;
export const etcdQuorumLossInvalid = (v: unknown) =>
  `etcdQuorumLoss must be "refuse" (default) or "allow" (2 control planes: each reboot takes etcd's quorum until it is back), got ${JSON.stringify(v)}`;
export const strategyInvalid = (reason: string) => `strategy ${reason}`;
export const healthchecksInvalid = (i: number) =>
  `healthchecks[${i}] must be a talos-gate Healthcheck (its gateCheck: cluster, name or idOverride, job or file, interval)`;
export const healthcheckInvalidInputs = (i: number) =>
  `healthchecks[${i}] cannot gate the upgrade: that Healthcheck's inputs are invalid (its own error says which field)`;
export const imageInvalid = (reason: string) => `installerImage: ${reason}`;
export const conditionNameInvalid = (v: unknown) =>
  `name must be 1-63 lowercase letters, digits and '-' (the condition's id is cluster-<cluster>-<name>), got ${JSON.stringify(v)}`;
export const fieldFailure = (field: string, message: string) => `${field}: ${message}`;
export const conditionsInvalid = (i: number) =>
  `conditions[${i}] must be a talos-gate Condition (its conditionId, target and expression)`;
/** Names only the type it got: the value can hold a Job manifest with credentials in it. */
export const hooksInvalid = (got: unknown) =>
  `hooks must be { beforeNode?: hook, afterNode?: hook }, got ${Array.isArray(got) ? "a list" : got === null ? "null" : `a ${typeof got}`}`;
export const hooksUnknownKey = (key: string) => `hooks: unknown field "${key}"; hooks has beforeNode and afterNode`;
export const clusterNameInvalid = (field: string, name: string, problems: string, suggestion: string) =>
  `${field} ${JSON.stringify(name)} cannot name the cluster's Kubernetes objects (the Lease talos-gate-<name>, the ` +
  `status ConfigMap, the talos-gate.dev/cluster label): it ${problems}; use lowercase letters, digits and '-', ` +
  `starting and ending with a letter or digit, at most 63 characters${suggestion ? `, e.g. ${JSON.stringify(suggestion)}` : ""}`;
export const machineNotANode = (name: string, known: readonly string[]) =>
  `machine "${name}" is not a Node of the cluster; known: ${known.join(", ") || "none"}; fix the Cluster's machines list`;
export const notAKubernetesObject = () => "every YAML document must be a Kubernetes object";
export const notAList = (field: string) => `${field} must be a list`;
export const kubeconfigNoClusters = () => kubeconfigInvalid("it lists no clusters");
export const kubeconfigNoContext = () => kubeconfigInvalid("it has no current-context");
export const machineNameMissing = (i: number) => machineInvalid(i, "needs a name (the Kubernetes Node name)");
export const orderNotAList = () => strategyInvalid("order must be a list of node names");

// --- a Cluster's `context` (issue 22.8); texts never quote the credentials themselves
export const contextNotFound = (what: "kubeconfig" | "talosconfig", name: string, known: readonly string[]) =>
  `Cluster context.${what}: "${name}" is not a context of the ${what} (it has: ${known.join(", ") || "none"}); ` +
  `use one of those names (${what === "kubeconfig" ? "kubectl config get-contexts" : "talosctl config contexts"})`;
export const contextUnreadable = (what: string, detail: string) =>
  `Cluster context: the ${what} cannot be read to choose its context (${detail}); pass the file's contents`;
export const kubernetesVersionInvalid = (v: unknown) => `version must be a Kubernetes version like "v1.36.1", got ${JSON.stringify(v)}`;
