// Kubernetes label selectors (matchLabels + matchExpressions), as the API server evaluates them. Pure: used by the
// drain (which PodDisruptionBudgets cover a pod) and by the sim's disruption controller.

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Does the selector select these labels? A missing selector selects nothing (policy/v1); `{}` selects everything. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case "In":
        if (!has || !values.includes(l[e.key])) return false;
        break;
      case "NotIn":
        if (has && values.includes(l[e.key])) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
