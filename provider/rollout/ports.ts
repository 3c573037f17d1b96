// The two ports the rollout engine talks through. The rollout core depends only on these interfaces;
// provider/kube and provider/talos implement them on the real client libraries. There is no fake
// implementation: tests drive the real adapters against the simulated cluster (sim/).
import type { ComposedHealthcheckJob } from "../template/compose";

/**
 * What a port's error says to the rollout, whichever adapter threw it: one contract that the Kubernetes (KubeError)
 * and Talos (TalosError) errors both implement, so the rollout never reads HTTP statuses or gRPC codes itself.
 * - forbidden: the credentials may not do this (RBAC, Talos role);
 * - not-found: the object or node is not there;
 * - unavailable: no answer, or the server is busy (retrying may help);
 * - conflict: someone else holds or changed it (a lock, a mutex, optimistic concurrency);
 * - refused: the request itself was refused (invalid, failed precondition, anything else).
 */
export type PortErrorKind = "forbidden" | "not-found" | "unavailable" | "refused" | "conflict";

export interface PortError extends Error {
  /** Sending the same request again a little later may succeed. */
  readonly retryable: boolean;
  readonly kind: PortErrorKind;
}

/** The kind of a port's error; undefined for anything else (a bug, an abort). */
export function portErrorKind(e: unknown): PortErrorKind | undefined {
  const kind = (e as Partial<PortError> | null)?.kind;
  return e instanceof Error && typeof kind === "string" && typeof (e as Partial<PortError>).retryable === "boolean" ? kind : undefined;
}

/** Role of a machine, as Kubernetes labels it (`node-role.kubernetes.io/control-plane`). */
export type Role = "controlplane" | "worker";

/** One machine of the workload cluster, as read live from its Kubernetes Node. */
export interface Machine {
  /** Kubernetes Node name; also how the machine is named in every status message. */
  name: string;
  role: Role;
  /** Address used as the Talos `node` routing header (the Node's InternalIP). */
  address: string;
  /** Node condition Ready=True. */
  ready: boolean;
  /** `spec.unschedulable`. */
  cordoned: boolean;
  /** Who cordoned it, when talos-gate did (the owner passed to `cordon`); undefined for any other cordon. */
  cordonedBy?: string;
  /**
   * talos-gate's cordon mark on a schedulable Node: someone lifted the cordon since (`kubectl uncordon` keeps the
   * mark), so the mark is stale, and a later cordon on the node would not be talos-gate's.
   */
  staleCordonMark?: string;
  /** Talos version parsed from `status.nodeInfo.osImage` ("Talos (v1.13.2)"), e.g. "v1.13.2"; undefined if unknown. */
  talosVersion?: string;
  /** `status.nodeInfo.kubeletVersion`, e.g. "v1.36.1" (what a Kubernetes upgrade waits for); undefined if unknown. */
  kubeletVersion?: string;
  /**
   * `status.nodeInfo.bootID` as the kubelet last reported it (the kernel's boot id, the one Talos reads): a new one
   * says the kubelet has reported since the node rebooted.
   */
  bootId?: string;
  /** Machine set the machine belongs to (Omni: control-planes / workers / extra worker set id). */
  machineSet: string;
}

/** How a node is drained before its reboot: always, never (cordon only), or unless no other node could take its pods. */
export type DrainMode = "auto" | "always" | "never";

/** Whether a control plane may go down although etcd loses quorum for its reboot (2 control planes). */
export type EtcdQuorumLoss = "refuse" | "allow";

export interface DrainOptions {
  timeoutMs: number;
  owner: string;
  signal?: AbortSignal;
  mode?: DrainMode;
  /** The caller has cordoned the node already (`cordon`, settled): the drain starts with the listing. */
  cordoned?: boolean;
}

/** A drain's outcome: drained, or only cordoned, with the pods that go down with the node and the budgets that breaks. */
export type DrainOutcome =
  | { drained: true }
  | {
    drained: false;
    /** "never": the input said so; "nowhere": no other node could take any of the pods. */
    why: "never" | "nowhere";
    /** The pods a drain would have evicted ("namespace/name", sorted). */
    pods: string[];
    /** The PodDisruptionBudgets those pods going down violate ("namespace/name", sorted). */
    pdbs: string[];
  };

/** A composed runner Job, ready to submit: what provider/template/compose.ts builds. */
export type HealthcheckJob = ComposedHealthcheckJob;

/** Result of one healthcheck evaluation. */
export type CheckOutcome =
  | { state: "passed" }
  | { state: "failed"; reason: string }
  /** Still running when the evaluation was cut short (abort signal or deadline). */
  | { state: "running"; reason: string };

/** A held cluster lease; the holder renews it until released. */
export interface Lease {
  holder: string;
  /** Aborted if renewal fails or another holder takes the lease over. */
  readonly lost: AbortSignal;
  /**
   * Aborted when someone asks the holder, through the cluster, to stop before the next node (`talos-gate stop`); its
   * reason (an Error) says who asked and when.
   */
  readonly stopRequested?: AbortSignal;
  release(): Promise<void>;
  /**
   * The API server may be away for up to `ms` because the run takes its own control plane down (issue 18.6): the
   * Lease is renewed at once to be held that much longer (so no second pipeline gets it meanwhile), and renewals that
   * fail within that time do not lose it. Rejects when the renewal fails (then the node must not go down).
   */
  holdThrough(ms: number): Promise<void>;
  /**
   * The control plane is back (or failed): the Lease is renewed at once for its usual duration, so a run killed from
   * now on holds it no longer than usual. Never rejects (a failed renewal is retried as any other).
   */
  outageOver(): Promise<void>;
}

/** Every machine of the cluster, kept current by a watch (an informer): read it and wait on it instead of polling. */
export interface MachineWatch {
  /** The machines as last seen (waits for the first list); throws if the watch could not start. */
  machines(): Promise<Machine[]>;
  /** Counts the changes seen; pass it to `changed` to wait for the next one. */
  readonly generation: number;
  /** The watch could not run (e.g. no list/watch permission on Nodes): read the machines another way. */
  readonly failed: boolean;
  /** Resolves on the first change after `since` (at once if there was one), when stopped, or when `signal` aborts. */
  changed(since: number, signal?: AbortSignal): Promise<void>;
  stop(): void;
}

export interface KubeApi {
  /** Queues a core/v1 Event (best effort: never throws, never awaited by the run; bounded by the adapter). */
  recordEvent?(event: RolloutEvent): void;
  /** All machines of the cluster from the Kubernetes Nodes. */
  listMachines(): Promise<Machine[]>;
  /**
   * One machine by Node name (undefined if there is no such Node). Waiting for one node reads just that Node, not all
   * of them: at 1,000 nodes a full list per poll dominates the run's memory and API traffic.
   */
  readMachine(name: string): Promise<Machine | undefined>;
  /** Starts watching every machine (one list, then a watch); the run reads and waits on it. */
  watchMachines(): MachineWatch;
  /**
   * Run one healthcheck with Omni's Job lifecycle: ensure the Job, observe it by watch until Complete or Failed,
   * read the failure text, delete the Job and its pods. Resolves `running` if `signal` aborts first.
   */
  runCheck(check: HealthcheckJob, opts?: { signal?: AbortSignal }): Promise<CheckOutcome>;
  /** Best-effort removal of every runner Job and pod (label `app.kubernetes.io/name=talos-gate-healthcheck`). */
  sweepRunners(): Promise<{ jobs: number; pods: number }>;
  /**
   * Cordon (as `owner`) + evict (Eviction API, PDB-aware) until the node holds no evictable pods, or throw naming
   * blockers. With `mode` "never", or "auto" when no other node could take any of its pods, the node is only cordoned
   * and the outcome names what goes down with it.
   */
  drain(node: string, opts: DrainOptions): Promise<DrainOutcome>;
  /**
   * Cordons the node and marks the cordon as `owner`'s. A node that is already unschedulable (an administrator's or
   * Talos' cordon) is left as it is and not claimed. Resolves whether this call cordoned it.
   */
  cordon(node: string, owner: string): Promise<boolean>;
  /** Lifts the cordon only if `owner` set it (its mark is on the Node); any other cordon stays. Resolves whether it did. */
  uncordon(node: string, owner: string): Promise<boolean>;
  /** Removes talos-gate's cordon mark from a schedulable Node (a stale mark); resolves whether it did. */
  dropStaleCordonMark(node: string): Promise<boolean>;
  /** Take the per-cluster Lease, or throw at once naming the current holder. */
  acquireLease(opts: { cluster: string; holder: string; durationSeconds?: number }): Promise<Lease>;
  /**
   * Mirror the live upgrade status (ConfigMap in kube-system). Throttled by the port (at most one write per ~500 ms
   * per cluster, last write wins) and best effort: returns once queued, never throws; `flush()` waits for the write.
   */
  writeStatus(cluster: string, status: unknown): Promise<void>;
  readStatus(cluster: string): Promise<unknown | undefined>;
  /**
   * Watches a selection of objects of any kind (CRDs included) for a condition gate: every change yields the current
   * set; a kind the cluster does not serve yields `unavailable` (re-discovered with backoff until it is served).
   */
  watchObjects(selection: ObjectSelection): ObjectWatch;
  /**
   * Waits (by watch, bounded) until no VolumeAttachment of the node is attached or detaching; `onBlocking` hears the
   * blocking volumes on every change. Throws naming them at the deadline, or when cancelled.
   */
  waitForVolumeDetach(node: string, opts: VolumeDetachOptions): Promise<void>;
}

/** What a condition gate reads: one object by name, or every object matching a label selector. */
export interface ObjectSelection {
  apiVersion: string;
  kind: string;
  /** Namespace of a namespaced kind; with a selector, omitted = every namespace. */
  namespace?: string;
  name?: string;
  /** API server syntax, e.g. `app=x,tier in (a,b)`; "" selects every object. */
  labelSelector?: string;
}

/** The current objects of a selection (ordered by namespace/name), or why they cannot be read. */
export type SelectionState =
  | { objects: Record<string, unknown>[]; generation: number }
  | { unavailable: string };

export interface ObjectWatch {
  /** The next state not consumed yet (waits; coalesced, last wins); undefined once stopped. Throws a permanent error. */
  next(): Promise<SelectionState | undefined>;
  /** The newest state not consumed yet, without waiting. */
  take(): SelectionState | undefined;
  stop(): void;
}

export interface VolumeDetachOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** The volumes still attached or detaching (`<pv or VolumeAttachment> (<attacher>)`), on every change. */
  onBlocking?: (volumes: string[]) => void;
}

/** How a supporting manifest is applied: `full` = kept in sync and pruned; `one-time` = created if absent, never touched. */
export type ManifestMode = "full" | "one-time";

/** One supporting manifest (Omni `kubernetes.manifests` entry). */
export interface Manifest {
  /** Manifest name (Omni: `name`, or `file` if empty); recorded on every object it creates. */
  name: string;
  /** Overrides the mode of the call. */
  mode?: ManifestMode;
  /** Multi-document YAML text, or already parsed objects. `kind: List` documents are expanded. */
  content: string | Record<string, unknown>[];
}

export interface ApplyManifestsOptions {
  cluster: string;
  /**
   * Who applies (the Cluster resource's identity): recorded on each inventory entry; only this owner's entries are
   * pruned by its applies.
   */
  owner?: string;
  /** Mode of manifests that set none (default `full`). */
  mode?: ManifestMode;
  /** Server-side dry run: validate and report what would change; nothing is written or pruned. */
  dryRun?: boolean;
}

export interface ApplyManifestsResult {
  /** "Kind namespace/name" (or "Kind name") of the objects applied. */
  applied: string[];
  /** One-time objects that existed already. */
  skipped: string[];
  /** Objects deleted because no manifest lists them any more (would be deleted, in a dry run). */
  pruned: string[];
}

/** The object a rollout event is about. Node events live in namespace `default` (as the kubelet's do). */
export interface EventObject {
  kind: "Node" | "Job";
  name: string;
  /** Namespace of a Job; ignored for Nodes. */
  namespace?: string;
  uid?: string;
}

export interface RolloutEvent {
  object: EventObject;
  /** Normal (default) or Warning. */
  type?: "Normal" | "Warning";
  /** CamelCase reason, e.g. UpgradeStarted, Drained, HealthcheckFailed. */
  reason: string;
  message: string;
}

/** Progress of one node upgrade, for progress lines. */
export type NodeUpgradeStep =
  | "pulling"
  | "installing"
  | "draining"
  | "rebooting"
  | "waiting"
  | "back";

export interface UpgradeNodeOptions {
  /**
   * Installer image, e.g. ghcr.io/siderolabs/installer:v1.13.2; a promise while it is still being read from the node
   * (its own platform and schematic): the adapter reads the node's version and boot id meanwhile (issue 23.2).
   */
  image: string | Promise<string>;
  /**
   * The version the node is expected to run (its Node's report). When it and the target have ImageService and the
   * image is known at the start, the pull is sent at once, beside the first look (issue 23); the look still decides
   * whether the node is upgraded at all, and on which path.
   */
  expectedVersion?: string;
  /** Version the node must report afterwards, e.g. "v1.13.2". */
  targetVersion: string;
  /** The node must be back (new boot id and target version) within this time. */
  nodeTimeoutMs: number;
  signal?: AbortSignal;
  /**
   * Called right before the call that takes the node down (drain via the Kubernetes port, etcd's consent): on the
   * >= 1.13 path after the install and before Reboot (`installed`: the new version is armed on disk; the caller
   * cordoned the node at the "pulling" step), on the legacy path before Upgrade (which drains with Talos' own drain,
   * ignoring refusals, and reboots by itself). A throw leaves the node up.
   */
  beforeReboot?: (info: { installed: boolean }) => Promise<void>;
  onStep?: (step: NodeUpgradeStep, detail?: string) => void;
  /**
   * Resolves at the first change of the node's Kubernetes Node (its Ready or version) after the call, or when `signal`
   * aborts. While the node reboots, each pause between looks is cut short by it: the wait looks at once when the Node
   * changes instead of at its next poll. Only a hint: the new boot id and version on Talos still decide.
   */
  nodeChanged?: (signal: AbortSignal) => Promise<void>;
}

export interface UpgradeNodeResult {
  /** "lifecycle" (>= 1.13 on both sides) or "legacy". */
  path: "lifecycle" | "legacy" | "none";
  fromVersion: string;
  toVersion: string;
  oldBootId: string;
  newBootId: string;
}

/** What a node's own installer image is derived from (Omni's rule; provider/talos/image.ts nodeInstallerImage). */
export interface NodeImageFacts {
  /** Version API platform name, e.g. "metal", "aws". */
  platform: string;
  /** Image Factory schematic id of the running image (its `schematic` extension); undefined if not from Image Factory. */
  schematic?: string;
  /** System extensions other than Image Factory's `schematic` meta extension (names). */
  extensions: string[];
  /** SecurityState.secure_boot (false when the node does not report it). */
  secureBoot: boolean;
  /**
   * The Image Factory the node was installed from: the host (with port and path prefix) of its machine config's
   * `machine.install.image` when that is an Image Factory installer; read only for nodes whose installer comes from
   * Image Factory.
   */
  factoryHost?: string;
}

/** One etcd member, with its health as its own control plane reports it (EtcdStatus). */
export interface EtcdMemberHealth {
  /** Member id in Talos' `%016x` form. */
  id: string;
  /** Member name: the node's hostname (= the Kubernetes Node name on Talos); "" for a member that never started. */
  name: string;
  /** Host of the member's first client URL: the node's address. */
  address: string;
  learner: boolean;
  leader: boolean;
  /** Answers EtcdStatus without errors and knows a leader. */
  healthy: boolean;
  /** Why it is not healthy, in words for the step (unreachable, etcd errors). */
  problem?: string;
}

/** Whether a control plane may go down now without risking etcd. */
export interface EtcdVerdict {
  ok: boolean;
  /** Why not (provider/talos/messages.ts wording), for the gate's step or the failure. */
  reason?: string;
  /** Waiting cannot help (e.g. 2 voting members: any reboot loses quorum). */
  permanent?: boolean;
  /** ok only because quorum loss was accepted: etcd has no quorum until the member is back (issue 25). */
  quorumLoss?: boolean;
}

export interface EtcdHealth {
  members: EtcdMemberHealth[];
  /** Voting members needed for quorum. */
  quorum: number;
  /** Every member is healthy. */
  healthy: boolean;
  /** Whether the member of this node (member name, node name or address) may go down now: all members healthy and quorum kept without it. */
  canTakeDown(node: string, opts?: { allowQuorumLoss?: boolean }): EtcdVerdict;
}

export interface TalosApi {
  /** Talos version tag of the node, e.g. "v1.13.2". */
  version(node: string, opts?: { signal?: AbortSignal }): Promise<string>;
  bootId(node: string, opts?: { signal?: AbortSignal }): Promise<string>;
  /**
   * Upgrade one node and wait until it is back with a new boot id and the target version. Idempotent: a node already
   * at the target is not touched (path "none"). A node that comes back on another version is an error.
   */
  upgradeNode(node: string, opts: UpgradeNodeOptions): Promise<UpgradeNodeResult>;
  /**
   * Installs `image` on the node without rebooting it (>= 1.13: pull + LifecycleService.Upgrade): used to disarm a node
   * a failed upgrade left armed, by installing the version it runs again.
   */
  reinstall(node: string, opts: { image: string; timeoutMs: number; signal?: AbortSignal }): Promise<void>;
  /** Platform, schematic, extensions and SecureBoot of a node, for its own installer image. */
  imageFacts(node: string, opts?: { signal?: AbortSignal }): Promise<NodeImageFacts>;
  /** etcd members and their health, asked through control plane `cpNode` (and each member's own node). */
  etcdHealth(cpNode: string, opts?: { signal?: AbortSignal }): Promise<EtcdHealth>;
  /** Moves etcd leadership away from control plane `node`; resolves with the new leader's name, "" if it was not the leader. */
  forfeitLeadership(node: string, opts?: { signal?: AbortSignal }): Promise<string>;
  close(): void;
}
