// Condition gates: a CEL expression over Kubernetes objects, compiled at check time and evaluated on every watch
// event. PURE (the objects come from provider/kube/objects.ts), except sandbox.ts, which runs each evaluation in a
// worker thread under a wall-clock budget. Importing this loads the CEL library only when a condition is compiled
// (compileOnDemand.ts).
export {
  type ConditionSpec, type ConditionTarget, type FieldFailure, type LabelSelector, type NamedTarget, type SelectorTarget,
  describeTarget, isNamed, parseConditionSpec, selectorString,
} from "./spec";
export type { CompiledCondition } from "./compile";
export { compileCondition } from "./compileOnDemand";
export { type ConditionVerdict, type HoldCause, type KubeObject, evaluateCondition } from "./evaluate";
export { comprehensionNesting, MAX_NESTING, maxSelection } from "./cost";
export { ConditionSandbox, EVALUATION_BUDGET_MS } from "./sandbox";
