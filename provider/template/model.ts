// The normalized model of an Omni cluster template, as parseTemplate returns it (and `talos-gate validate --json`
// prints it). Names follow the template keys; derived values (ids, milliseconds, parsed objects) are added.

export type Labels = Record<string, string>;

/** Where a healthcheck's Job manifest or a manifest's objects came from. */
export type ContentSource =
  | { type: "inline"; form: "string" | "mapping" | "sequence" }
  | { type: "file"; file: string; path: string };

export interface Healthcheck {
  /** `idOverride`, or `cluster-<cluster>-<name>`. */
  id: string;
  name?: string;
  idOverride?: string;
  /** `talos-gate-<id>`. */
  jobName: string;
  /** The manifest text exactly as given (file bytes, inline string, or the re-encoded mapping(s)). */
  manifest: string;
  source: ContentSource;
  /** As written, when set. */
  interval?: string;
  /** Effective retry interval: the interval when > 0, else 30 s. */
  intervalMs: number;
  labels: Labels;
  annotations: Labels;
}

export interface Manifest {
  /** Effective name: `name`, or `file` when the name is empty. */
  name: string;
  /** Omni's resource id: `<200+index>-cluster-<cluster>-<name>`. */
  id: string;
  mode: "one-time" | "full";
  source: ContentSource;
  text: string;
  /** The Kubernetes objects, in order, for server-side apply. */
  objects: Record<string, unknown>[];
  labels: Labels;
  annotations: Labels;
}

export interface Patch {
  /** `name`, or `file` when the name is empty. */
  name: string;
  idOverride?: string;
  file?: string;
  /** Patch text (file contents, inline string, or the re-encoded mapping(s)). */
  content: string;
  labels: Labels;
  annotations: Labels;
}

export interface Strategy {
  type: "Rolling" | "Unset";
  maxParallelism?: number;
}

export interface MachineSet {
  /** `<cluster>-control-planes`, `<cluster>-workers` or `<cluster>-<name>`. */
  id: string;
  role: "controlplane" | "worker";
  name?: string;
  machines: string[];
  machineClass?: { name: string; size: number | "unlimited" };
  bootstrapSpec?: { clusterUUID: string; snapshot: string };
  updateStrategy?: Strategy;
  deleteStrategy?: Strategy;
  upgradeStrategy?: Strategy;
  patches: Patch[];
  systemExtensions?: string[];
  kernelArgs?: string[];
  labels: Labels;
  annotations: Labels;
}

export interface MachineDoc {
  id: string;
  locked: boolean;
  install?: { disk?: string; diskSelector?: string };
  patches: Patch[];
  systemExtensions?: string[];
  kernelArgs?: string[];
  labels: Labels;
  annotations: Labels;
}

export interface ClusterTemplate {
  cluster: {
    name: string;
    labels: Labels;
    annotations: Labels;
    /** As written (Omni stores it without the leading `v`). */
    kubernetesVersion: string;
    talosVersion: string;
    features: {
      diskEncryption: boolean;
      enableWorkloadProxy: boolean;
      useEmbeddedDiscoveryService: boolean;
      disablePublicDiscoveryService: boolean;
      enableNodeAuditSkip: boolean;
      backupInterval?: string;
    };
    patches: Patch[];
    systemExtensions?: string[];
    kernelArgs?: string[];
  };
  manifests: Manifest[];
  healthchecks: Healthcheck[];
  controlPlane: MachineSet;
  workers: MachineSet[];
  machines: MachineDoc[];
}
