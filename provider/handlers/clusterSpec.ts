// A Cluster's properties, parsed once into types (what `check` accepted, or old state of any release since 0.1.0),
// the machine overrides every consumer applies the same way (the Cluster's outputs, a TalosUpgrade's plan and run),
// and `clusterKey`, the canonical form its diff compares.
import { z } from "zod";
import type { KubeApi, Machine, Manifest } from "../rollout/ports";
import { canonical } from "./common";
import { parseAllObjects } from "./inputs";
import * as msg from "./messages";

const optionalString = z.string().nullish().transform((v) => v || undefined);

/** A machine named in `machines`: its Node name and the overrides of what the Node's labels say. */
export const machineOverride = z.object({
  name: z.string(),
  role: z.enum(["controlplane", "worker"]).nullish().transform((v) => v ?? undefined),
  address: optionalString,
  machineSet: optionalString,
});
export interface MachineOverride {
  name: string;
  role?: "controlplane" | "worker";
  address?: string;
  machineSet?: string;
}

const objectList = z.array(z.record(z.string(), z.unknown()));

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
export type ManifestEntry = z.infer<typeof manifestEntry>;

const clusterProps = z.object({
  clusterName: z.string(),
  kubeconfig: z.string(),
  talosconfig: z.string(),
  resourceUrn: optionalString,
  machineSpec: z.array(machineOverride).nullish().transform((v) => v ?? []),
  manifests: z.array(manifestEntry).nullish().transform((v) => v ?? []),
});
export type ClusterSpec = z.infer<typeof clusterProps>;

export function parseCluster(props: unknown): ClusterSpec {
  return clusterProps.parse(props);
}

/**
 * What the Cluster's inputs mean, canonical: manifests as their objects (a YAML string, an object or a list of the
 * same objects are one manifest; mode "full" is the default), machines without unset overrides, credentials as they
 * are (a rotation is an update that stores them).
 */
export function clusterKey(s: ClusterSpec): string {
  const machines = s.machineSpec
    .map((m) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)))
    .sort((a, b) => String(a.name).localeCompare(String(b.name)));
  return canonical({ clusterName: s.clusterName, kubeconfig: s.kubeconfig, talosconfig: s.talosconfig, machines, manifests: s.manifests });
}

/** Manifest entries → the Kubernetes port's manifests, with the entry's labels and annotations on every object. */
export function toPortManifests(entries: readonly ManifestEntry[]): Manifest[] {
  return entries.map((m) => ({
    name: m.name,
    mode: m.mode,
    content: m.objects.map((o: Record<string, any>) => ({
      ...o,
      metadata: {
        ...(o.metadata ?? {}),
        ...(Object.keys(m.labels).length ? { labels: { ...(o.metadata?.labels ?? {}), ...m.labels } } : {}),
        ...(Object.keys(m.annotations).length ? { annotations: { ...(o.metadata?.annotations ?? {}), ...m.annotations } } : {}),
      },
    })),
  }));
}

/** The machines the cluster manages: every Node, or the named ones with the user's overrides. */
export function selectMachines(live: readonly Machine[], overrides: readonly MachineOverride[]): Machine[] {
  if (overrides.length === 0) return [...live];
  const byName = new Map(live.map((m) => [m.name, m]));
  return overrides.map((o) => {
    const m = byName.get(o.name);
    if (!m) throw new Error(msg.machineNotANode(o.name, [...byName.keys()]));
    return { ...m, role: o.role ?? m.role, address: o.address ?? m.address, machineSet: o.machineSet ?? m.machineSet };
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
  const apply = (m: Machine): Machine => {
    const o = byName.get(m.name)!;
    return { ...m, role: o.role ?? m.role, address: o.address ?? m.address, machineSet: o.machineSet ?? m.machineSet };
  };
  return Object.assign(Object.create(kube), {
    listMachines: async () => selectMachines(await kube.listMachines(), overrides),
    ...(kube.watchMachines ? {
      watchMachines: () => {
        const all = kube.watchMachines!();
        return Object.assign(Object.create(all), { machines: async () => selectMachines(await all.machines(), overrides) });
      },
    } : {}),
    readMachine: async (name: string) => {
      if (!byName.has(name) || !kube.readMachine) return undefined;
      const m = await kube.readMachine(name);
      return m && apply(m);
    },
  });
}
