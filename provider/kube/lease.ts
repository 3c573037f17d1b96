// One rollout per cluster: a coordination.k8s.io/v1 Lease `talos-gate-<cluster>` in kube-system. Taking it follows
// client-go's leader election: free (no holder), ours, or expired (renewTime + leaseDurationSeconds in the past) →
// take it with an update carrying the read resourceVersion (optimistic concurrency: of two racing takers exactly one
// wins); held by someone else and not expired → fail at once naming the holder and the expiry. While held it is
// renewed every durationSeconds/3; a failed renewal is retried every second until the lease would expire, and only
// then (or when another holder is seen) is `lost` aborted. Before the run reboots the control plane the API server
// is behind, `holdThrough` renews it for that long (others see it held; failed renewals meanwhile do not lose it). `release()` stops renewing and clears the holder.
// Stopping a rollout through the cluster (`talos-gate stop`): `requestStop` annotates the held Lease with who asked;
// the holder watches its Lease and aborts `stopRequested`, and the rollout stops before its next node. Taking the
// Lease clears a request left from an earlier run, so it only ever stops the rollout it was meant for.
import * as k8s from "./k8s";
import type { Lease } from "../rollout/ports";
import { KubeClients } from "./client";
import { apiMessage, isAlreadyExists, isConflict, isNotFound, KubeError, statusOf } from "./errors";
import {
  FIELD_MANAGER, leaseName, STOP_REQUESTED_AT_ANNOTATION, STOP_REQUESTED_BY_ANNOTATION, SYSTEM_NAMESPACE,
} from "./labels";
import { msg } from "./messages";
import { ObjectObserver } from "./watch";

export const DEFAULT_LEASE_SECONDS = 30;

const micro = (ms: number): k8s.V1MicroTime => new k8s.V1MicroTime(ms);
const timeOf = (t: unknown): number | undefined => (t ? new Date(t as string).getTime() : undefined);

/** When the lease expires (ms since epoch), or undefined if it has no holder / no renew time. */
export function leaseExpiry(lease: k8s.V1Lease): number | undefined {
  const renew = timeOf(lease.spec?.renewTime) ?? timeOf(lease.spec?.acquireTime);
  if (!lease.spec?.holderIdentity || renew === undefined) return undefined;
  return renew + (lease.spec.leaseDurationSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;
}

export async function acquireLease(
  c: KubeClients,
  opts: { cluster: string; holder: string; durationSeconds?: number },
  log: (line: string) => void,
): Promise<Lease> {
  const { cluster, holder } = opts;
  const duration = Math.max(1, Math.round(opts.durationSeconds ?? DEFAULT_LEASE_SECONDS));
  const name = leaseName(cluster);
  const namespace = SYSTEM_NAMESPACE;
  const fail = (op: string, err: unknown) =>
    err instanceof KubeError ? err : new KubeError(msg.leaseRequestFailed(cluster, op, apiMessage(err), statusOf(err)), statusOf(err));

  let current: k8s.V1Lease | undefined;
  for (let attempt = 0; ; attempt++) {
    let existing: k8s.V1Lease | undefined;
    try {
      existing = await c.coordination.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!isNotFound(err)) throw fail("reading", err);
    }
    const now = Date.now();
    try {
      if (!existing) {
        current = await c.coordination.createNamespacedLease({
          namespace, fieldManager: FIELD_MANAGER,
          body: {
            metadata: { name, namespace, labels: { "app.kubernetes.io/managed-by": FIELD_MANAGER } },
            spec: { holderIdentity: holder, leaseDurationSeconds: duration, acquireTime: micro(now), renewTime: micro(now), leaseTransitions: 0 },
          },
        });
        break;
      }
      const other = existing.spec?.holderIdentity;
      const expiry = leaseExpiry(existing);
      if (other && other !== holder && expiry !== undefined && expiry > now) {
        throw new KubeError(msg.leaseHeld(cluster, other, new Date(expiry)), 409, "LeaseHeld");
      }
      const transitions = (existing.spec?.leaseTransitions ?? 0) + (other && other !== holder ? 1 : 0);
      current = await c.coordination.replaceNamespacedLease({
        name, namespace, fieldManager: FIELD_MANAGER,
        body: {
          ...existing,
          metadata: withoutStopRequest(existing.metadata),
          spec: {
            ...existing.spec,
            holderIdentity: holder,
            leaseDurationSeconds: duration,
            acquireTime: other === holder && existing.spec?.acquireTime ? existing.spec.acquireTime : micro(now),
            renewTime: micro(now),
            leaseTransitions: transitions,
          },
        },
      });
      break;
    } catch (err) {
      // Lost a race (someone created or updated it between our read and write): read again and decide anew.
      if ((isAlreadyExists(err) || (isConflict(err) && !(err instanceof KubeError))) && attempt < 3) continue;
      throw fail("taking", err);
    }
  }
  return new HeldLease(c, cluster, holder, duration, current!, log);
}

function withoutStopRequest(meta: k8s.V1ObjectMeta | undefined): k8s.V1ObjectMeta {
  const { [STOP_REQUESTED_BY_ANNOTATION]: _by, [STOP_REQUESTED_AT_ANNOTATION]: _at, ...annotations } = meta?.annotations ?? {};
  return { ...meta, annotations };
}

/** The stop request on a Lease, if any. */
function stopRequestOf(lease: k8s.V1Lease | undefined): { by: string; at: string } | undefined {
  const by = lease?.metadata?.annotations?.[STOP_REQUESTED_BY_ANNOTATION];
  if (!by) return undefined;
  return { by, at: lease?.metadata?.annotations?.[STOP_REQUESTED_AT_ANNOTATION] ?? "an unknown time" };
}

/** Who holds the cluster's rollout Lease now (undefined: no rollout runs), as `talos-gate stop` sees it. */
export interface RunningRollout {
  holder: string;
  /** When the Lease expires unless renewed. */
  expiresAt: Date;
}

/**
 * Asks the rollout holding the cluster's Lease to stop before its next node: annotates the Lease with `by` and the
 * time. Resolves the holder, or undefined when no rollout holds the Lease (nothing is written then).
 */
export async function requestStop(c: KubeClients, cluster: string, by: string, now = new Date()): Promise<RunningRollout | undefined> {
  const name = leaseName(cluster);
  const namespace = SYSTEM_NAMESPACE;
  let lease: k8s.V1Lease;
  try {
    lease = await c.coordination.readNamespacedLease({ name, namespace });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new KubeError(msg.leaseRequestFailed(cluster, "reading", apiMessage(err), statusOf(err)), statusOf(err));
  }
  const holder = lease.spec?.holderIdentity;
  const expiry = leaseExpiry(lease);
  if (!holder || expiry === undefined || expiry <= now.getTime()) return undefined;
  try {
    await c.coordination.patchNamespacedLease(
      {
        name, namespace, fieldManager: FIELD_MANAGER,
        body: { metadata: { annotations: { [STOP_REQUESTED_BY_ANNOTATION]: by, [STOP_REQUESTED_AT_ANNOTATION]: now.toISOString() } } },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new KubeError(msg.leaseRequestFailed(cluster, "annotating", apiMessage(err), statusOf(err)), statusOf(err));
  }
  return { holder, expiresAt: new Date(expiry) };
}

/** The holder of the cluster's Lease, or undefined when no rollout holds it. */
export async function runningRollout(c: KubeClients, cluster: string, now = Date.now()): Promise<RunningRollout | undefined> {
  try {
    const lease = await c.coordination.readNamespacedLease({ name: leaseName(cluster), namespace: SYSTEM_NAMESPACE });
    const expiry = leaseExpiry(lease);
    if (!lease.spec?.holderIdentity || expiry === undefined || expiry <= now) return undefined;
    return { holder: lease.spec.holderIdentity, expiresAt: new Date(expiry) };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new KubeError(msg.leaseRequestFailed(cluster, "reading", apiMessage(err), statusOf(err)), statusOf(err));
  }
}

class HeldLease implements Lease {
  private readonly ctl = new AbortController();
  private readonly stopCtl = new AbortController();
  private readonly observer: ObjectObserver<k8s.V1Lease>;
  private timer: NodeJS.Timeout | undefined;
  private released = false;
  private renewing: Promise<void> | undefined;
  /** When the lease expires for others if we cannot renew it. */
  private expiresAt: number;
  /** Until when the API server may be away because the run rebooted its control plane (0: not expected). */
  private outageUntil = 0;
  /** A renewal failed and is being retried: said once per streak, so the user sees the risk before it stops the run. */
  private renewFailing = false;

  constructor(
    private readonly c: KubeClients,
    private readonly cluster: string,
    readonly holder: string,
    private readonly duration: number,
    private lease: k8s.V1Lease,
    private readonly log: (line: string) => void,
  ) {
    this.expiresAt = leaseExpiry(lease) ?? Date.now() + duration * 1000;
    this.schedule((duration * 1000) / 3);
    // Watch the Lease so a stop request is seen at once, not at the next renewal.
    const name = lease.metadata!.name!;
    const namespace = lease.metadata!.namespace!;
    this.observer = new ObjectObserver<k8s.V1Lease>({
      clients: c,
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
      name,
      list: () => c.coordination.listNamespacedLease({ namespace, fieldSelector: `metadata.name=${name}` }),
      log,
    });
    void this.watchStopRequests();
  }

  get lost(): AbortSignal {
    return this.ctl.signal;
  }

  get stopRequested(): AbortSignal {
    return this.stopCtl.signal;
  }

  private async watchStopRequests(): Promise<void> {
    try {
      for (let s = await this.observer.next(); s && !this.released; s = await this.observer.next()) {
        if (s.object?.spec?.holderIdentity === this.holder) this.noticeStopRequest(s.object);
      }
    } catch (err) {
      // A watch that cannot run (e.g. no list/watch permission on Leases) leaves renewals to notice a request.
      this.log(msg.leaseWatchFailed(this.cluster, apiMessage(err)));
    }
  }

  private noticeStopRequest(lease: k8s.V1Lease): void {
    const req = stopRequestOf(lease);
    if (req && !this.stopCtl.signal.aborted) this.stopCtl.abort(new Error(msg.stopRequested(req.by, req.at)));
  }

  private schedule(ms: number): void {
    if (this.released || this.ctl.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.renewing = this.renew().then(() => undefined).finally(() => (this.renewing = undefined));
    }, ms);
    this.timer.unref?.();
  }

  private lose(reason: string): void {
    if (this.ctl.signal.aborted) return;
    this.log(reason);
    this.ctl.abort(new KubeError(reason));
  }

  async holdThrough(ms: number): Promise<void> {
    this.outageUntil = Date.now() + ms;
    await this.settleRenewal();
    const error = await this.renew();
    if (error !== undefined) throw new KubeError(msg.leaseRenewFailed(this.cluster, apiMessage(error)), statusOf(error));
  }

  async outageOver(): Promise<void> {
    if (this.outageUntil === 0) return;
    this.outageUntil = 0;
    await this.settleRenewal();
    if (this.released || this.ctl.signal.aborted) return;
    await this.renew();
  }

  /** Waits for a renewal in flight and cancels the scheduled one: the caller renews now (and schedules the next). */
  private async settleRenewal(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.renewing?.catch(() => undefined);
    if (this.timer) clearTimeout(this.timer);
  }

  /** Seconds the Lease is held for by the next renewal: its duration, plus an expected outage still ahead. */
  private holdSeconds(now: number): number {
    return this.duration + Math.max(0, Math.ceil((this.outageUntil - now) / 1000));
  }

  /** Renews once (scheduling the next); resolves the error of a failed attempt, undefined when it renewed. */
  private async renew(): Promise<unknown> {
    if (this.released) return undefined;
    const name = this.lease.metadata!.name!;
    const namespace = this.lease.metadata!.namespace!;
    const started = Date.now();
    const hold = this.holdSeconds(started);
    try {
      const next = await this.c.coordination.replaceNamespacedLease({
        name, namespace, fieldManager: FIELD_MANAGER,
        body: { ...this.lease, spec: { ...this.lease.spec, renewTime: micro(started), leaseDurationSeconds: hold } },
      });
      if (this.released) return undefined;
      this.lease = next;
      this.noticeStopRequest(next);
      this.expiresAt = started + hold * 1000;
      this.renewFailing = false;
      this.schedule((this.duration * 1000) / 3);
      return undefined;
    } catch (err) {
      if (this.released) return undefined;
      if (isConflict(err)) {
        // Our copy is stale: read it; still ours → renew from the fresh copy, otherwise it was taken over.
        try {
          const fresh = await this.c.coordination.readNamespacedLease({ name, namespace });
          if (fresh.spec?.holderIdentity === this.holder) {
            this.lease = fresh;
            this.noticeStopRequest(fresh);
            return this.renew();
          }
          this.lose(msg.leaseLost(this.cluster, fresh.spec?.holderIdentity || "(nobody)"));
          return err;
        } catch (readErr) {
          err = readErr;
        }
      }
      if (isNotFound(err)) {
        this.lose(msg.leaseLost(this.cluster, "(deleted)"));
        return err;
      }
      // Keep trying until the lease would have expired for everyone else.
      if (Date.now() + 1000 >= this.expiresAt) this.lose(msg.leaseRenewFailed(this.cluster, apiMessage(err)));
      else {
        // Failures while the run's own reboot takes the API server away are expected, and said by the rollout.
        if (!this.renewFailing && Date.now() >= this.outageUntil) {
          this.renewFailing = true;
          this.log(msg.leaseRenewRetrying(this.cluster, apiMessage(err), new Date(this.expiresAt)));
        }
        this.schedule(1000);
      }
      return err;
    }
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.observer.stop();
    if (this.timer) clearTimeout(this.timer);
    await this.renewing?.catch(() => undefined);
    if (this.ctl.signal.aborted) return; // not ours any more
    const name = this.lease.metadata!.name!;
    const namespace = this.lease.metadata!.namespace!;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.c.coordination.replaceNamespacedLease({
          name, namespace, fieldManager: FIELD_MANAGER,
          body: { ...this.lease, spec: { ...this.lease.spec, holderIdentity: undefined, renewTime: micro(Date.now()), leaseDurationSeconds: 1 } },
        });
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err)) throw new KubeError(msg.leaseRequestFailed(this.cluster, "releasing", apiMessage(err), statusOf(err)), statusOf(err));
        const fresh = await this.c.coordination.readNamespacedLease({ name, namespace }).catch(() => undefined);
        if (!fresh || fresh.spec?.holderIdentity !== this.holder) return;
        this.lease = fresh;
      }
    }
  }
}
