// `Condition`: a watch-driven gate — a CEL expression over one Kubernetes object or every object a label selector
// matches. `check` parses and compiles it (zod + CEL type check), so every error names its field at preview; there is
// nothing in the cluster to create (a TalosUpgrade watches the objects while its gate runs), but create/update ask the
// API server, when reachable, whether the kind is served and scoped as the target says. Outputs are the inputs as
// given plus the derived id, so a preview with unchanged inputs shows no change.
import { changed, errorText, hasUnknown, urnOf, withTimeout, type Properties } from "./common";
import { warn } from "./diagnostics";
import * as msg from "./messages";
import type { KindHandler } from "./registry";
import { checkCondition, conditionOutputs, INPUT_KEYS, type ConditionOutputs } from "../resources/condition";

const DISCOVERY_TIMEOUT_MS = 15_000;

/** With a reachable cluster: a kind not served is a warning (its CRD may come later), a wrong scope an error. */
async function checkKind(p: Properties, outs: ConditionOutputs): Promise<void> {
  if (typeof p.kubeconfig !== "string" || p.kubeconfig === "") return;
  const { KubeClients } = require("../kube/client") as typeof import("../kube/client");
  const c = new KubeClients(p.kubeconfig);
  const t = p.target as { apiVersion: string; kind: string; namespace?: string; name?: string };
  const { msg: kubeMsg } = require("../kube/messages") as typeof import("../kube/messages");
  let served: { namespaced: boolean } | undefined;
  try {
    served = await withTimeout(DISCOVERY_TIMEOUT_MS, msg.KUBERNETES_API, () => c.objects.served(t.apiVersion, t.kind));
  } catch (err) {
    warn(urnOf(p), msg.conditionKindWarning(outs.conditionId, errorText(err))); // unreachable now: the gate tells later
    return;
  } finally {
    c.close();
  }
  if (!served) warn(urnOf(p), msg.conditionKindWarning(outs.conditionId, kubeMsg.kindNotServed(t.apiVersion, t.kind)));
  else if (served.namespaced && t.name !== undefined && !t.namespace) {
    throw new Error(msg.conditionTargetRejected(outs.conditionId, kubeMsg.kindNeedsNamespace(t.apiVersion, t.kind)));
  } else if (!served.namespaced && t.namespace) {
    throw new Error(msg.conditionTargetRejected(outs.conditionId, kubeMsg.kindClusterScoped(t.apiVersion, t.kind)));
  }
}

/** Its Spec is its outputs: the inputs with the derived id. */
export const conditionHandler: KindHandler<ConditionOutputs, ConditionOutputs> = {
  parse: (inputs) => conditionOutputs(inputs),
  async check(_olds, news) {
    const failures = checkCondition(news);
    return failures.length ? { failures } : { inputs: news };
  },
  async diff(_id, olds, news) {
    if (hasUnknown(INPUT_KEYS.map((k) => news[k]))) return { changes: true };
    const keys = changed(olds, news, INPUT_KEYS);
    return { changes: keys.length > 0, replaces: keys.filter((k) => k === "clusterName" || k === "name") };
  },
  async create(outs, inputs) {
    await checkKind(inputs, outs);
    return { id: outs.conditionId, outs };
  },
  async read(id, props) {
    return { id, props };
  },
  async update(_id, outs, _olds, news) {
    await checkKind(news, outs);
    return { outs };
  },
  async delete() {},
};
