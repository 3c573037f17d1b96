// One node's upgrade, bounded by nodeTimeout from its start until its Kubernetes Node is Ready on the target: the Talos
// port pulls and installs (>= 1.13; the node is cordoned once its look says it is upgraded, the pull under way), has
// the node drained right before the call that takes it down (through the Kubernetes port, on both paths; then its
// volumes detach, etcd is asked again for a control plane, and the Lease is held through a control plane's reboot,
// which may take the API server with it), reboots it, and waits for a new boot id on the target version; its Node must
// report Ready on the target, and the node is uncordoned (a worker as soon as its Node reports that, even before Talos
// answers). A failure after the install leaves the node armed, which the status says. Only the node timeout aborts an
// upgrade in flight; a cancel or a lost lease stops the run before the next node instead.
import { deadline } from "./clock";
import { errorText, type RunContext } from "./context";
import { portErrorKind, type Machine, type NodeUpgradeStep } from "./ports";
import { drainBeforeReboot } from "./drain";
import { awaitEtcdConsent } from "./etcd";
import * as msg from "./messages";
import { sameVersion } from "../version";

export async function upgradeNode(ctx: RunContext, machine: Machine, target: string): Promise<void> {
  const { opts } = ctx;
  const started = ctx.now();
  await ctx.emit({ type: "NodeStarted", at: started, node: machine.name }, true);
  const bound = deadline(ctx.clock, started + opts.nodeTimeoutMs);
  const fail = async (reason: string): Promise<never> => {
    await ctx.emit({ type: "NodeFailed", at: ctx.now(), node: machine.name, reason }, true);
    throw new Error(reason);
  };
  // What the node was doing when the node timeout hit (the adapter only sees its signal abort).
  let lastStep: NodeUpgradeStep | undefined;
  let lastStepAt = started;
  /** The install succeeded and the node has not rebooted into it yet: the new version is armed on disk. */
  let armed = false;
  /** The node is a control plane the API server may be behind: the API may be away until it is back. */
  let apiAway = false;
  /** A worker's cordon lifted as soon as its Node reports the new boot (started once the reboot is asked). */
  let liftOnReport: LiftOnReport | undefined;
  /**
   * The cordon, sent at the "pulling" step (the LifecycleService path): its round trip overlaps the pull and install
   * instead of opening the drain (issue 23), and no pod is scheduled onto a node whose reboot is minutes away. Awaited
   * by the drain (which cordons itself when this one claimed nothing: a cordon someone else set may be lifted since);
   * settled before any uncordon, so a lift never lands before it.
   */
  let cordoning: Promise<boolean> | undefined;
  /** The node's installer image could not be derived (its facts, or the user's choice). */
  let imageUnknown = false;
  const stepped = (step: NodeUpgradeStep) => {
    lastStep = step;
    lastStepAt = ctx.now();
  };
  try {
    // The node's own installer (its platform, schematic, extensions) unless the user chose one: read while the wave's
    // gate ran (prepare.ts), or now, while the Talos port takes its first look at the node. Known at the start and with
    // the Node reporting a version with ImageService, the port sends the pull beside that look (issue 23).
    // A string when already read (the port then pulls beside its first look), else the read in flight.
    const image = ctx.prepared.take(machine.name, target) ?? Promise.resolve().then(() => opts.installerImage(machine, target));
    // Its failure is the node's configuration, not the node: nothing was sent to it (the port awaits the image first).
    if (typeof image !== "string") image.catch(() => (imageUnknown = true));
    const result = await ctx.talos.upgradeNode(machine.address, {
      image,
      ...(machine.talosVersion !== undefined ? { expectedVersion: machine.talosVersion } : {}),
      targetVersion: target,
      nodeTimeoutMs: opts.nodeTimeoutMs,
      signal: bound.signal,
      beforeReboot: async ({ installed }) => {
        armed = installed;
        // Like Omni on the LifecycleService path (here on both paths): a control plane hands etcd leadership over before
        // it goes down.
        await forfeitLeadership(ctx, machine, bound.signal);
        await drainBeforeReboot(ctx, machine, bound.signal, !installed, cordoning);
        await waitVolumesDetached(ctx, machine, bound.signal);
        apiAway = await holdLeaseThroughReboot(ctx, machine, started);
        // Asked again for this very node, right before it goes down: the gate's answer may be stale (pull, install
        // and drain sat in between) or about another control plane (the run re-planned after the gate). Last, after
        // the Lease write (which can take seconds on a busy API server): a control plane that goes down meanwhile is
        // still seen (the never-worse trial once saw two control planes down at once).
        await awaitEtcdConsent(ctx, machine, bound.signal, (reason) => {
          void ctx.emit({ type: "NodeStep", at: ctx.now(), node: machine.name, step: "draining", detail: msg.progressWaitingForEtcd(reason) });
        });
      },
      onStep: (step, detail) => {
        if (step === "pulling" && !cordoning) {
          cordoning = ctx.kube.cordon(machine.name, opts.holder);
          cordoning.catch(() => undefined); // its failure is the drain's (or moot if the pull fails first)
        }
        if (step === "rebooting") armed = false; // the reboot into it is on its way: the wait decides from here
        if (step === "rebooting" && machine.role === "worker") liftOnReport ??= liftWhenReported(ctx, machine, target);
        stepped(step);
        void ctx.emit({ type: "NodeStep", at: ctx.now(), node: machine.name, step, ...(detail !== undefined ? { detail } : {}) });
      },
      // The Node watch the run already has: the Talos wait looks at once when the node's Node changes (a kubelet
      // reporting the new boot), instead of at its next poll, up to a second later (issue 23.2).
      nodeChanged: (signal) => ctx.machineChanged(machine.name, signal),
    });
    if (!sameVersion(result.toVersion, target)) await fail(msg.reasonNodeWrongVersion(machine.name, result.toVersion, target));
    // Only our own cordon (at the pull or the drain, on both paths) is lifted; an administrator's stays. Talos lifts
    // only its own at boot (talos.dev/cordoned; it does not mark a node that was already unschedulable: node_apply.go
    // ApplyCordoned).
    // Lifted once the Node reports Ready on the target: the kubelet's writes at boot are done by then, so the patch
    // (which tests the Node's resourceVersion) is not refused and retried on the node's critical path (issue 23). A
    // control plane the API server may be behind is lifted first, which also waits for the API to be back.
    const lift = () => whenApiBack(ctx, apiAway, bound.signal, () => ctx.kube.uncordon(machine.name, opts.holder));
    if (apiAway) await lift();
    stepped("back");
    await waitNodeReady(ctx, machine, target, started, bound.signal, fail);
    if (!apiAway && !(await liftOnReport?.end())) await lift();
    await ctx.emit({ type: "NodeBack", at: ctx.now(), node: machine.name, version: target }, true);
  } catch (e) {
    // A failed node (drain refused, back on the old version, not back in time) must not stay unschedulable because
    // of us: our cordon is lifted, any other stays.
    await liftOnReport?.end();
    await cordoning?.catch(() => undefined); // a cordon still on its way would land after the lift
    await ctx.kube.uncordon(machine.name, opts.holder).catch((err) => ctx.warn(msg.uncordonFailed(machine.name, errorText(err))));
    // Installed and not rebooted: the new version boots at the node's next reboot, whoever causes it (issue 18.4).
    if (armed) await ctx.emit({ type: "NodeArmed", at: ctx.now(), node: machine.name, version: target }, true);
    if (ctx.status.machines.find((m) => m.name === machine.name)?.state === "failed") throw e;
    const reason = bound.expired()
      ? msg.reasonNodeTimeout(machine.name, target, opts.nodeTimeoutMs, msg.nodeTimeoutLastStep(lastStep, ctx.now() - lastStepAt))
      : imageUnknown ? msg.reasonNodeImageUnknown(machine.name, errorText(e)) : msg.reasonNodeFailed(machine.name, errorText(e));
    await fail(armed ? msg.withArmed(reason, machine.name, target) : reason);
  } finally {
    void liftOnReport?.end();
    if (apiAway) await ctx.lease.outageOver();
    bound.dispose();
  }
}

interface LiftOnReport {
  /** Stops watching; whether the cordon was lifted (false: not yet reported, or the uncordon failed). */
  end(): Promise<boolean>;
}

/**
 * Lifts a worker's cordon (ours) as soon as the run's Node watch shows its Node Ready on the target from a new boot —
 * a boot id other than the one it showed when the reboot was asked, so not the status from before the reboot — while
 * Talos is still being asked whether the node is back: the uncordon leaves the node's critical path (issue 23).
 * talosctl's order holds (Ready on the target, then the uncordon: cmd/talosctl/cmd/talos/drain.go uncordonNodes, talos
 * v1.13.0), and a node that fails after it is uncordoned anyway (upgradeNode's catch). Nothing without a Node watch or
 * a boot id on the Node: then the cordon is lifted after Talos' answer, as before.
 */
function liftWhenReported(ctx: RunContext, machine: Machine, target: string): LiftOnReport | undefined {
  if (!machine.bootId) return undefined;
  const stop = new AbortController();
  let lifting: Promise<boolean> | undefined;
  // The boot id the Node shows when the reboot is asked (started right before it: not the wave's, a node may have
  // rebooted by itself since); only a later one is our reboot's.
  let asked: string | undefined | null = null;
  const reported = (m: Machine) => {
    if (asked === null) {
      asked = m.bootId;
      return false;
    }
    const onTarget = m.talosVersion !== undefined && sameVersion(m.talosVersion, target);
    return asked !== undefined && m.bootId !== undefined && m.bootId !== asked && m.ready && onTarget;
  };
  const watching = ctx.machineWhen(machine.name, reported, stop.signal).then((m) => {
    if (m && !stop.signal.aborted) lifting = ctx.kube.uncordon(machine.name, ctx.opts.holder).then(() => true, () => false);
  }).catch(() => undefined); // end() never throws: a lift that did not happen is done after Talos' answer
  return {
    async end() {
      stop.abort();
      await watching;
      return (await lifting) ?? false;
    },
  };
}

/**
 * A control plane about to reboot may take the API server with it (one control plane, or a kubeconfig naming this
 * one): the Lease is renewed to be held until the node's nodeTimeout, so the run keeps it through the outage and no
 * second pipeline gets in meanwhile (issue 18.6). A failed renewal here keeps the node up.
 */
async function holdLeaseThroughReboot(ctx: RunContext, machine: Machine, started: number): Promise<boolean> {
  if (machine.role !== "controlplane") return false;
  await ctx.lease.holdThrough(Math.max(0, started + ctx.opts.nodeTimeoutMs - ctx.now()));
  return true;
}

/** How often a call is tried again while the API server comes back with its control plane. */
const API_BACK_RETRY_MS = 1000;

/**
 * Calls `call`; when the API may still be away because of our own reboot (`apiAway`), failures are retried until
 * `signal` (nodeTimeout) ends the wait, then the last error is thrown.
 */
async function whenApiBack<T>(ctx: RunContext, apiAway: boolean, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (e) {
      if (!apiAway || signal.aborted) throw e;
      await ctx.clock.sleep(API_BACK_RETRY_MS, signal);
      if (signal.aborted) throw e;
    }
  }
}

/** Storage-aware reboot: a fast reboot must not outrun the CSI detach of the node's volumes. */
async function waitVolumesDetached(ctx: RunContext, machine: Machine, signal: AbortSignal): Promise<void> {
  const detachMs = ctx.opts.volumeDetachTimeoutMs ?? 0;
  if (detachMs <= 0) return;
  await ctx.kube.waitForVolumeDetach(machine.name, {
    timeoutMs: detachMs,
    signal,
    onBlocking: (volumes) => {
      void ctx.emit({ type: "NodeStep", at: ctx.now(), node: machine.name, step: "draining", detail: msg.volumesBlocking(volumes) });
    },
  }).catch((e: unknown) => {
    // A kubeconfig that may not read VolumeAttachments cannot wait for them: say so, do not fail every node.
    if (portErrorKind(e) !== "forbidden") throw e;
    ctx.warn(msg.volumeWaitForbidden(machine.name, errorText(e)));
  });
}

/**
 * Talos has confirmed the new boot and version; now the Kubernetes Node must be Ready on it. Right after a reboot the
 * Node object can still carry its pre-reboot status (Ready, old osImage) until the kubelet reports again, so an old
 * version on a Ready Node is waited out, and only reported if it persists until nodeTimeout.
 */
async function waitNodeReady(
  ctx: RunContext, machine: Machine, target: string, started: number, signal: AbortSignal, fail: (reason: string) => Promise<never>,
): Promise<void> {
  const pollMs = ctx.opts.readyPollMs ?? 2000;
  for (;;) {
    const seen = ctx.machinesVersion();
    const live = await ctx.machine(machine.name);
    const onTarget = live?.talosVersion === undefined || sameVersion(live.talosVersion, target);
    if (live?.ready && onTarget) return;
    if (signal.aborted || ctx.now() - started >= ctx.opts.nodeTimeoutMs) {
      // Talos itself confirmed the target; an old osImage here is the kubelet not having reported since the reboot.
      await fail(live?.ready && !onTarget
        ? msg.reasonKubeletNotReported(machine.name, live.talosVersion, target, ctx.opts.nodeTimeoutMs)
        : msg.reasonNotReadyAfterUpgrade(machine.name, ctx.opts.nodeTimeoutMs));
    }
    await ctx.machinesChanged(seen, pollMs, signal);
  }
}

/**
 * Moves etcd leadership off a control plane about to reboot, when there is another member to take it (Omni does the
 * same). Best effort: a reboot makes etcd elect a new leader anyway, only a little later, so a failure is a warning.
 */
async function forfeitLeadership(ctx: RunContext, machine: Machine, signal: AbortSignal): Promise<void> {
  if (machine.role !== "controlplane") return;
  const controlPlanes = (await ctx.machines()).filter((m) => m.role === "controlplane");
  if (controlPlanes.length < 2) return;
  try {
    const leader = await ctx.talos.forfeitLeadership(machine.address, { signal });
    if (leader) void ctx.emit({ type: "NodeStep", at: ctx.now(), node: machine.name, step: "draining", detail: msg.leadershipForfeited(leader) });
  } catch (e) {
    ctx.warn(msg.forfeitFailed(machine.name, errorText(e)));
  }
}
