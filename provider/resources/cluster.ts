// The Cluster resource's model: one zod schema is what `check` refuses (each failure naming its property), what the
// handlers run with (the parsed spec, from inputs or from state of any release since 0.1.0), and `clusterKey`, the
// canonical form its diff compares. Also the machine model every consumer applies the same way: the Cluster's outputs,
// a TalosUpgrade's plan and its run (`selectMachines`, `withMachineOverrides`).
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import type { KubeApi, Machine, Manifest } from "../rollout/ports";
import { parseTalosconfig } from "../talos/talosconfig";
import { clusterName } from "./fields";
import { canonical, checkFailures, fail, optionalString, parsedWith, UNKNOWN, type CheckFailure } from "./model";
import * as msg from "./messages";

const RESERVED = ["omni.sidero.dev/", "talos-gate.dev/"];

/** A machine named in `machines`: its Node name and the overrides of what the Node's labels say. */
export const machineOverride = z.object({
  name: z.string(),
  role: z.enum(["controlplane", "worker"]).nullish().transform((v) => v ?? undefined).optional(),
  address: optionalString,
  machineSet: optionalString,
});
export type MachineOverride = z.output<typeof machineOverride>;
/** What the SDK's `MachineArgs` must give (checked at compile time: tests/unit/sdk/model-types.test.ts). */
export type MachineOverrideInput = z.input<typeof machineOverride>;

/** The override without its unset fields (what a diff compares, and the SDK's shape). */
export function setFields(m: MachineOverride): MachineOverride {
  return {
    name: m.name,
    ...(m.role ? { role: m.role } : {}),
    ...(m.address ? { address: m.address } : {}),
    ...(m.machineSet ? { machineSet: m.machineSet } : {}),
  };
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
    if (typeof v !== "object" || Array.isArray(v)) throw new Error(msg.notAKubernetesObject());
    out.push(v);
  }
  return out;
}

const kubeconfig = z.unknown().optional().transform((v, ctx) => {
  if (typeof v !== "string" || v.trim() === "") {
    fail(ctx, msg.required("kubeconfig", "the kubeconfig file's contents"));
    return z.NEVER;
  }
  let doc: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- any YAML a user passes, read defensively
  try {
    doc = parseYaml(v);
  } catch (err) {
    fail(ctx, msg.kubeconfigInvalid(`not YAML: ${String((err as Error).message).split("\n")[0]}`));
    return z.NEVER;
  }
  if (!doc || typeof doc !== "object" || !Array.isArray(doc.clusters) || doc.clusters.length === 0) {
    fail(ctx, msg.kubeconfigNoClusters());
  } else if (!Array.isArray(doc.contexts) || !doc["current-context"]) {
    fail(ctx, msg.kubeconfigNoContext());
  }
  return v;
});

const talosconfig = z.unknown().optional().transform((v, ctx) => {
  if (typeof v !== "string" || v.trim() === "") {
    fail(ctx, msg.required("talosconfig", "the talosconfig file's contents"));
    return z.NEVER;
  }
  try {
    parseTalosconfig(v);
  } catch (err) {
    fail(ctx, msg.talosconfigInvalid((err as Error).message));
  }
  return v;
});

/** The machines the user names (`machines` in the SDK, `machineSpec` in state); failures name `machines[i]`. */
const machines = z.unknown().optional().transform((v, ctx): MachineOverride[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    fail(ctx, msg.notAList("machines"));
    return z.NEVER;
  }
  const seen = new Set<string>();
  let refused = false;
  v.forEach((m, i) => {
    if (m === UNKNOWN) return;
    const problem = (reason: string, path: PropertyKey[]) => { refused = true; fail(ctx, reason, path); };
    const name = (m as { name?: unknown } | null)?.name;
    const role = (m as { role?: unknown } | null)?.role;
    if (typeof name !== "string" || name === "") problem(msg.machineNameMissing(i), [i, "name"]);
    else if (seen.has(name)) problem(msg.machineInvalid(i, `repeats "${name}"`), [i, "name"]);
    else seen.add(name);
    if (role !== undefined && role !== "controlplane" && role !== "worker") {
      problem( msg.machineInvalid(i, `role must be "controlplane" or "worker", got ${JSON.stringify(role)}`), [i, "role"]);
    }
  });
  return refused ? z.NEVER : parsedWith(z.array(machineOverride), v, ctx);
});

const objectList = z.array(z.record(z.string(), z.unknown()));

/** One supporting manifest as the handlers apply it: its objects, whatever spelling `inline` had. */
const manifestEntry = z.object({
  name: z.string(),
  mode: z.enum(["full", "one-time"]).nullish().transform((v) => v ?? "full"),
  inline: z.union([z.string(), z.record(z.string(), z.unknown()), objectList]),
  labels: z.record(z.string(), z.string()).nullish(),
  annotations: z.record(z.string(), z.string()).nullish(),
}).transform((m) => ({
  name: m.name,
  mode: m.mode,
  objects: typeof m.inline === "string" ? parseAllObjects(m.inline) : Array.isArray(m.inline) ? m.inline : [m.inline],
  labels: m.labels ?? {},
  annotations: m.annotations ?? {},
}));
export type ManifestEntry = z.output<typeof manifestEntry>;

/** Label or annotation keys with a prefix talos-gate and Omni keep for themselves. */
function reservedKeys(ctx: z.RefinementCtx, field: string, v: unknown, path: PropertyKey[]): void {
  if (v === undefined || v === null || v === UNKNOWN) return;
  for (const key of Object.keys(v as object)) {
    const prefix = RESERVED.find((p) => key.startsWith(p));
    if (prefix) fail(ctx, msg.reservedKey(field, key, prefix), path, field);
  }
}

/** One manifest entry's failures (name, mode, inline, labels, annotations); `seen` finds repeated names. */
function manifestProblems(ctx: z.RefinementCtx, m: Record<string, unknown> | null, i: number, seen: Set<string>): void {
  const name = m?.name;
  if (typeof name !== "string" || name === "") fail(ctx, msg.manifestNameMissing(i), [i, "name"]);
  else if (seen.has(name)) fail(ctx, msg.manifestDuplicate(name), [i, "name"]);
  else seen.add(name);
  if (m?.mode !== undefined && m.mode !== "full" && m.mode !== "one-time") fail(ctx, msg.manifestModeInvalid(i, m.mode), [i, "mode"]);
  if (m?.inline === undefined || m.inline === null) fail(ctx, msg.manifestInlineMissing(i), [i, "inline"]);
  else if (typeof m.inline === "string") {
    try {
      parseAllObjects(m.inline);
    } catch (err) {
      fail(ctx, msg.manifestInvalid(String(name), (err as Error).message), [i, "inline"]);
    }
  }
  reservedKeys(ctx, `manifests[${i}].labels`, m?.labels, [i, "labels"]);
  reservedKeys(ctx, `manifests[${i}].annotations`, m?.annotations, [i, "annotations"]);
}

const manifests = z.unknown().optional().transform((v, ctx): ManifestEntry[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    fail(ctx, msg.notAList("manifests"));
    return z.NEVER;
  }
  const seen = new Set<string>();
  const before = ctx.issues.length;
  v.forEach((m, i) => {
    if (m !== UNKNOWN) manifestProblems(ctx, m as Record<string, unknown> | null, i, seen);
  });
  return ctx.issues.length > before ? z.NEVER : parsedWith(z.array(manifestEntry), v, ctx);
});

/** The Cluster's properties: inputs in check, outputs in state (the observed fields are the handler's). */
export const clusterModel = z.object({
  clusterName: clusterName(),
  kubeconfig: z.string(),
  talosconfig: z.string(),
  machineSpec: machines,
  manifests,
  resourceUrn: optionalString,
});
export type ClusterSpec = z.output<typeof clusterModel>;

/** The Cluster's inputs, in the order `check` lists its failures. */
export const CLUSTER_INPUT_KEYS = Object.keys(clusterModel.shape) as (keyof typeof clusterModel.shape)[];

/**
 * What check accepts: the credentials as usable files (state's are taken as stored), and a missing cluster name, as
 * every release did (the SDK always sets one).
 */
const clusterCheck = clusterModel.extend({ kubeconfig, talosconfig }).partial({ clusterName: true });

export function checkCluster(news: Record<string, unknown>): CheckFailure[] {
  return checkFailures(clusterCheck, news, CLUSTER_INPUT_KEYS);
}

export function parseCluster(props: unknown): ClusterSpec {
  return clusterModel.parse(props);
}

/**
 * What the Cluster's inputs mean, canonical: manifests as their objects (a YAML string, an object or a list of the
 * same objects are one manifest; mode "full" is the default), machines without unset overrides, credentials as they
 * are (a rotation is an update that stores them).
 */
export function clusterKey(s: ClusterSpec): string {
  const machineList = s.machineSpec.map(setFields).sort((a, b) => a.name.localeCompare(b.name));
  return canonical({ clusterName: s.clusterName, kubeconfig: s.kubeconfig, talosconfig: s.talosconfig, machines: machineList, manifests: s.manifests });
}

/** Manifest entries → the Kubernetes port's manifests, with the entry's labels and annotations on every object. */
export function toPortManifests(entries: readonly ManifestEntry[]): Manifest[] {
  return entries.map((m) => ({
    name: m.name,
    mode: m.mode,
    content: m.objects.map((o: Record<string, any>) => ({ // eslint-disable-line @typescript-eslint/no-explicit-any -- a user's object
      ...o,
      metadata: {
        ...(o.metadata ?? {}),
        ...(Object.keys(m.labels).length ? { labels: { ...(o.metadata?.labels ?? {}), ...m.labels } } : {}),
        ...(Object.keys(m.annotations).length ? { annotations: { ...(o.metadata?.annotations ?? {}), ...m.annotations } } : {}),
      },
    })),
  }));
}

/** A live machine with the user's overrides applied. */
function overridden(m: Machine, o: MachineOverride): Machine {
  return { ...m, role: o.role ?? m.role, address: o.address ?? m.address, machineSet: o.machineSet ?? m.machineSet };
}

/** The machines the cluster manages: every Node, or the named ones with the user's overrides. */
export function selectMachines(live: readonly Machine[], overrides: readonly MachineOverride[]): Machine[] {
  if (overrides.length === 0) return [...live];
  const byName = new Map(live.map((m) => [m.name, m]));
  return overrides.map((o) => {
    const m = byName.get(o.name);
    if (!m) throw new Error(msg.machineNotANode(o.name, [...byName.keys()]));
    return overridden(m, o);
  });
}

/**
 * The Kubernetes port as a rollout of this cluster sees it: only the machines the Cluster names, with its overrides
 * (role, Talos address, machine set) — the same model for the Cluster's outputs, the preview plan and the run. A view
 * over the port, not another implementation.
 */
export function withMachineOverrides<K extends KubeApi>(kube: K, overrides: readonly MachineOverride[]): K {
  if (overrides.length === 0) return kube;
  const byName = new Map(overrides.map((o) => [o.name, o]));
  return Object.assign(Object.create(kube), {
    listMachines: async () => selectMachines(await kube.listMachines(), overrides),
    watchMachines: () => {
      const all = kube.watchMachines();
      return Object.assign(Object.create(all), { machines: async () => selectMachines(await all.machines(), overrides) });
    },
    readMachine: async (name: string) => {
      if (!byName.has(name)) return undefined;
      const m = await kube.readMachine(name);
      return m && overridden(m, byName.get(name)!);
    },
  });
}
