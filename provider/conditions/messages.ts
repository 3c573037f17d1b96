// Every user-visible message of condition gates: check-time failures (each names its field) and the reasons a
// condition holds the gate at run time (each says which object, which field, or what the expression returned). PURE.

/** `ceph.rook.io/v1 CephCluster rook-ceph/rook-ceph`, or `v1 Node w-1` for a cluster-scoped object. */
export const objectRef = (apiVersion: string, kind: string, namespace: string | undefined, name: string) =>
  `${apiVersion} ${kind} ${namespace ? `${namespace}/${name}` : name}`;

/** `longhorn.io/v1beta2 Volume objects matching app=x in namespace longhorn-system` (or "in all namespaces"). */
export const selectionRef = (apiVersion: string, kind: string, namespace: string | undefined, selector: string) =>
  `${apiVersion} ${kind} objects matching ${selector === "" ? "any labels" : selector} ` +
  (namespace ? `in namespace ${namespace}` : "in all namespaces");

// --- check time (preview): `field` is the full path of the input, e.g. `expression` or `conditions[0].expression`
export const invalidField = (field: string, detail: string) => `${field}: ${detail}`;
export const required = (what: string) => `is required: ${what}`;
export const notAString = (v: unknown) => `must be a string, got ${JSON.stringify(v)}`;
export const targetNeedsOne = () =>
  "needs exactly one of name (one object, seen as `object`) or labelSelector (every matching object, seen as the list `objects`)";
export const targetBoth = () => "sets both name and labelSelector; use name for one object or labelSelector for many";
export const apiVersionInvalid = (v: string) =>
  `${JSON.stringify(v)} is not an apiVersion; use "v1" for core kinds or "<group>/<version>", e.g. "ceph.rook.io/v1"`;
export const kindInvalid = (v: string) => `${JSON.stringify(v)} is not a kind; use the kind's CamelCase name, e.g. "CephCluster"`;
export const nameInvalid = (v: string, why: string) => `${JSON.stringify(v)} is not a Kubernetes object name: ${why}`;
export const labelKeyInvalid = (key: string, why: string) => `label key ${JSON.stringify(key)} is invalid: ${why}`;
export const labelValueInvalid = (value: string, why: string) => `label value ${JSON.stringify(value)} is invalid: ${why}`;
export const operatorInvalid = (op: unknown) =>
  `operator must be one of In, NotIn, Exists, DoesNotExist, got ${JSON.stringify(op)}`;
export const valuesNeeded = (op: string) => `operator ${op} needs a non-empty values list`;
export const valuesForbidden = (op: string) => `operator ${op} takes no values`;
export const unknownKey = (key: string, known: readonly string[]) =>
  `unknown field ${JSON.stringify(key)}; known fields: ${known.join(", ")}`;
export const celSyntax = (detail: string) => `is not a valid CEL expression: ${detail}`;
export const celType = (detail: string) => `does not type-check: ${detail}`;
export const celWrongVariable = (used: string, has: string, why: string) =>
  `uses \`${used}\`, but this condition ${why}, so its variable is \`${has}\``;
export const celTooNested = (depth: number, max: number) =>
  `nests ${depth} comprehensions (all/exists/exists_one/map/filter) inside one another; at most ${max} are allowed, ` +
  "since each level multiplies the work per watch event by the list's size: compute an inner result once instead";
export const celNotBool = (type: string) => `must evaluate to a bool (true opens the gate), but its type is ${type}`;
export const allowEmptyNamed = () =>
  "applies to a target.labelSelector only; a named object that is missing always holds the gate";
export const celNotString = (type: string) => `must evaluate to a string (why the gate holds), but its type is ${type}`;

// --- run time: why a condition holds the gate
export const objectNotFound = (ref: string) => `${ref} not found`;
export const fieldAbsent = (path: string, on: string) => `field ${path} absent on ${on}`;
export const noObjectsMatch = (ref: string) =>
  `no ${ref}; set allowEmpty: true if an empty selection should open the gate`;
export const expressionFalse = (expression: string) => `expression is false: ${expression}`;
export const expressionNotBool = (type: string, value: string) =>
  `expression returned ${type} ${value}, not a bool; fix the expression so it returns true or false`;
export const selectionTooLarge = (count: number, max: number, nesting: number) =>
  `the selection holds ${count} objects, more than the ${max} a condition whose comprehensions nest ${nesting} deep may ` +
  "evaluate; narrow target.labelSelector or set target.namespace";
export const evaluationOverBudget = (ms: number, count: number) =>
  `expression did not finish within ${ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000}s` : `${ms} ms`} over ${count} ` +
  `object${count === 1 ? "" : "s"} and was stopped; simplify it (fewer nested comprehensions, no backtracking ` +
  "regular expressions) or narrow the target";
export const evaluationCrashed = (detail: string) => `expression could not be evaluated: ${detail}`;
export const evaluationFailed = (detail: string) => `expression failed: ${detail}`;
export const messageFailed = (reason: string, detail: string) => `${reason} (message expression failed: ${detail})`;
export const kindNotServed = (apiVersion: string, kind: string) =>
  `${apiVersion} ${kind} is not served by the cluster (is its CRD installed?)`;
/** Why an evaluation's worker thread is gone (in `evaluationCrashed`). */
export const watchStopped = () => "the run's condition watch has stopped";
export const workerExited = (code: number) => `worker exited with code ${code}`;
export const workerNotStarted = (seconds: number) => `worker did not start within ${seconds}s`;
