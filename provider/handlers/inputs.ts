// Pure validation of resource inputs for `check`: every failure names its property, so `pulumi preview` shows it.
import { parse as parseYaml } from "yaml";
import { parseTalosconfig } from "../talos/talosconfig";
import { MAX_TIMER_MS, MAX_TIMER_TEXT, parseDuration } from "../template/duration";
import { dnsLabelErrors } from "../template/formats";
import { CheckFailure, UNKNOWN } from "./common";
import * as msg from "./messages";

const RESERVED = ["omni.sidero.dev/", "talos-gate.dev/"];

/**
 * A cluster name names Kubernetes objects (the Lease `talos-gate-<name>`, the status ConfigMap) and is a label value,
 * so it must be a DNS-1123 label: "Prod" or "prod_eu" would pass preview and fail at the Lease with a 422 otherwise.
 */
export function checkClusterName(field: string, v: unknown, out: CheckFailure[]): void {
  if (v === UNKNOWN || v === undefined) return;
  if (typeof v !== "string" || v === "") {
    out.push({ property: field, reason: msg.required(field, "the cluster's name") });
    return;
  }
  const problems = dnsLabelErrors(v, (n) => `is longer than ${n} characters`, "has characters Kubernetes names cannot hold");
  if (problems.length === 0) return;
  const suggestion = v.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 63).replace(/-+$/, "");
  out.push({ property: field, reason: msg.clusterNameInvalid(field, v, problems.join(" and "), suggestion) });
}

export function checkKubeconfig(v: unknown, out: CheckFailure[]): void {
  if (v === UNKNOWN) return;
  if (typeof v !== "string" || v.trim() === "") {
    out.push({ property: "kubeconfig", reason: msg.required("kubeconfig", "the kubeconfig file's contents") });
    return;
  }
  let doc: any;
  try {
    doc = parseYaml(v);
  } catch (err) {
    out.push({ property: "kubeconfig", reason: msg.kubeconfigInvalid(`not YAML: ${String((err as Error).message).split("\n")[0]}`) });
    return;
  }
  if (!doc || typeof doc !== "object" || !Array.isArray(doc.clusters) || doc.clusters.length === 0) {
    out.push({ property: "kubeconfig", reason: msg.kubeconfigInvalid("it lists no clusters") });
  } else if (!Array.isArray(doc.contexts) || !doc["current-context"]) {
    out.push({ property: "kubeconfig", reason: msg.kubeconfigInvalid("it has no current-context") });
  }
}

export function checkTalosconfig(v: unknown, out: CheckFailure[]): void {
  if (v === UNKNOWN) return;
  if (typeof v !== "string" || v.trim() === "") {
    out.push({ property: "talosconfig", reason: msg.required("talosconfig", "the talosconfig file's contents") });
    return;
  }
  try {
    parseTalosconfig(v);
  } catch (err) {
    out.push({ property: "talosconfig", reason: msg.talosconfigInvalid((err as Error).message) });
  }
}

function checkDescriptors(field: string, v: unknown, out: CheckFailure[]): void {
  if (v === undefined || v === null || v === UNKNOWN) return;
  for (const key of Object.keys(v as object)) {
    const prefix = RESERVED.find((p) => key.startsWith(p));
    if (prefix) out.push({ property: field, reason: msg.reservedKey(field, key, prefix) });
  }
}

export function checkManifests(v: unknown, out: CheckFailure[]): void {
  if (v === undefined || v === null || v === UNKNOWN) return;
  if (!Array.isArray(v)) {
    out.push({ property: "manifests", reason: "manifests must be a list" });
    return;
  }
  const seen = new Set<string>();
  v.forEach((m: any, i) => {
    if (m === UNKNOWN) return;
    if (typeof m?.name !== "string" || m.name === "") out.push({ property: "manifests", reason: msg.manifestNameMissing(i) });
    else if (seen.has(m.name)) out.push({ property: "manifests", reason: msg.manifestDuplicate(m.name) });
    else seen.add(m.name);
    if (m?.mode !== undefined && m.mode !== "full" && m.mode !== "one-time") {
      out.push({ property: "manifests", reason: msg.manifestModeInvalid(i, m.mode) });
    }
    if (m?.inline === undefined || m.inline === null) out.push({ property: "manifests", reason: msg.manifestInlineMissing(i) });
    else if (typeof m.inline === "string" && m.inline !== UNKNOWN) {
      try {
        parseAllObjects(m.inline);
      } catch (err) {
        out.push({ property: "manifests", reason: msg.manifestInvalid(String(m.name), (err as Error).message) });
      }
    }
    checkDescriptors(`manifests[${i}].labels`, m?.labels, out);
    checkDescriptors(`manifests[${i}].annotations`, m?.annotations, out);
  });
}

export function checkMachines(v: unknown, out: CheckFailure[]): void {
  if (v === undefined || v === null || v === UNKNOWN) return;
  if (!Array.isArray(v)) {
    out.push({ property: "machineSpec", reason: "machines must be a list" });
    return;
  }
  const seen = new Set<string>();
  v.forEach((m: any, i) => {
    if (m === UNKNOWN) return;
    if (typeof m?.name !== "string" || m.name === "") out.push({ property: "machineSpec", reason: msg.machineInvalid(i, "needs a name (the Kubernetes Node name)") });
    else if (seen.has(m.name)) out.push({ property: "machineSpec", reason: msg.machineInvalid(i, `repeats "${m.name}"`) });
    else seen.add(m.name);
    if (m?.role !== undefined && m.role !== "controlplane" && m.role !== "worker") {
      out.push({ property: "machineSpec", reason: msg.machineInvalid(i, `role must be "controlplane" or "worker", got ${JSON.stringify(m.role)}`) });
    }
  });
}

/** Parses a Go duration input, or records a failure; `min` in ms. */
export function checkDuration(field: string, v: unknown, out: CheckFailure[], min?: { ms: number; text: string }): number | undefined {
  if (v === undefined || v === null || v === UNKNOWN) return undefined;
  if (typeof v !== "string") {
    out.push({ property: field, reason: msg.durationInvalid(field, v, 'use a Go duration such as "15m" or "1h30m"') });
    return undefined;
  }
  try {
    const ms = parseDuration(v);
    if (min && ms < min.ms) {
      out.push({ property: field, reason: msg.durationTooShort(field, min.text) });
      return undefined;
    }
    if (ms > MAX_TIMER_MS) {
      out.push({ property: field, reason: msg.durationTooLong(field, v, MAX_TIMER_TEXT) });
      return undefined;
    }
    return ms;
  } catch (err) {
    out.push({ property: field, reason: msg.durationInvalid(field, v, (err as Error).message) });
    return undefined;
  }
}

/** Every object of a YAML string (documents; `kind: List` items are kept as one object for the apply layer). */
export function parseAllObjects(text: string): Record<string, unknown>[] {
  const { parseAllDocuments } = require("yaml") as typeof import("yaml");
  const docs = parseAllDocuments(text);
  const out: Record<string, unknown>[] = [];
  for (const d of docs) {
    if (d.errors.length > 0) throw new Error(d.errors[0].message.split("\n")[0]);
    const v = d.toJS();
    if (v === null || v === undefined) continue;
    if (typeof v !== "object" || Array.isArray(v)) throw new Error("every YAML document must be a Kubernetes object");
    out.push(v);
  }
  return out;
}
