// The Kubernetes port: `KubeApi` (provider/rollout/ports.ts) on @kubernetes/client-node, plus what the Pulumi handlers
// and the CLI need beyond the rollout loop (manifests, Job dry run, events, flush, request statistics).
import type {
  ApplyManifestsOptions, ApplyManifestsResult, CheckOutcome, DrainOptions, HealthcheckJob, KubeApi, Lease, Machine, Manifest, ObjectSelection,
  ObjectWatch, RolloutEvent, VolumeDetachOptions,
} from "../rollout/ports";
import { KubeClients, KubeStats } from "./client";
import { drain } from "./drain";
import { EventRecorder } from "./events";
import { acquireLease, requestStop, runningRollout, type RunningRollout } from "./lease";
import { applyManifests, dryRunJob } from "./manifests";
import { cordon, dropStaleCordonMark, listMachines, readMachine, uncordon } from "./nodes";
import { LiveNodes, watchMachines } from "./machinewatch";
import { watchObjects } from "./objects";
import { rolloutOfDaemonSet, syncBootstrapObjects, type BootstrapObject, type DaemonSetRollout } from "./bootstrapSync";
import { runCheck, RunnerJobs } from "./runner";
import { StatusMirror, type MirroredStatus } from "./status";
import { sweepRunners, type RunnerScope } from "./sweep";
import { readKubernetesVersions, type KubernetesVersions } from "./version";
import { VolumeAttachmentCache, waitForVolumeDetach } from "./volumes";

export type { KubeStats } from "./client";
export type { KubernetesVersions } from "./version";
export type { MirroredStatus } from "./status";
export type { RunnerScope } from "./sweep";
export type {
  ApplyManifestsOptions, ApplyManifestsResult, EventObject, Manifest, ManifestMode, ObjectSelection, ObjectWatch, RolloutEvent,
  SelectionState, VolumeDetachOptions,
} from "../rollout/ports";
export { KubeError } from "./errors";
export { failureText, jobBody } from "./runner";
export { talosVersionOf } from "./nodes";
export type { RunningRollout } from "./lease";

export interface KubeApiOptions {
  /** Where best-effort failures (sweep, pod cleanup, events, status mirror, watch reconnects) are reported. */
  log?: (line: string) => void;
  /** Minimum spacing of status-mirror writes per cluster (default 500 ms). */
  statusThrottleMs?: number;
  /** Record HealthcheckPassed / HealthcheckFailed Events on runner Jobs (default true). */
  runnerEvents?: boolean;
  /** Bound of every request but watches (default 60 s). */
  requestTimeoutMs?: number;
  /**
   * Whose runner Jobs this port creates and sweeps: they carry the cluster's label (and the owner's), and a sweep
   * deletes only Jobs and pods carrying them. Without it, a sweep takes every runner Job.
   */
  runnerScope?: RunnerScope;
  /** The folder of the kubeconfig file, when it came from one (relative exec commands and token files). */
  kubeconfigDir?: string;
  /** Who writes the status mirror (the rollout's holder), stamped on each write. */
  statusWriter?: string;
}

/** The port and what only the handlers, the CLI and tests use of it (the rollout never calls these). */
export interface KubeClient extends KubeApi {
  /** Server-side apply of supporting manifests (modes full / one-time, pruning for full). */
  applyManifests(manifests: Manifest[], opts: ApplyManifestsOptions): Promise<ApplyManifestsResult>;
  /** Server-side dry-run create of a composed runner Job; throws naming the Job if the cluster would reject it. */
  dryRunJob(check: Pick<HealthcheckJob, "jobName" | "namespace" | "job">): Promise<void>;
  /** Queues a core/v1 Event on a Node or runner Job (best effort, aggregated like client-go's recorder). */
  recordEvent(event: RolloutEvent): void;
  /** Writes pending status-mirror writes and events now and waits for them. */
  flush(): Promise<void>;
  /** The status mirror with who wrote it (display only: never decides anything). */
  readStatusRecord(cluster: string): Promise<MirroredStatus | undefined>;
  /** Who runs a rollout on the cluster now (the holder of its Lease), or undefined. */
  runningRollout(cluster: string): Promise<RunningRollout | undefined>;
  /**
   * Asks the rollout running on the cluster to stop before its next node (annotates its Lease with `by`); resolves
   * the holder asked, or undefined when no rollout runs.
   */
  requestStop(cluster: string, by: string): Promise<RunningRollout | undefined>;
  /** Kubernetes API requests made so far through this instance. */
  stats(): KubeStats;
  /** Watches one object or a label selection of any kind (condition gates); see ports.ts. */
  watchObjects(selection: ObjectSelection): ObjectWatch;
  /** Waits by watch, bounded, until the node's VolumeAttachments are detached or gone; throws naming the blockers. */
  waitForVolumeDetach(node: string, opts: VolumeDetachOptions): Promise<void>;
  /**
   * The Kubernetes versions the cluster runs: control plane (as Talos detects it) and kubelets (version.ts); the kubelets
   * from `nodes` when the caller lists every Node anyway (read beside it), else from a listing of its own.
   */
  kubernetesVersions(nodes?: Promise<readonly Machine[]>): Promise<KubernetesVersions>;
  /** Talos' bootstrap manifests applied as `talosctl upgrade-k8s` syncs them (bootstrapSync.ts); resolves the objects applied. */
  syncBootstrapManifests(manifests: readonly { id: string; objects: readonly BootstrapObject[] }[], signal: AbortSignal): Promise<string[]>;
  /** A DaemonSet's rollout as `kubectl rollout status` reads it, or undefined when there is none. */
  daemonSetRollout(namespace: string, name: string, signal: AbortSignal): Promise<DaemonSetRollout | undefined>;
  /** Flushes, then releases connections. */
  close(): Promise<void>;
}

export function createKubeApi(kubeconfigText: string, opts: KubeApiOptions = {}): KubeClient {
  const c = new KubeClients(kubeconfigText, opts.requestTimeoutMs, opts.kubeconfigDir);
  const log = opts.log ?? (() => undefined);
  const mirror = new StatusMirror(c, log, opts.statusThrottleMs ?? 500, opts.statusWriter);
  const events = new EventRecorder(c, log);
  const ours = new RunnerJobs(opts.runnerScope);
  const live = new LiveNodes();
  const volumes = new VolumeAttachmentCache(c);
  return {
    listMachines: (): Promise<Machine[]> => listMachines(c),
    readMachine: (name: string): Promise<Machine | undefined> => readMachine(c, name),
    watchMachines: () => watchMachines(c, log, live),
    runCheck: (check: HealthcheckJob, o?: { signal?: AbortSignal }): Promise<CheckOutcome> =>
      runCheck(c, check, { signal: o?.signal, log, ours, record: opts.runnerEvents === false ? undefined : (e) => events.record(e) }),
    sweepRunners: async () => {
      await ours.cleanedUp();
      return sweepRunners(c, log, opts.runnerScope);
    },
    cordon: (node: string, owner: string) => cordon(c, node, owner),
    uncordon: (node: string, owner: string) => uncordon(c, node, owner),
    dropStaleCordonMark: (node: string) => dropStaleCordonMark(c, node),
    drain: (node: string, o: DrainOptions) => drain(c, node, o, log, () => live.nodes()),
    acquireLease: (o: { cluster: string; holder: string; durationSeconds?: number }): Promise<Lease> => acquireLease(c, o, log),
    writeStatus: (cluster: string, status: unknown) => mirror.write(cluster, status),
    readStatus: (cluster: string) => mirror.read(cluster),
    readStatusRecord: (cluster: string) => mirror.readRecord(cluster),
    applyManifests: (manifests, o) => applyManifests(c, manifests, o, log),
    dryRunJob: (check) => dryRunJob(c, check.namespace, check.jobName, check.job),
    recordEvent: (event) => events.record(event),
    watchObjects: (selection) => watchObjects(c, selection, log),
    waitForVolumeDetach: (node, o) => waitForVolumeDetach(c, node, o, log, volumes),
    flush: async () => {
      await Promise.all([mirror.flush(), events.flush()]);
    },
    runningRollout: (cluster: string) => runningRollout(c, cluster),
    requestStop: (cluster: string, by: string) => requestStop(c, cluster, by),
    stats: () => c.stats(),
    kubernetesVersions: (nodes) => readKubernetesVersions(c, nodes ?? listMachines(c)),
    syncBootstrapManifests: (manifests, signal) => syncBootstrapObjects(c, manifests, signal),
    daemonSetRollout: (namespace, name, signal) => rolloutOfDaemonSet(c, namespace, name, signal),
    close: async () => {
      await Promise.all([mirror.flush(), events.flush(), ours.cleanedUp()]);
      mirror.close();
      volumes.stop();
      c.close();
    },
  };
}
