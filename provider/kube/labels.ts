// Names the Kubernetes port reads and writes on cluster objects: labels, annotations, object names, field manager.
import { createHash } from "node:crypto";

/** Label on runner Jobs and their pod templates (talos-gate's counterpart of Omni's `omni-health-checker`). */
export const RUNNER_APP_LABEL = "app.kubernetes.io/name";
export const RUNNER_APP_VALUE = "talos-gate-healthcheck";
export const RUNNER_SELECTOR = `${RUNNER_APP_LABEL}=${RUNNER_APP_VALUE}`;
/** On runner Jobs and their pods: the rollout that created them (a hash of its Lease holder, a valid label value). */
export const OWNER_LABEL = "talos-gate.dev/owner";
export const ownerLabelValue = (holder: string): string => createHash("sha256").update(holder).digest("hex").slice(0, 40);
/** Every runner Job is named `talos-gate-<healthcheck id>`. */
export const RUNNER_NAME_PREFIX = "talos-gate-";
/** Set by the API server on a Job's pod template (Kubernetes >= 1.27), so every runner pod carries it. */
export const JOB_NAME_LABEL = "batch.kubernetes.io/job-name";
/** sha256 of the user's manifest text; a different value means the Job is out of date. */
export const CONFIG_HASH_ANNOTATION = "talos-gate.dev/config-hash";
/** The nonce of the run that created a runner Job (with its uid, what makes a verdict count: runner.ts). */
export const RUN_NONCE_ANNOTATION = "talos-gate.dev/run-nonce";

export const CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane";
/** Legacy control-plane role label (clusters upgraded from Kubernetes < 1.24). */
export const LEGACY_MASTER_LABEL = "node-role.kubernetes.io/master";
/** Optional Node label naming the machine set (Omni's extra worker sets). */
export const MACHINE_SET_LABEL = "talos-gate.dev/machine-set";
export const CONTROL_PLANES_SET = "control-planes";
export const WORKERS_SET = "workers";

/**
 * On a Node talos-gate cordoned: who cordoned it (the rollout's lease holder, stable per stack and resource). Only a
 * cordon carrying this mark is ever lifted by talos-gate, and only by the same owner: an administrator's cordon, or
 * the one Talos sets for its own legacy upgrade (`talos.dev/cordoned`, lifted by Talos at boot), is never touched.
 */
export const CORDONED_BY_ANNOTATION = "talos-gate.dev/cordoned-by";

/** Annotation the kubelet puts on mirror pods of static pods (these cannot be evicted). */
export const MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";

/** Server-side apply field manager and event source of everything talos-gate writes. */
export const FIELD_MANAGER = "talos-gate";
/** On every object applied from a `full` or `one-time` manifest: which manifest and which cluster it belongs to. */
export const MANIFEST_LABEL = "talos-gate.dev/manifest";
export const CLUSTER_LABEL = "talos-gate.dev/cluster";

/**
 * On the rollout Lease: who asked the running rollout to stop before its next node (`talos-gate stop`), and when. The
 * holder watches its Lease and stops; the next holder clears both when it takes the Lease.
 */
export const STOP_REQUESTED_BY_ANNOTATION = "talos-gate.dev/stop-requested-by";
export const STOP_REQUESTED_AT_ANNOTATION = "talos-gate.dev/stop-requested-at";

/** Namespace of the per-cluster Lease, status ConfigMap and manifest inventory. */
export const SYSTEM_NAMESPACE = "kube-system";
export const leaseName = (cluster: string): string => `talos-gate-${cluster}`;
export const statusConfigMapName = (cluster: string): string => `talos-gate-status-${cluster}`;
export const inventoryConfigMapName = (cluster: string): string => `talos-gate-manifests-${cluster}`;
/**
 * On the status ConfigMap: the rollout (lease holder) that wrote it. The mirror is display only; a reader warns when
 * someone else wrote what it finds, since anyone with ConfigMap rights in kube-system can write it.
 */
export const STATUS_WRITER_ANNOTATION = "talos-gate.dev/written-by";
/** Key of the status document inside the status ConfigMap. */
export const STATUS_KEY = "status.json";
/**
 * Key of the writing port's own Kubernetes API counters (`{ requests, watches, bytesRead }`) beside the status: what
 * the rollout cost the API server so far. Kept apart so the status reads back exactly as the rollout wrote it.
 */
export const API_STATS_KEY = "api.json";
/** Key of the status written as YAML by talos-gate 0.1 development builds; still read. */
export const LEGACY_STATUS_KEY = "status.yaml";
/** Key of the inventory document inside the inventory ConfigMap. */
export const INVENTORY_KEY = "inventory.json";
