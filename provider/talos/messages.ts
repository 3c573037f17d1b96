// Every user-visible message of the Talos port. Each names the node (where there is one), what failed and what to do.
// Details coming from a server pass through `redact` (errors.ts) before they reach these strings.

const dur = (ms: number): string => (ms % 60000 === 0 ? `${ms / 60000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

export const msg = {
  // --- the package's protos
  protoMissing: (file: string, from: string) => `cannot find proto/${file} above ${from}`,
  // --- talosconfig
  configNotYaml: (detail: string) => `talosconfig: not valid YAML (${detail}); pass the contents of a talosconfig file`,
  configNoContexts: () => "talosconfig: no contexts; generate one with `talosctl config new` or take it from your cluster's secrets",
  configNoContext: () => "talosconfig: no context selected and more than one defined; set `context:` or pass the context name",
  configUnknownContext: (name: string, known: string[]) =>
    `talosconfig: context "${name}" not found (contexts: ${known.join(", ") || "none"}); fix \`context:\` or the context name`,
  configNoEndpoints: (ctx: string) =>
    `talosconfig: context "${ctx}" has no endpoints; add the address of a control-plane node under contexts.${ctx}.endpoints`,
  configBadEndpoint: (ctx: string, ep: string) =>
    `talosconfig: context "${ctx}": endpoint "${ep}" is not a host, host:port or URL`,
  configMissingField: (ctx: string, field: string) =>
    `talosconfig: context "${ctx}" has no \`${field}\`; talos-gate needs a talosconfig with mTLS credentials (ca, crt, key)`,
  configOmniAuth: (ctx: string) =>
    `talosconfig: context "${ctx}" uses Omni (auth.siderov1) authentication, which talos-gate does not support; ` +
    "use a talosconfig with client certificates (ca, crt, key), e.g. from `talosctl config new` on a control plane",
  configBadPem: (ctx: string, field: string, what: string) =>
    `talosconfig: context "${ctx}": \`${field}\` is not base64 of a PEM ${what}; copy it unchanged from the talosconfig talosctl wrote`,
  configBadKey: (ctx: string) =>
    `talosconfig: context "${ctx}": \`key\` is not a usable private key (tried the Talos ED25519 label fix); regenerate the talosconfig`,
  configBadCredentials: (ctx: string, detail: string) =>
    `talosconfig: context "${ctx}": the TLS credentials cannot be used (${detail}); check that crt and key belong together`,

  // --- images and versions
  targetUnknown: (image: string) =>
    `installer image "${image}" has no version tag (missing, "latest" or digest only), so the target Talos version is unknown; ` +
    'use an explicit tag such as ghcr.io/siderolabs/installer:v1.13.2 or set the target version explicitly',
  imageVersionMismatch: (image: string, tag: string, target: string) =>
    `installer image "${image}" installs ${tag}, but the target version is ${target}; make the image tag and the version agree`,
  badVersion: (version: string) => `"${version}" is not a Talos version; use the form v1.13.2`,
  badSchematic: (schematic: string) =>
    `"${schematic}" is not an Image Factory schematic ID (64 hexadecimal characters); copy it from factory.talos.dev or omnictl`,
  badImageRef: (image: string) => `"${image}" is not a container image reference`,
  // The remedy first: a run's reasons keep only the first 256 bytes of a detail.
  extensionsWithoutSchematic: (node: string, extensions: string[]) =>
    `node ${node} runs system extensions (${extensions.join(", ")}) without an Image Factory schematic: set installerImage ` +
    "to an image that carries them, or a schematic that contains them (its installer image cannot be derived, and the " +
    "vanilla installer would drop them)",
  secureBootWithoutSchematic: (node: string) =>
    `node ${node} boots with SecureBoot without an Image Factory schematic: set installerImage to the installer-secureboot ` +
    "image signed with the machine's own key, or a schematic if it trusts Image Factory's (its image was built outside " +
    "Image Factory: the vanilla installer is no SecureBoot installer, and Image Factory's is signed with Sidero Labs' key)",
  badFactoryHost: (host: string) =>
    `"${host}" is not an Image Factory host; give the registry host the factory serves installers from, with its port ` +
    "and path prefix if any and without https:// (e.g. factory.talos.dev or factory.example.com:5000)",
  talosTooOld: (node: string, version: string) =>
    `node ${node} answered as Talos ${version}: Talos before v1.2 cannot route a call to one node through an endpoint ` +
    "(apid knows no `node` header), so the endpoint itself would be upgraded in its place; upgrade this cluster to " +
    "v1.2 or later with talosctl first (talosctl -e <node> -n <node> upgrade), then let talos-gate take over",
  noPlatform: (node: string) =>
    `node ${node} reports no platform (Version API), which Image Factory installer names need from Talos 1.10; set installerImage explicitly`,

  // --- RPC failures (op = what was being done, e.g. "Version", "upgrade")
  unavailable: (node: string, op: string, detail: string) =>
    `talos: node ${node}: ${op}: the node is unreachable (${detail}); it may be rebooting — retry later, ` +
    "and check that the talosconfig endpoint can reach the node",
  cancelled: (node: string, op: string) => `talos: node ${node}: ${op}: the call was cancelled; retry`,
  deadline: (node: string, op: string) => `talos: node ${node}: ${op}: no answer in time; the node may be overloaded or rebooting — retry`,
  streamEnded: (node: string, op: string) =>
    `talos: node ${node}: ${op}: the stream ended before the final answer; the node may be rebooting — retry`,
  certificate: (node: string, op: string, detail: string) =>
    `talos: node ${node}: ${op}: TLS certificate verification failed (${detail}); the talosconfig's ca/crt/key do not match ` +
    "this cluster's Talos CA — use the cluster's talosconfig (or add the endpoint to machine.certSANs)",
  permissionDenied: (node: string, op: string, detail: string) =>
    `talos: node ${node}: ${op}: ${detail || "not authorized"}; the talosconfig's client certificate lacks the os:admin role — ` +
    "use an admin talosconfig (talosctl config new --roles os:admin)",
  unauthenticated: (node: string, op: string, detail: string) =>
    `talos: node ${node}: ${op}: the node rejected the client certificate (${detail}); use the cluster's talosconfig`,
  failedPrecondition: (node: string, op: string, detail: string) =>
    `talos: node ${node}: ${op}: refused: ${detail}; ` +
    (/in progress|locked/i.test(detail)
      ? "wait for the running installation/upgrade on this node to finish, then retry"
      : "fix the node's state (see the message) before upgrading it"),
  notFound: (node: string, op: string, detail: string) =>
    `talos: node ${node}: ${op}: ${detail}; check the installer image reference and that the node can reach its registry`,
  unimplemented: (node: string, op: string) =>
    `talos: node ${node}: ${op}: not implemented by this Talos version; upgrade the node with the legacy API`,
  invalidArgument: (node: string, op: string, detail: string) => `talos: node ${node}: ${op}: invalid request: ${detail}`,
  mutexBusy: (node: string, op: string, detail: string) =>
    `talos: node ${node}: ${op}: ${detail}; another control plane is upgrading — retry after it finishes`,
  inProgress: (node: string, op: string, detail: string) =>
    `talos: node ${node}: ${op}: refused: ${detail}; another installation/upgrade is running on this node — retry after it finishes`,
  etcdUnhealthy: (node: string, op: string, detail: string) =>
    `talos: node ${node}: ${op}: ${detail}; etcd must be healthy on every control plane before one goes down — ` +
    "wait for the etcd members to catch up (talosctl etcd status), then retry",
  etcdQuorum: (node: string, op: string, detail: string) =>
    `talos: node ${node}: ${op}: Talos refused: ${detail}; etcd would lose quorum while this control plane reboots — ` +
    "run an odd number of control planes (add a third), then retry; etcdQuorumLoss: \"allow\" cannot help here: this Talos " +
    "checks etcd itself before a legacy upgrade (from v1.12.9, v1.13.4 and on the >= 1.13 LifecycleService path it does not)",
  noEndpoint: (detail: string) => `no talosconfig endpoint answered: ${detail}`,
  failed: (node: string, op: string, code: string, detail: string) => `talos: node ${node}: ${op} failed (${code}): ${detail}`,
  local: (node: string, op: string, detail: string) => `talos: node ${node}: ${op}: ${detail}`,

  // --- upgrade outcome
  installerExit: (node: string, code: number, version: string, tail: string) =>
    `talos: node ${node}: the installer exited with code ${code}${tail ? ` (last output: ${tail})` : ""}; ` +
    `the node was not rebooted and still runs ${version} — check the installer image and the node's logs`,
  sequenceFailed: (node: string, detail: string) =>
    `talos: node ${node}: the upgrade sequence failed on the node: ${detail}; check \`talosctl -n ${node} dmesg\` and retry`,
  sequenceLocked: (node: string, detail: string) =>
    `talos: node ${node}: the upgrade did not start (${detail}): another sequence is running on the node; wait for it to finish, then retry`,
  rolledBack: (node: string, back: string, target: string) =>
    `talos: node ${node} came back on ${back} instead of ${target}: the upgrade was rolled back by Talos (A/B); ` +
    "check the installer image and the node's boot logs before retrying",
  refusedUntilTimeout: (node: string, target: string, timeoutMs: number, reason: string) =>
    `talos: node ${node}: not upgraded to ${target}: Talos still refused after nodeTimeout ${dur(timeoutMs)} (last refusal: ${reason}); ` +
    "the node was not touched — fix what the refusal names, then re-run",
  retryingRefusal: (reason: string, inMs: number) => `Talos refused for now, retrying in ${dur(inMs)}: ${reason}`,
  retryingLeakyRefusal: (reason: string, inMs: number) =>
    `Talos refused for now, retrying in ${dur(inMs)} (slowly: this Talos leaks an etcd client on each refused Upgrade, ` +
    `fixed in v1.12.9 and v1.13.4): ${reason}`,
  notDelivered: (node: string, action: string, timeoutMs: number, detail: string) =>
    `talos: node ${node}: ${action} could not be delivered within ${dur(timeoutMs)} (${detail}): the node was not reached ` +
    "and not changed by it — check that it is up and that the talosconfig endpoints can reach it, then re-run",
  otherUpgradeInFlight: () =>
    "Talos locked our Upgrade out: another run's upgrade is still running on the node (draining); waiting for it to reboot the node",
  otherUpgradeLanded: (node: string, now: string, target: string) =>
    `talos: node ${node}: another upgrade was running on the node (our Upgrade was locked out) and it came back on ${now}, ` +
    `not ${target}; re-run to upgrade it to ${target}`,
  answerLost: (node: string, action: string, detail: string, timeoutMs: number, last: string) =>
    `talos: node ${node}: the answer to ${action} was lost (${detail}) and the node did not reboot within ${dur(timeoutMs)} (${last}); ` +
    `it may not have received the request — ${action} is not sent twice without proof that the first did not take: ` +
    `check the node (talosctl -n ${node} dmesg), then re-run to retry`,
  notBack: (node: string, target: string, timeoutMs: number, last: string) =>
    `talos: node ${node} did not come back on ${target} within ${dur(timeoutMs)} (${last}); ` +
    "check the node's console, then re-run to resume, or raise nodeTimeout",
  lastDown: (detail: string) => `last seen: unreachable: ${detail}`,
  lastSameBoot: () => "last seen: up with the same boot id, it has not rebooted",
  // Not "it has not rebooted": a node that answered and then stopped answering may be on its way down.
  lastSameBootThenUnanswered: (detail: string) =>
    `last seen: up with the same boot id; the looks after it got no answer in time: ${detail}`,
  lastOtherVersion: (v: string) => `last seen: rebooted, running ${v}`,
  lastNothing: () => "no answer yet",
  aborted: (node: string) => `talos: node ${node}: upgrade interrupted (cancelled); re-run to resume`,

  // --- etcd safety of control planes (EtcdHealth.canTakeDown reasons)
  etcdNotStarted: () => "the member has not started (it was added but never joined)",
  etcdNoClientUrl: () => "the member lists no client URL, so its node cannot be asked",
  etcdNoLeaderSeen: () => "it knows no leader",
  etcdNoMember: (node: string, members: string[]) =>
    `etcd has no member for control plane ${node} (members: ${members.join(", ") || "none"}); check \`talosctl -n ${node} etcd members\``,
  etcdMembersUnhealthy: (node: string, sick: { name: string; id: string; problem: string }[]) =>
    `etcd is not healthy, so control plane ${node} must not go down yet: ` +
    sick.map((s) => `member ${s.name} (${s.id}): ${s.problem}`).join("; "),
  etcdQuorumLost: (node: string, voters: number, left: number, quorum: number) =>
    `taking control plane ${node} down would lose etcd quorum: ${left} of ${voters} voting members would be left healthy, ${quorum} are needed` +
    (voters === 2
      ? '; a cluster with 2 control planes cannot keep quorum through any reboot — run 3, or accept the outage with etcdQuorumLoss: "allow"'
      : ""),

  // --- the TLS probe's diagnosis (part of a certificate error)
  probeTimedOut: () => "TLS probe timed out",
  probeReset: () => "the endpoint reset the connection right after the TLS handshake: it did not accept the client certificate",
  probeClosed: () => "the endpoint closed the connection right after the TLS handshake: it did not accept the client certificate",
  probeClosedInHandshake: () => "connection closed during the TLS handshake",

  // --- upgrade paths (Talos' compatibility rules, compat.ts)
  pathTooOld: (release: string, min: string) => `Talos ${release} upgrades from ≥ ${min}`,
  pathTooNew: (release: string, max: string) => `Talos ${release} can be installed over versions < ${max} only`,
  pathDenied: (release: string, host: string) => `Talos ${release} refuses upgrades from ${host}`,
  pathCannot: (node: string, from: string, to: string, rule: string, downgrade: boolean) =>
    `node ${node}: ${from} cannot be ${downgrade ? "downgraded" : "upgraded"} to ${to} (${rule})`,
  pathSuggest: (via: string[]) =>
    `: go through ${via.map((v) => v.replace(/^(v\d+\.\d+)\..*$/, "$1.x")).join(", then ")} first, e.g. \`path: ${JSON.stringify(via)}\``,
  pathNoSuggestion: () => ": no path through the Talos releases talos-gate knows reaches it; upgrade this node by hand first",
  kubernetesOutside: (k8s: string, where: string, release: string, min: string, max: string) =>
    `Kubernetes ${k8s} (${where}) is outside Talos ${release}'s range ${min} – ${max.replace(/\.99$/, ".x")}`,
  kubernetesAdvice: (tooNew: boolean) =>
    tooNew ? ": pick a Talos release that supports it, or upgrade Talos in steps through releases that do"
      : ": upgrade Kubernetes first (talosctl upgrade-k8s), then Talos",
  pathStepBehind: (node: string, version: string, step: string) =>
    `node ${node} runs ${version}, newer than the path step ${step}; a rollout never takes a node back: drop ${step} from path`,
  unknownRelease: (version: string, source: string) =>
    `Talos ${version} is newer than the upgrade rules talos-gate knows (${source}): its upgrade path and Kubernetes range are not checked`,

  // --- Kubernetes upgrades over the Talos API (kubernetes.ts); never quote the machine configuration: it holds secrets
  machineConfigNotYaml: (where: string, code: string, line: number | undefined) =>
    `${where}: the machine configuration is not valid YAML (${code}${line ? ` at line ${line}` : ""}); ` +
    "check it with `talosctl -n <node> get machineconfig -o yaml` and fix the node's configuration first",
  machineConfigNoV1alpha1: (where: string) =>
    `${where}: the machine configuration has no v1alpha1 document (\`version: v1alpha1\`), which Talos needs outside ` +
    "maintenance mode; the images cannot be set — fix the node's configuration first",
  machineConfigMissing: (node: string) =>
    `talos: node ${node}: the node has no active machine configuration (MachineConfigs.config.talos.dev/v1alpha1); ` +
    "it may be in maintenance mode — apply a configuration to it first",
  machineConfigNotMapping: (where: string, field: string) =>
    `${where}: \`${field}\` in the machine configuration is not a mapping, so the image cannot be set under it; fix the ` +
    "node's configuration first",
  machineConfigEmpty: (node: string) =>
    `talos: node ${node}: the active machine configuration (MachineConfigs.config.talos.dev/v1alpha1) is empty; ` +
    "the node may be in maintenance mode — apply a configuration to it first",
  machineConfigUnreadable: (node: string, detail: string) =>
    `talos: node ${node}: the active machine configuration cannot be read (${detail}); the talosconfig needs the os:admin ` +
    "role (the configuration is a sensitive resource) — use an admin talosconfig",
  applyRefused: (node: string, code: string, detail: string) =>
    `talos: node ${node}: Talos refused the machine configuration (${code}: ${detail}); nothing was changed on the node — ` +
    "fix what the refusal names (or the node's configuration), then re-run",
  applyBusy: (node: string, detail: string) =>
    `talos: node ${node}: Talos refused the machine configuration for now (${detail}); another configuration is being ` +
    "applied to this node — retry after it finishes",
  applyNotApplied: (node: string, mode: number, details: string) =>
    `talos: node ${node}: the machine configuration was accepted in mode ${mode} (${details || "no details"}), not applied ` +
    "without a reboot as asked; check the node's pending configuration (talosctl get machineconfig) before re-running",
  badKubernetesVersion: (version: string) => `"${version}" is not a Kubernetes version; use the form v1.36.1`,
};
