// Condition gates: a CEL expression over Kubernetes objects, compiled at check time and evaluated on every watch
// event. PURE (the objects come from provider/kube/objects.ts).
export {
  type ConditionSpec, type ConditionTarget, type FieldFailure, type LabelSelector, type NamedTarget, type SelectorTarget,
  describeTarget, isNamed, parseConditionSpec, selectorString,
} from "./spec";
export { type CompiledCondition, compileCondition } from "./compile";
export { type ConditionVerdict, type HoldCause, type KubeObject, evaluateCondition } from "./evaluate";
