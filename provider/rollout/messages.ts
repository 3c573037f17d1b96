// Every user-visible string of the rollout: status / step texts (Omni's exact wording, §3.4 and §4.5), plan lines,
// progress lines, and error reasons. PURE.

import { goQuote } from "../template/goquote";
import type { Plan, SkippedMachine, Wave, RolloutMode } from "./plan";

// ---------------------------------------------------------------------------------------------------------------
// Text helpers

/** Omni's truncation limit for a healthcheck failure detail, in UTF-8 bytes. */
export const REASON_LIMIT_BYTES = 256;

function utf8Length(cp: number): number {
  if (cp >= 0xd800 && cp <= 0xdfff) return 3; // a lone surrogate encodes as U+FFFD
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** UTF-8 byte length of a string (lone surrogates count as U+FFFD, as TextEncoder encodes them). */
export function utf8ByteLength(s: string): number {
  let n = 0;
  for (const ch of s) n += utf8Length(ch.codePointAt(0)!);
  return n;
}

/**
 * Omni's `truncate`: a text longer than 256 bytes keeps its first 256 bytes and gets "..." appended. Unlike Omni,
 * the cut never splits a UTF-8 character: it backs off to the last whole character (so the result is at most
 * 259 bytes, valid UTF-8, and starts with a prefix of the input).
 */
export function truncateReason(s: string, limit = REASON_LIMIT_BYTES): string {
  if (utf8ByteLength(s) <= limit) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const n = utf8Length(ch.codePointAt(0)!);
    if (bytes + n > limit) break;
    bytes += n;
    end += ch.length;
  }
  return s.slice(0, end) + "...";
}

/** Omni's single-line form of a failure text: every whitespace run becomes one space, ends trimmed. */
export function singleLine(s: string): string {
  return s.split(/\s+/u).filter((p) => p !== "").join(" ");
}

/** Go's time.Duration.String() rounded to whole seconds ("41s", "2m5s", "1h0m0s"); below 1s in ms ("350ms"). */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

// ---------------------------------------------------------------------------------------------------------------
// TalosUpgradeStatus: status and step (Omni §3.4, §3.5, §4.5)

/** Omni's `status` while upgrading: "updating machines <current>/<total>", or "updating" with nothing pending. */
export function statusUpdating(current: number, total: number, pending: number): string {
  return pending === 0 ? "updating" : `updating machines ${current}/${total}`;
}

/** Omni's `status` while reverting: "reverting update <current>/<total>". */
export function statusReverting(current: number, total: number): string {
  return `reverting update ${current}/${total}`;
}

/** Omni's `current = min(total − pending + 1, total)`. */
export function currentMachineNumber(total: number, pending: number): number {
  return Math.min(total - pending + 1, total);
}

/** "current machine: cp-1" / "current machines: w-1, w-2" (ids in listing order). */
export function stepCurrentMachines(names: readonly string[]): string {
  return `current ${names.length === 1 ? "machine" : "machines"}: ${names.join(", ")}`;
}

export const STEP_NO_MACHINES_UPGRADING = "no machines are currently upgrading";
export const STEP_WAITING_FOR_READY = "waiting for the cluster to be ready";
/** Detail of a healthcheck whose Job has not finished yet. */
export const CHECK_WAITING_TO_COMPLETE = "waiting to complete";
export const HEALTHCHECKS_PREFIX = "waiting for healthchecks to pass: ";

/** One contribution to the healthcheck step: `"<id>": <detail>` with the id Go-quoted and the detail truncated. */
export function healthcheckContribution(id: string, detail: string): string {
  return `${goQuote(id)}: ${truncateReason(detail)}`;
}

/** `waiting for healthchecks to pass: "<id>": <detail>; "<id2>": <detail2>` over the non-passed checks. */
export function healthcheckStep(entries: ReadonlyArray<{ id: string; detail: string }>): string {
  return HEALTHCHECKS_PREFIX + entries.map((e) => healthcheckContribution(e.id, e.detail)).join("; ");
}

/** Omni's failure fallback when no container left a message: `<reason>[: <message>]`. */
export function jobConditionReason(reason: string | undefined, message: string | undefined): string {
  const r = reason && reason !== "" ? reason : "healthcheck job failed";
  return message && message !== "" ? `${r}: ${message}` : r;
}

// ---------------------------------------------------------------------------------------------------------------
// Errors of planning and of versions

export { invalidVersion } from "../version";

export function invalidParallelism(field: string, value: unknown): string {
  return `invalid strategy.${field} ${JSON.stringify(value)}: expected a whole number of machines, at least 1`;
}

export function duplicateMachine(name: string): string {
  return `machine ${JSON.stringify(name)} is listed twice; every Kubernetes node name must be unique`;
}

export function duplicateOrderEntry(name: string): string {
  return `strategy.order lists node ${JSON.stringify(name)} twice; list each node at most once`;
}

export function unknownOrderEntry(name: string, known: readonly string[]): string {
  return `strategy.order names node ${JSON.stringify(name)}, which is not in the cluster; known nodes: ${known.join(", ")}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Plan lines (`talos-gate plan`, Pulumi preview diff)

function versionHop(from: string | undefined, to: string): string {
  return `${from ?? "unknown"} → ${to}`;
}

function groupLabel(w: Pick<Wave, "role" | "machineSet">): string {
  return w.machineSet !== undefined ? `${w.role}, set ${w.machineSet}` : w.role;
}

export function planHeadline(plan: Plan): string {
  if (plan.mode === "done") return `nothing to do: ${plural(plan.total, "machine")} already on ${plan.target}`;
  const verb = plan.mode === "reverting" ? "revert" : "upgrade";
  const parts = [`${verb} ${plan.pending} of ${plural(plan.total, "machine")} to ${plan.target} in ${plural(plan.waves.length, "wave")}`];
  if (plan.skipped.length) parts.push(`${plan.skipped.length} already on ${plan.target}`);
  if (plan.mode === "reverting") parts.push("not gated by your checks (reverting to the last converged version; etcd is still asked before each control plane)");
  return parts.join(", ");
}

/** "not ready: w-7 (upgraded last, set aside if still not ready); fewer machines per wave while it is not ready". */
export function planNotReady(notReady: readonly string[], pending: readonly string[], quotaReduced: boolean): string {
  const last = pending.length ? ` (${pending.join(", ")} upgraded last, set aside if still not ready)` : "";
  const quota = quotaReduced ? "; fewer machines per wave while they are not ready" : "";
  return `not ready: ${notReady.join(", ")}${last}${quota}`;
}

/** "set aside (not ready when their turn came): w-7". */
export function planSetAside(names: readonly string[]): string {
  return `set aside (not ready when their turn came): ${names.join(", ")}`;
}

/** "1. cp-1 (controlplane) v1.12.3 → v1.13.2, gated by: cluster-prod-ceph". */
export function planWaveLine(w: Wave, _totalWaves: number, mode: RolloutMode): string {
  const froms = new Set(w.machines.map((m) => m.from ?? "unknown"));
  let body: string;
  if (froms.size === 1) {
    body = `${w.machines.map((m) => m.name).join(", ")} (${groupLabel(w)}) ${versionHop(w.machines[0].from, w.machines[0].to)}`;
  } else {
    body = `${w.machines.map((m) => `${m.name} ${versionHop(m.from, m.to)}`).join(", ")} (${groupLabel(w)})`;
  }
  const gate = w.gatedBy.length ? `, gated by: ${w.gatedBy.join(", ")}` : mode === "reverting" ? ", not gated by your checks" : "";
  return `${w.index}. ${body}${gate}`;
}

/** "skip w-3 (worker): already on v1.13.2". */
export function planSkippedLine(s: SkippedMachine): string {
  return `skip ${s.name} (${s.role}): already on ${s.version}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Progress lines (one per transition)

export function progressPrefix(cluster: string): string {
  return `[talos-gate/${cluster}] `;
}

export function progressRunStarted(mode: RolloutMode, pending: number, total: number, target: string, waves: number): string {
  if (mode === "done") return `nothing to do: ${plural(total, "machine")} already on ${target}`;
  const verb = mode === "reverting" ? "reverting" : "upgrading";
  const tail = mode === "reverting" ? " (not gated by your checks)" : "";
  return `${verb} ${pending} of ${plural(total, "machine")} to ${target} in ${plural(waves, "wave")}${tail}`;
}

export function progressWaitingForReady(notReady: readonly string[]): string {
  return notReady.length ? `${STEP_WAITING_FOR_READY}: not ready: ${notReady.join(", ")}` : STEP_WAITING_FOR_READY;
}

export const PROGRESS_CLUSTER_READY = "cluster ready";

export function progressGateStarted(wave: number, waves: number, checks: number, attempt: number): string {
  return `gate before wave ${wave}/${waves}: running ${plural(checks, "healthcheck")} (attempt ${attempt})`;
}

export function progressCheckPassed(id: string): string {
  return `healthcheck ${goQuote(id)} passed`;
}

/** `gate held: "cluster-prod-ceph": ceph is not healthy (attempt 3, next in 30s)`; details single-line, truncated. */
export function progressGateHeld(entries: ReadonlyArray<{ id: string; detail: string }>, attempt: number, retryInMs: number): string {
  const list = entries.map((e) => healthcheckContribution(e.id, singleLine(e.detail))).join("; ");
  return `gate held: ${list} (attempt ${attempt}, next in ${formatDuration(retryInMs)})`;
}

export function progressGatePassed(passed: number, attempt: number): string {
  return `gate open: ${passed}/${passed} ${passed === 1 ? "healthcheck" : "healthchecks"} passed (attempt ${attempt})`;
}

export function progressWaveStarted(wave: number, waves: number, names: readonly string[], label: string): string {
  return `wave ${wave}/${waves}: ${names.join(", ")} (${label})`;
}

export function progressWaveDone(wave: number, waves: number): string {
  return `wave ${wave}/${waves} done`;
}

/** "node cp-1: upgrading v1.12.3 → v1.13.2 (1/5)". */
export function progressNodeStarted(node: string, from: string | undefined, to: string, n: number, total: number): string {
  return `node ${node}: upgrading ${versionHop(from, to)} (${n}/${total})`;
}

export function progressNodeStep(node: string, step: string, detail?: string): string {
  return `node ${node}: ${step}${detail ? ` (${singleLine(detail)})` : ""}`;
}

/** "node cp-1: back on v1.13.2 after 41s". */
export function progressNodeBack(node: string, version: string, durationMs: number | undefined): string {
  return `node ${node}: back on ${version}${durationMs !== undefined ? ` after ${formatDuration(durationMs)}` : ""}`;
}

export function progressNodeFailed(node: string, reason: string): string {
  return `node ${node}: failed: ${truncateReason(singleLine(reason))}`;
}

/** "node w-1: uncordoned: an interrupted run of this upgrade left it cordoned". */
export function progressUncordonedLeftover(node: string): string {
  return `node ${node}: uncordoned: an interrupted run of this upgrade left it cordoned`;
}

export function uncordonFailed(node: string, detail: string): string {
  return `could not lift talos-gate's cordon of node ${node} (kubectl uncordon ${node} does it by hand): ${truncateReason(singleLine(detail))}`;
}

export function progressRunFinished(total: number, target: string, durationMs: number | undefined): string {
  return `done: all ${plural(total, "machine")} on ${target}${durationMs !== undefined ? ` after ${formatDuration(durationMs)}` : ""}`;
}

export function progressRunFailed(reason: string): string {
  return `failed: ${truncateReason(singleLine(reason))}`;
}

export function sweepFailed(detail: string): string {
  return `could not remove the runner Jobs at the end of the run (the next run or \`pulumi destroy\` removes them): ${truncateReason(singleLine(detail))}`;
}

export function leaseReleaseFailed(detail: string): string {
  return `could not release the rollout lease (it expires on its own within its duration): ${truncateReason(singleLine(detail))}`;
}

export function mirrorWriteFailed(detail: string): string {
  return `could not mirror the upgrade status into the cluster (the rollout continues; \`talos-gate status\` may lag): ${truncateReason(singleLine(detail))}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Reasons a run ends with phase Failed (status.error; collapsed and truncated by the reducer)

const RESUME = "run `pulumi up` again to resume from the first node not on the target";

export function reasonHoldTimeout(holdTimeoutMs: number, wave: number, waves: number, heldBy: string): string {
  return `healthchecks held the upgrade longer than holdTimeout ${formatDuration(holdTimeoutMs)} before wave ${wave}/${waves}: ${heldBy}; fix the failing checks or raise holdTimeout, then ${RESUME}`;
}

export function reasonNotReadyTimeout(holdTimeoutMs: number, notReady: readonly string[]): string {
  return `the cluster was not ready within holdTimeout ${formatDuration(holdTimeoutMs)} (not ready: ${notReady.join(", ")}); make the nodes Ready or raise holdTimeout, then ${RESUME}`;
}

export function reasonNodeTimeout(node: string, target: string, nodeTimeoutMs: number, detail: string): string {
  return `node ${node} was not back on ${target} within nodeTimeout ${formatDuration(nodeTimeoutMs)}: ${detail}; inspect the node (talosctl dmesg, talosctl version), then ${RESUME}`;
}

/** What a node was doing when its nodeTimeout ran out (the detail of `reasonNodeTimeout`). */
export function nodeTimeoutLastStep(step: string | undefined, sinceMs: number): string {
  const what: Record<string, string> = {
    pulling: "it was still pulling the installer image",
    installing: "it was still running the installer",
    draining: "it was still being drained",
    rebooting: "it went down to reboot and has not come back on the new version",
    waiting: "it went down to reboot and has not come back on the new version",
    back: "Talos is back on the new version, but its Kubernetes Node is not Ready",
  };
  const text = (step !== undefined ? what[step] : undefined) ?? "it has not reported any progress";
  return `${text} (last step ${formatDuration(sinceMs)} ago)`;
}

/** The node's installer image could not be derived: nothing was installed on it, and looking at the node will not help. */
export function reasonNodeImageUnknown(node: string, detail: string): string {
  return `node ${node} not upgraded, its installer image is unknown: ${detail}; nothing was installed on it: fix that, then ${RESUME}`;
}

export function reasonNodeFailed(node: string, detail: string): string {
  return `upgrade of node ${node} failed: ${detail}; the node is not retried automatically: inspect it (talosctl dmesg, talosctl version), then ${RESUME}`;
}

/** `why`: what asked the run to stop (the engine's cancel, a signal, `talos-gate stop`), when known. */
export function reasonCancelled(beforeNode: string | undefined, done: number, total: number, why?: string): string {
  const where = beforeNode !== undefined ? ` before node ${beforeNode}` : "";
  const cause = why ? `: ${why}` : "";
  return `upgrade cancelled${where} (${done}/${total} machines on the target)${cause}; ${RESUME}`;
}

export function reasonLeaseLost(cluster: string): string {
  return `lost the rollout lease of cluster ${cluster} (renewal failed or another holder took it over); stopped before the next node; ${RESUME}`;
}

export function reasonSetAside(names: readonly string[], done: number, total: number): string {
  return `${done}/${total} machines on the target; set aside because they were not ready when their turn came: ${names.join(", ")}; make them Ready, then ${RESUME}`;
}

/** "node w-7: set aside: not ready (its turn came while its Node is NotReady)". */
export function progressNodeSetAside(node: string): string {
  return `node ${node}: set aside: not ready when its turn came (not upgraded; a later run upgrades it once it is Ready)`;
}

export function reasonKubeletNotReported(node: string, nodeVersion: string | undefined, target: string, timeoutMs: number): string {
  return `node ${node} is back on ${target} (Talos confirmed its new boot), but its Kubernetes Node still reports ${nodeVersion ?? "an unknown version"} after nodeTimeout ${formatDuration(timeoutMs)}: its kubelet has not reported since the reboot; check the kubelet (talosctl service kubelet, talosctl logs kubelet), then ${RESUME}`;
}

/** Step detail: "etcd leadership handed to cp-2". */
export function leadershipForfeited(leader: string): string {
  return `etcd leadership handed to ${leader}`;
}

export function volumeWaitForbidden(node: string, detail: string): string {
  return `node ${node}: not waiting for its volumes to detach before the reboot: the kubeconfig may not list or watch volumeattachments.storage.k8s.io (grant it, or set volumeDetachTimeout "0s" to turn the wait off): ${truncateReason(singleLine(detail))}`;
}

export function forfeitFailed(node: string, detail: string): string {
  return `node ${node}: could not hand etcd leadership over before the reboot (etcd elects a new leader when it goes down): ${truncateReason(singleLine(detail))}`;
}

/** Id of the gate's built-in etcd check before a control plane goes down (a colon: no healthcheck id can have one). */
export const ETCD_CHECK_ID = "talos-gate:etcd";

export function etcdCheckFailed(detail: string): string {
  return `etcd health unknown: ${detail}`;
}

export function reasonNotReadyAfterUpgrade(node: string, timeoutMs: number): string {
  return `node ${node} did not become Ready within nodeTimeout ${formatDuration(timeoutMs)} after its upgrade; ${RESUME}`;
}

export function reasonNodeDownAgain(node: string, target: string): string {
  return `node ${node} was back on ${target}, then went down again (not Ready, and Talos does not answer for it); the run stops before the next node: bring ${node} back (talosctl dmesg, talosctl version), then ${RESUME}`;
}

export function reasonNodeWrongVersion(node: string, actual: string | undefined, target: string): string {
  return `node ${node} came back on ${actual ?? "an unknown version"} instead of ${target}; the node is not retried automatically: inspect it, then ${RESUME}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Beyond Omni: condition gates, soak, maintenance windows, node hooks, volume detach

/** A condition whose watch has not delivered a state yet. */
/** Why a deadline's signal aborted (the caller reports the bound that ended, not this). */
export const DEADLINE_PASSED = "deadline passed";
export const CONDITION_WAITING_FOR_OBJECTS = "waiting for the objects (watch starting)";

export function stepSoaking(until: string, reason?: string): string {
  return reason ? `soaking: restarted, waiting for the conditions to hold: ${truncateReason(singleLine(reason))}`
    : `soaking: next node not before ${until}`;
}

export function progressSoakStarted(soakMs: number, until: string): string {
  return `soak: ${formatDuration(soakMs)} with every condition holding, next node not before ${until}`;
}

export function progressSoakRestarted(reason: string): string {
  return `soak restarted: a condition stopped holding: ${truncateReason(singleLine(reason))}`;
}

export const PROGRESS_SOAK_DONE = "soak done";

export function reasonSoakTimeout(soakMs: number, holdTimeoutMs: number, heldBy: string): string {
  return `the soak of ${formatDuration(soakMs)} did not complete within holdTimeout ${formatDuration(holdTimeoutMs)} after it: ${heldBy}; fix the conditions or raise holdTimeout, then ${RESUME}`;
}

export function progressHookStarted(phase: string, id: string, node: string): string {
  return `node ${node}: ${phase} hook ${goQuote(id)} running`;
}

export function progressHookFinished(phase: string, id: string, node: string, error?: string): string {
  return error ? `node ${node}: ${phase} hook ${goQuote(id)} failed: ${truncateReason(singleLine(error))}`
    : `node ${node}: ${phase} hook ${goQuote(id)} passed`;
}

export function hookTimedOut(timeoutMs: number): string {
  return `the hook Job did not finish within its timeout ${formatDuration(timeoutMs)}`;
}

export function reasonHookFailed(phase: string, id: string, node: string, detail: string): string {
  return `${phase} hook ${goQuote(id)} failed for node ${node}: ${detail}; fix the hook (kubectl get events shows its Job), then ${RESUME}`;
}

export function volumesBlocking(volumes: readonly string[]): string {
  return `waiting for volumes to detach: ${volumes.join(", ")}`;
}

export function etcdNoConsentBeforeDown(node: string, reason: string): string {
  return `etcd did not consent to control plane ${node} going down before nodeTimeout (asked again right before its reboot): ${reason}`;
}

export function progressWaitingForEtcd(reason: string): string {
  return `waiting for etcd: ${truncateReason(singleLine(reason))}`;
}

/** A failure after the install: the new version waits on disk for the node's next reboot (issue 18.4). */
export function withArmed(reason: string, node: string, version: string): string {
  return `${reason} (node ${node} is armed: ${version} is installed and boots at its next reboot, ungated; the next run finishes it in order, or a revert disarms it)`;
}

export function progressNodeArmed(node: string, version: string): string {
  return `node ${node}: armed: ${version} is installed but the node has not rebooted into it (it boots at its next reboot, ungated)`;
}

export function progressNodeDisarmed(node: string, version: string): string {
  return `node ${node}: disarmed: ${version}, the version it runs, installed again (no reboot)`;
}

export function staleMarkNotDropped(node: string, detail: string): string {
  return `could not remove talos-gate's stale cordon mark from node ${node} (its cordon was lifted; kubectl annotate node ${node} talos-gate.dev/cordoned-by- does it by hand): ${truncateReason(singleLine(detail))}`;
}

export function reasonCannotDisarm(node: string, armed: string, detail: string): string {
  return `node ${node} is armed with ${armed} (installed, not rebooted) and could not be disarmed: ${truncateReason(singleLine(detail))}; it boots ${armed} at its next reboot; keep it from rebooting, then ${RESUME}`;
}

// --- small clusters (issue 25)

/** A list of names, at most `limit` of them named. */
function someOf(names: readonly string[], limit = 10): string {
  return names.length <= limit ? names.join(", ") : `${names.slice(0, limit).join(", ")} and ${names.length - limit} more`;
}

/** Why a node was only cordoned, in the words of the `drain` input. */
function notDrainedWhy(why: "never" | "nowhere"): string {
  return why === "never" ? 'drain is "never"' : 'no other Ready, schedulable node could take its pods (drain: "auto")';
}

/** What goes down with a node that is not drained: the pods, and the budgets that breaks. */
function notDrainedCost(pods: readonly string[], pdbs: readonly string[]): string {
  const budgets = pdbs.length ? `; PodDisruptionBudget ${someOf(pdbs)} will be violated for the reboot` : "";
  return `${pods.length} pod(s) go down with it${pods.length ? `: ${someOf(pods)}` : ""}${budgets}`;
}

/**
 * The warning for a node that reboots without a drain. On the legacy path Talos' own Upgrade sequence still drains it
 * (up to 5 minutes, then reboots anyway).
 */
export function nodeNotDrained(node: string, why: "never" | "nowhere", pods: readonly string[], pdbs: readonly string[], legacy: boolean): string {
  const talos = legacy ? "; Talos' own drain in the legacy upgrade still tries to evict them for up to 5 minutes before it reboots anyway" : "";
  return `node ${node} is not drained: ${notDrainedWhy(why)}; it is cordoned and reboots with its pods: ${notDrainedCost(pods, pdbs)}${talos}`;
}

/** The same for the status step, next to the current machine. */
export function stepNotDrained(node: string, why: "never" | "nowhere", pods: readonly string[], pdbs: readonly string[]): string {
  return `${node} not drained (${why === "never" ? 'drain "never"' : "no other node could take its pods"}): ${notDrainedCost(pods, pdbs)}`;
}

/** What a control plane's reboot costs when etcd cannot keep quorum through it (2 control planes). */
export function quorumLossCost(node: string): string {
  return `${node} down: etcd loses quorum for the reboot, the API server is read-only`;
}

export function etcdQuorumLossAccepted(node: string): string {
  return `${quorumLossCost(node)} (etcdQuorumLoss: "allow"; all members were healthy)`;
}

/** Preview: each control plane's reboot under etcdQuorumLoss "allow", or the refusal the run will meet without it. */
export function planQuorumLoss(controlPlanes: readonly string[], allowed: boolean): string[] {
  if (allowed) return controlPlanes.map((n) => `${quorumLossCost(n)} (etcdQuorumLoss: "allow")`);
  return [
    `the upgrade will stop before control plane ${controlPlanes[0]}: a cluster with 2 control planes cannot keep etcd quorum ` +
      'through any reboot; set etcdQuorumLoss: "allow" to upgrade them one at a time through the outage, or run 3',
  ];
}

export const nodeNotInCluster = (node: string) => `node ${node} is not in the cluster`;

// --- upgrade paths (path.ts): one step of `path` + version

/** Which step of the path a run is in: "2/3: → v1.13.2". */
export function pathStepLabel(step: number, steps: number, target: string): string {
  return `${step}/${steps}: → ${target}`;
}

/** The status line with the step in front when there is a path: "2/3: → v1.13.2; updating machines 2/5". */
export function withPathStep(label: string, status: string): string {
  return status ? `${label}; ${status}` : label;
}

export function planPathStep(label: string, from: string): string {
  return `path step ${label} (from ${from})`;
}

export function planPathLater(label: string): string {
  return `path step ${label}: every node, planned from the live cluster once the step before it is done`;
}

export function progressPathStep(label: string): string {
  return `path step ${label}: a full gated rollout`;
}

export function reasonPathStepBehind(node: string, version: string, step: string): string {
  return `node ${node} runs ${version}, newer than the path step ${step}; a rollout never takes a node back: drop ${step} from path, then ${RESUME}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The live line (issue 22.4): one line per rollout that replaces itself on the TalosUpgrade's row.

/** "[3/12 25%] w-2: draining (wave 3/7)". */
export function liveLine(done: number, total: number, activity: string, wave: number, waves: number): string {
  const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
  return `[${done}/${total} ${pct}%] ${activity}${wave > 0 ? ` (wave ${wave}/${waves})` : ""}`;
}

/** "w-2: draining"; several in flight: "w-1: rebooting, w-2: draining, +3 more". */
export function liveNodes(nodes: ReadonlyArray<{ name: string; step: string }>, shown = 3): string {
  const list = nodes.slice(0, shown).map((n) => `${n.name}: ${n.step}`).join(", ");
  return nodes.length > shown ? `${list}, +${nodes.length - shown} more` : list;
}

/** `gate held 4m0s by "cluster-prod-ceph-health": ceph is HEALTH_WARN` (each check's detail single-line, truncated). */
export function liveGateHeld(heldMs: number, entries: ReadonlyArray<{ id: string; detail: string }>): string {
  const by = entries.map((e) => healthcheckContribution(e.id, singleLine(e.detail))).join("; ");
  // The first hold is reported the moment it starts: no "held 0ms".
  return `gate held${heldMs >= 1000 ? ` ${formatDuration(heldMs)}` : ""}${by ? ` by ${by}` : ""}`;
}

export const liveGateChecking = (ids: readonly string[]) => `gate: running ${ids.map(goQuote).join(", ")}`;
export const LIVE_NODE_STARTING = "starting";
export const LIVE_DONE = "done";

// ---------------------------------------------------------------------------------------------------------------
// Kubernetes Events on Nodes (issue 22.5): what `kubectl describe node` shows of a rollout, as kured and Omni do.
export const EVENT_STARTED = "TalosUpgradeStarted";
export const EVENT_UPGRADED = "TalosUpgraded";
export const EVENT_FAILED = "TalosUpgradeFailed";

/** "upgrading Talos v1.12.3 → v1.13.2 (talos-gate rollout of cluster prod, node 2/5)". */
export function eventStarted(cluster: string, from: string | undefined, to: string, n: number, total: number): string {
  return `upgrading Talos ${versionHop(from, to)} (talos-gate rollout of cluster ${cluster}, node ${n}/${total})`;
}

export function eventUpgraded(cluster: string, from: string | undefined, to: string, durationMs: number | undefined): string {
  return `upgraded Talos ${versionHop(from, to)}${durationMs !== undefined ? ` in ${formatDuration(durationMs)}` : ""} (talos-gate rollout of cluster ${cluster})`;
}

export function eventFailed(cluster: string, from: string | undefined, to: string, reason: string): string {
  return `Talos upgrade ${versionHop(from, to)} failed (talos-gate rollout of cluster ${cluster}): ${truncateReason(singleLine(reason))}`;
}

// ---------------------------------------------------------------------------------------------------------------
// KubernetesUpgrade (issue 24.3): its skew refusals at preview, its plan lines, its run's failures.

/** A unit of the Kubernetes rollout as the status names it: "cp-1 (control plane)", "kube-proxy", "w-1 (kubelet)". */
export const K8S_PROXY_UNIT = "kube-proxy";
export const k8sControlPlaneUnit = (node: string) => `${node} (control plane)`;
export const k8sKubeletUnit = (node: string) => `${node} (kubelet)`;

export function k8sSkipsMinor(where: string, running: string, target: string, next: string): string {
  return `${where} runs ${running}: Kubernetes moves the control plane one minor at a time (its version skew policy), so ${target} ` +
    `cannot be reached directly: set version to ${next}.x first, then ${target}`;
}

export function k8sDowngradeMinor(where: string, running: string, target: string): string {
  return `${where} runs ${running}: going down to ${target} is a minor downgrade, which Kubernetes does not support; ` +
    `set version to ${running} or newer`;
}

export function k8sKubeletNewer(node: string, running: string, target: string): string {
  return `the kubelet of ${node} runs ${running}, newer than the API server would (${target}): kubelets are never newer than ` +
    `the API server (Kubernetes' version skew policy); set version to ${running} or newer`;
}

export function k8sKubeletTooOld(node: string, running: string, target: string, maxMinors: number): string {
  return `the kubelet of ${node} runs ${running}, more than ${maxMinors} minors older than ${target} (Kubernetes' version ` +
    `skew policy allows kubelets ${maxMinors} minors behind the API server): upgrade Kubernetes one minor at a time`;
}

export function k8sOutsideTalos(node: string, talos: string, target: string, release: string, min: string, max: string, after = false): string {
  return `node ${node} ${after ? "will run" : "runs"} Talos ${talos}${after ? " (the TalosUpgrade this one runs after)" : ""}, whose range is ` +
    `Kubernetes ${min} – ${max.replace(/\.99$/, ".x")} (Talos ${release}), so Kubernetes ${target} cannot run on it: ` +
    (after ? `choose a Kubernetes inside that range` : `upgrade Talos first (a TalosUpgrade, and \`after\` on this KubernetesUpgrade)`);
}

export function k8sPlanHeadline(target: string, controlPlanes: number, kubelets: number, done: number, proxy = controlPlanes + kubelets > 0): string {
  if (!proxy) return `nothing to do: every node already runs Kubernetes ${target}`;
  const parts = [controlPlanes + kubelets === 0 ? `upgrade Kubernetes to ${target}: kube-proxy only (every node already runs it)`
    : `upgrade Kubernetes to ${target}: ${plural(controlPlanes, "control plane")} one at a time, kube-proxy, then ${plural(kubelets, "kubelet")}`];
  if (done) parts.push(`${done} already on ${target}`);
  return parts.join(", ");
}

/** "1. cp-1 (control plane): kube-apiserver, kube-controller-manager, kube-scheduler v1.35.2 → v1.36.1, gated by: …". */
export function k8sPlanUnitLine(index: number, unit: string, what: string, from: string | undefined, to: string, gatedBy: readonly string[]): string {
  // "" (kube-proxy without a DaemonSet read): only where it goes.
  return `${index}. ${unit}: ${what} ${from === "" ? `→ ${to}` : versionHop(from, to)}${gatedBy.length ? `, gated by: ${gatedBy.join(", ")}` : ""}`;
}

export const K8S_PROXY_WHAT = "cluster.proxy.image on every control plane, bootstrap manifests synced";
/** kube-proxy's DaemonSet as Talos bootstraps it (siderolabs/talos k8stemplates/kube-proxy.go). */
export const K8S_PROXY_DAEMONSET = "kube-system/kube-proxy";

export function k8sProxyNotRendered(node: string, target: string, timeoutMs: number, seen: string | undefined): string {
  return `the control plane ${node} did not render kube-proxy ${target} into its bootstrap manifests within nodeTimeout ` +
    `${formatDuration(timeoutMs)} after cluster.proxy.image was patched (it renders ${seen ?? "nothing readable"}); nothing was ` +
    `synced: look at the manifests (talosctl -n ${node} get manifests), then ${RESUME}`;
}

export function k8sManifestSyncFailed(node: string, detail: string): string {
  return `syncing the bootstrap manifests rendered by ${node} into the cluster failed: ${detail}`;
}

export function k8sProxyRolloutTimeout(target: string, timeoutMs: number, seen: string): string {
  return `DaemonSet ${K8S_PROXY_DAEMONSET} did not finish rolling out ${target} within nodeTimeout ${formatDuration(timeoutMs)} ` +
    `(last seen: ${seen}); nothing further was touched: look at its pods (kubectl -n kube-system rollout status daemonset/kube-proxy), then ${RESUME}`;
}

/** A DaemonSet's rollout in `kubectl rollout status` words. */
export function k8sProxySeen(s: { image?: string; generation: number; observedGeneration: number; desired: number; updated: number; available: number } | undefined): string {
  if (!s) return "no DaemonSet";
  const gen = s.observedGeneration < s.generation ? `, generation ${s.generation} not yet observed` : "";
  return `image ${s.image ?? "none"}, ${s.updated} of ${s.desired} updated, ${s.available} available${gen}`;
}

export function k8sStaticPodTimeout(node: string, component: string, target: string, timeoutMs: number, seen: string): string {
  return `${component} on ${node} was not Ready on ${target} within nodeTimeout ${formatDuration(timeoutMs)} (last seen: ${seen}); ` +
    `nothing further was touched: look at the static pod (talosctl -n ${node} logs ${component}), then ${RESUME}`;
}

export function k8sKubeletTimeout(node: string, target: string, timeoutMs: number, seen: string | undefined): string {
  return `the kubelet of ${node} did not report ${target} within nodeTimeout ${formatDuration(timeoutMs)} (it reports ${seen ?? "nothing"}); ` +
    `nothing further was touched: look at the kubelet (talosctl -n ${node} service kubelet), then ${RESUME}`;
}

export function k8sPatchFailed(node: string, what: string, detail: string): string {
  return `patching ${what} in the machine config of ${node} failed: ${detail}`;
}

export const k8sStaticPodSeen = (image: string | undefined, ready: boolean | undefined) =>
  image === undefined ? "no static pod" : `${image}${ready ? ", Ready" : ", not Ready"}`;
