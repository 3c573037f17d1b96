// A Cluster's optional `context` (issue 22.8): which context of the kubeconfig and of the talosconfig to use instead of
// their current ones. Applied by rewriting the current context of each text, so every consumer (the Cluster, its
// Healthchecks, Conditions and TalosUpgrades, the preview plan) reads the same choice. PURE (yaml only: the SDK
// imports it).
import * as YAML from "yaml";
import * as msg from "./messages";

export interface CredentialContext {
  /** A context name of the kubeconfig (`kubectl config get-contexts`). */
  kubeconfig?: string;
  /** A context name of the talosconfig (`talosctl config contexts`). */
  talosconfig?: string;
}

function parsed(text: string, what: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new Error(msg.contextUnreadable(what, (err as Error).message));
  }
  if (!doc || typeof doc !== "object") throw new Error(msg.contextUnreadable(what, "not a YAML mapping"));
  return doc as Record<string, unknown>;
}

/** The kubeconfig with `current-context` set to `name`; throws naming the contexts it has when it has no such one. */
export function withKubeContext(kubeconfig: string, name: string): string {
  const doc = parsed(kubeconfig, "kubeconfig");
  const names = Array.isArray(doc.contexts) ? doc.contexts.map((c: { name?: unknown }) => String(c?.name)) : [];
  if (!names.includes(name)) throw new Error(msg.contextNotFound("kubeconfig", name, names));
  return YAML.stringify({ ...doc, "current-context": name });
}

/** The talosconfig with `context` set to `name`; throws naming the contexts it has when it has no such one. */
export function withTalosContext(talosconfig: string, name: string): string {
  const doc = parsed(talosconfig, "talosconfig");
  const contexts = doc.contexts && typeof doc.contexts === "object" ? Object.keys(doc.contexts) : [];
  if (!contexts.includes(name)) throw new Error(msg.contextNotFound("talosconfig", name, contexts));
  return YAML.stringify({ ...doc, context: name });
}
