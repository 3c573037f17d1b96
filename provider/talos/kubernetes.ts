// Kubernetes upgrades over the Talos API, as `talosctl upgrade-k8s` does them (siderolabs/talos
// pkg/cluster/kubernetes/talos_managed.go, kubelet.go and patch.go, v1.14.0-beta.1-84 ad88231): read the node's active
// machine configuration (COSI MachineConfigs.config.talos.dev/v1alpha1), set a component's image in it, send it whole
// with MachineService.ApplyConfiguration in mode NO_REBOOT, then watch the result: the control planes' static pods
// (COSI StaticPodStatuses.kubernetes.talos.dev, namespace "k8s"), the kubelet service and its spec, and the bootstrap
// manifests Talos renders (kube-proxy's DaemonSet among them, which upgrade-k8s then syncs into the cluster).
//
// The machine configuration holds the cluster's secrets (CA keys, tokens): it goes from the node back to the node and
// nowhere else — no log, status or error quotes it, and errors about it name only the node, document and field.
import { isMap, isScalar, parseAllDocuments, type Document } from "yaml";
import { APPLY_MODE, CallOptions, TalosClient } from "./client";
import { TalosError } from "./errors";
import { CONFIG_NAMESPACE, MACHINE_CONFIG_ID, MACHINE_CONFIG_TYPE } from "./facts";
import { parseImageRef } from "./image";
import { msg } from "./messages";
import { decodeSpec } from "./proto";
import { fromStruct, type Json } from "./struct";

// ---------------------------------------------------------------- names (Talos' constants and resource types)

/** The control-plane components Talos runs as static pods, in the order upgrade-k8s upgrades them. */
export const STATIC_POD_COMPONENTS = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"] as const;
export type StaticPodComponent = (typeof STATIC_POD_COMPONENTS)[number];

/** The images a Kubernetes upgrade sets, by the machine configuration field they live in. */
export interface KubernetesImages {
  /** cluster.apiServer.image (control planes) */
  apiServer?: string;
  /** cluster.controllerManager.image (control planes) */
  controllerManager?: string;
  /** cluster.scheduler.image (control planes) */
  scheduler?: string;
  /** cluster.proxy.image (control planes render kube-proxy's DaemonSet from it) */
  proxy?: string;
  /** machine.kubelet.image (every node) */
  kubelet?: string;
}
export type KubernetesImageKey = keyof KubernetesImages;
export const KUBERNETES_IMAGE_KEYS = ["apiServer", "controllerManager", "scheduler", "proxy", "kubelet"] as const satisfies readonly KubernetesImageKey[];

/**
 * The image repositories Talos enforces by default (pkg/machinery/constants/constants.go: KubernetesAPIServerImage,
 * KubernetesControllerManagerImage, KubernetesSchedulerImage, KubeProxyImage, KubeletImage; v1.14.0-beta.1-84 ad88231).
 */
export const DEFAULT_IMAGE_REPOSITORIES: Readonly<Record<KubernetesImageKey, string>> = {
  apiServer: "registry.k8s.io/kube-apiserver",
  controllerManager: "registry.k8s.io/kube-controller-manager",
  scheduler: "registry.k8s.io/kube-scheduler",
  proxy: "registry.k8s.io/kube-proxy",
  kubelet: "ghcr.io/siderolabs/kubelet",
};

/** Which static pod an image key drives (the rest are not static pods). */
export const STATIC_POD_OF: Readonly<Partial<Record<KubernetesImageKey, StaticPodComponent>>> = {
  apiServer: "kube-apiserver", controllerManager: "kube-controller-manager", scheduler: "kube-scheduler",
};

/**
 * Where each image sits: its v1alpha1 path, and the kind of the Talos 1.14 multi-document config that takes it over
 * when the configuration has one (stdpatches/guess.go GuessVersionContract*: `cfg.Has(kind)`; field `image` in
 * pkg/machinery/config/types/k8s/{apiserver,controller_manager,scheduler,proxy,kubelet}.go).
 */
const IMAGE_FIELDS: Readonly<Record<KubernetesImageKey, { path: readonly string[]; kind: string }>> = {
  apiServer: { path: ["cluster", "apiServer", "image"], kind: "KubeAPIServerConfig" },
  controllerManager: { path: ["cluster", "controllerManager", "image"], kind: "KubeControllerManagerConfig" },
  scheduler: { path: ["cluster", "scheduler", "image"], kind: "KubeSchedulerConfig" },
  proxy: { path: ["cluster", "proxy", "image"], kind: "KubeProxyConfig" },
  kubelet: { path: ["machine", "kubelet", "image"], kind: "KubeletConfig" },
};

/** The field an image key is set in, for messages ("cluster.apiServer.image"). */
export const imageField = (key: KubernetesImageKey): string => IMAGE_FIELDS[key].path.join(".");

/** COSI resources read here (pkg/machinery/resources/k8s and v1alpha1). */
export const K8S_NAMESPACE = "k8s";
export const CONTROLPLANE_NAMESPACE = "controlplane";
export const STATIC_POD_STATUS_TYPE = "StaticPodStatuses.kubernetes.talos.dev";
export const KUBELET_SPEC_TYPE = "KubeletSpecs.kubernetes.talos.dev";
export const KUBELET_ID = "kubelet";
export const SERVICE_NAMESPACE = "runtime";
export const SERVICE_TYPE = "Services.v1alpha1.talos.dev";
export const MANIFEST_TYPE = "Manifests.kubernetes.talos.dev";
/** Talos' bootstrap manifest of kube-proxy (internal/app/machined/pkg/controllers/k8s/manifest.go). */
export const KUBE_PROXY_MANIFEST_ID = "10-kube-proxy";
/** Annotation Talos puts on its static pods: the version of the component's config resource they run (constants.go). */
export const STATIC_POD_CONFIG_VERSION_ANNOTATION = "talos.dev/config-version";

// ---------------------------------------------------------------- PURE: versions and images

const K8S_VERSION = /^v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$/;
/** The kubelet image variants Talos keeps across an upgrade (kubelet.go extractKubeletVersionSuffix). */
const KUBELET_SUFFIXES = ["-fat", "-slim"] as const;

/** "1.36.1" or "v1.36.1" → "v1.36.1"; throws a CONFIG TalosError for anything else. */
export function normalizeKubernetesVersion(version: string): string {
  const m = K8S_VERSION.exec(version.trim());
  if (!m) throw new TalosError("CONFIG", msg.badKubernetesVersion(version));
  return `v${m[1]}.${m[2]}.${m[3]}${m[4] ?? ""}`;
}

/**
 * The Kubernetes version an image's tag names ("registry.k8s.io/kube-apiserver:v1.36.1" → "v1.36.1"; a kubelet
 * variant's suffix dropped), or undefined (no tag, a digest only, not a version), as pkg/kubernetes VersionFromImageRef.
 */
export function kubernetesVersionOfImage(image: string): string | undefined {
  let tag: string | undefined;
  try {
    tag = parseImageRef(image).tag;
  } catch {
    return undefined;
  }
  if (!tag) return undefined;
  const bare = KUBELET_SUFFIXES.reduce((t, s) => (t.endsWith(s) ? t.slice(0, -s.length) : t), tag);
  const m = K8S_VERSION.exec(bare);
  return m ? `v${m[1]}.${m[2]}.${m[3]}${m[4] ?? ""}` : undefined;
}

/** The images Talos uses by default for a Kubernetes version (registry.k8s.io/kube-apiserver:v1.36.1 …, ghcr.io/siderolabs/kubelet:v1.36.1). */
export function defaultKubernetesImages(version: string): Required<KubernetesImages> {
  const v = normalizeKubernetesVersion(version);
  const out = {} as Required<KubernetesImages>;
  for (const key of KUBERNETES_IMAGE_KEYS) out[key] = `${DEFAULT_IMAGE_REPOSITORIES[key]}:${v}`;
  return out;
}

/**
 * The images of `version` for a node that runs `current`: each component stays in its repository (a mirror or a
 * custom build stays where it is; a component without an image in the configuration gets Talos' default repository),
 * and the kubelet keeps its variant (`-fat`/`-slim`), as upgrade-k8s does (kubelet.go upgradeKubeletPatcher).
 */
export function targetKubernetesImages(current: KubernetesImages, version: string): Required<KubernetesImages> {
  const v = normalizeKubernetesVersion(version);
  const out = {} as Required<KubernetesImages>;
  for (const key of KUBERNETES_IMAGE_KEYS) {
    const image = current[key];
    const ref = image ? parseImageRef(image) : undefined;
    const suffix = key === "kubelet" && ref?.tag ? KUBELET_SUFFIXES.find((s) => ref.tag!.endsWith(s)) ?? "" : "";
    out[key] = `${ref?.repository ?? DEFAULT_IMAGE_REPOSITORIES[key]}:${v}${suffix}`;
  }
  return out;
}

// ---------------------------------------------------------------- PURE: the machine configuration (multi-document YAML)

/** The machine configuration's documents; throws naming `where` and the YAML error's code and line, never the text. */
function parseConfig(yaml: string, where: string): Document.Parsed[] {
  const docs = parseAllDocuments(yaml, { prettyErrors: false });
  // parseAllDocuments returns an EmptyStream (no documents) for an empty text
  const list = Array.isArray(docs) ? docs : [];
  for (const d of list) {
    const e = d.errors[0];
    // the YAML library's message quotes the source line: only its code and position may leave here
    if (e) throw new TalosError("CONFIG", msg.machineConfigNotYaml(where, e.code, e.linePos?.[0].line));
  }
  return list;
}

/** The v1alpha1 document: `version: v1alpha1` at the top, no `kind` (Talos' configloader). */
function isV1alpha1(d: Document.Parsed): boolean {
  return isMap(d.contents) && d.get("version") === "v1alpha1" && !d.has("kind");
}

const kindOf = (d: Document.Parsed): string | undefined => {
  const k = isMap(d.contents) ? d.get("kind") : undefined;
  return typeof k === "string" ? k : undefined;
};

/** The document and path an image is set in: the component's own document when there is one, else v1alpha1. */
function imageSite(docs: Document.Parsed[], key: KubernetesImageKey, where: string): { doc: Document.Parsed; path: readonly string[] } {
  const f = IMAGE_FIELDS[key];
  const own = docs.find((d) => kindOf(d) === f.kind);
  if (own) return { doc: own, path: ["image"] };
  const v1 = docs.find(isV1alpha1);
  if (!v1) throw new TalosError("CONFIG", msg.machineConfigNoV1alpha1(where));
  return { doc: v1, path: f.path };
}

/**
 * Sets a scalar at `path`, making the mappings on the way (an empty `kubelet:` is null in YAML); an existing scalar
 * keeps its node, so its comment and style stay.
 */
function setField(doc: Document.Parsed, path: readonly string[], value: string, where: string): void {
  let map: unknown = doc.contents;
  for (const [i, key] of path.slice(0, -1).entries()) {
    if (!isMap(map)) break;
    let next: unknown = map.get(key, true);
    if (!isMap(next)) {
      if (next !== undefined && !(isScalar(next) && next.value === null)) {
        throw new TalosError("CONFIG", msg.machineConfigNotMapping(where, path.slice(0, i + 1).join(".")));
      }
      next = doc.createNode({});
      map.set(key, next);
    }
    map = next;
  }
  if (isMap(map)) map.set(path[path.length - 1], value);
}

/**
 * The images a machine configuration sets (undefined where it sets none: Talos then runs its default for its
 * Kubernetes version). `where` names the node or document in errors.
 */
export function kubernetesImagesOf(yaml: string, where = "machine configuration"): KubernetesImages {
  const docs = parseConfig(yaml, where);
  const out: KubernetesImages = {};
  for (const key of KUBERNETES_IMAGE_KEYS) {
    const { doc, path } = imageSite(docs, key, where);
    const v = doc.getIn(path);
    if (typeof v === "string" && v) out[key] = v;
  }
  return out;
}

/**
 * Sets the given images in a machine configuration and keeps everything else as it was: every other field, its
 * comments and styles, and every other document. Each image goes where Talos reads it: into the component's own
 * document (KubeAPIServerConfig …, Talos 1.14) when the configuration has one, else into the v1alpha1 document
 * (`cluster.apiServer.image` … `machine.kubelet.image`), as stdpatches.WithKube*Image do.
 */
export function patchKubernetesImages(yaml: string, images: KubernetesImages, where = "machine configuration"): string {
  const docs = parseConfig(yaml, where);
  for (const key of KUBERNETES_IMAGE_KEYS) {
    const image = images[key];
    if (image === undefined) continue;
    parseImageRef(image); // refuses what is not an image reference (CONFIG, naming the image only)
    const { doc, path } = imageSite(docs, key, where);
    setField(doc, path, image, where);
  }
  // no folding of long lines (certificates), no padding added inside flow collections the text did not have
  return docs.map((d) => d.toString({ lineWidth: 0, flowCollectionPadding: false })).join("");
}

// ---------------------------------------------------------------- PURE: what the node reports

/** One control-plane static pod as the node's kubelet reports it (StaticPodStatus). */
export interface StaticPod {
  component: StaticPodComponent;
  /** The resource id: "<pod namespace>/<pod name>", e.g. "kube-system/kube-apiserver-cp-1". */
  id: string;
  /** The image of the component's container as the kubelet reports it ("" before it was created). */
  image: string;
  /** Phase Running and condition Ready True (Talos' MachineStatus staticPodsCheck). */
  ready: boolean;
  phase: string;
}

interface PodStatusJson {
  phase?: string;
  conditions?: { type?: string; status?: string }[];
  containerStatuses?: { name?: string; image?: string }[];
}

/** A StaticPodStatus resource's pod status as a StaticPod; undefined for a static pod that is not a control-plane component. */
export function staticPodOf(id: string, podStatus: { [key: string]: Json }): StaticPod | undefined {
  const name = id.slice(id.indexOf("/") + 1);
  const component = STATIC_POD_COMPONENTS.find((c) => name.startsWith(`${c}-`));
  if (!component || !id.startsWith("kube-system/")) return undefined;
  const s = podStatus as PodStatusJson;
  const container = (s.containerStatuses ?? []).find((c) => c.name === component) ?? s.containerStatuses?.[0];
  const phase = s.phase ?? "";
  const readyCondition = (s.conditions ?? []).find((c) => c.type === "Ready");
  return { component, id, image: container?.image ?? "", ready: phase === "Running" && readyCondition?.status === "True", phase };
}

// ---------------------------------------------------------------- calls (bounded by the transport's deadlines)

/** The node's active machine configuration: the whole YAML text, every document. A secret: hand it only to `applyConfigurationNoReboot`. */
export async function readMachineConfig(client: TalosClient, node: string, opts?: CallOptions): Promise<string> {
  let bytes: Uint8Array | undefined;
  try {
    const r = await client.getResource(node, CONFIG_NAMESPACE, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID, opts);
    bytes = decodeSpec("MachineConfigSpec", r.protoSpec).yaml_marshalled;
  } catch (err) {
    // a node without the resource, or a role that may not read it (the resource is sensitive: os:admin only)
    if (err instanceof TalosError && err.code === "NOT_FOUND") throw new TalosError(err.code, msg.machineConfigMissing(node), node, err.grpcCode);
    if (err instanceof TalosError && err.code === "PERMISSION_DENIED") {
      throw new TalosError(err.code, msg.machineConfigUnreadable(node, err.detail ?? err.code), node, err.grpcCode);
    }
    throw err;
  }
  if (!bytes?.length) throw new TalosError("FAILED_PRECONDITION", msg.machineConfigEmpty(node), node);
  return Buffer.from(bytes).toString("utf8");
}

/** Keys whose values are the configuration's secrets (tokens, keys, certificates, encryption secrets, the cluster id). */
const SECRET_KEY = /token|secret|key|crt|cert|^ca$|ca$|password|encryption|^id$/i;
/** A value this long without whitespace is key or certificate material wherever it sits (inline manifests too). */
const LONG_OPAQUE = /^\S{40,}$/;

/** The secret values of a configuration, for scrubbing a server's message (a validation error may quote one). */
function secretValues(yaml: string): string[] {
  const out = new Set<string>();
  const walk = (v: unknown, secret: boolean): void => {
    if (typeof v === "string" || typeof v === "number") {
      const t = String(v);
      if (t.length >= 6 && (secret || LONG_OPAQUE.test(t))) out.add(t);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, secret);
    } else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) walk(x, secret || SECRET_KEY.test(k));
    }
  };
  try {
    for (const d of parseAllDocuments(yaml) as Document.Parsed[]) walk(d.toJS(), false);
  } catch {
    // not readable: nothing to scrub by value (redact() still removes PEM and base64 runs)
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** A server's message with every secret value of the configuration replaced. */
function scrub(detail: string, yaml: string): string {
  let out = detail;
  for (const v of secretValues(yaml)) out = out.split(v).join("[redacted]");
  return out;
}

/** Talos' refusal when another ApplyConfiguration holds the node's lock (v1alpha1_server.go): it passes by waiting. */
const APPLY_BUSY = /another apply configuration is already in progress/i;

/**
 * Applies a whole machine configuration to `node` without a reboot (ApplyConfiguration mode NO_REBOOT, as
 * patchNodeConfig does). Talos' refusals become a TalosError naming the node and what to do, with nothing of the
 * configuration in it; another apply running on the node is IN_PROGRESS (retryable).
 */
export async function applyConfigurationNoReboot(client: TalosClient, node: string, yaml: string, opts?: CallOptions): Promise<void> {
  // a text Talos would refuse (not YAML, no v1alpha1 document) is refused here, before it travels
  if (!parseConfig(yaml, `node ${node}`).some(isV1alpha1)) throw new TalosError("CONFIG", msg.machineConfigNoV1alpha1(`node ${node}`), node);
  let result;
  try {
    result = await client.applyConfiguration(node, { data: yaml, mode: APPLY_MODE.NO_REBOOT }, opts);
  } catch (err) {
    if (!(err instanceof TalosError)) throw err;
    const detail = scrub(err.detail ?? "", yaml);
    if (err.code === "FAILED_PRECONDITION" && APPLY_BUSY.test(detail)) {
      throw new TalosError("IN_PROGRESS", msg.applyBusy(node, detail), node, err.grpcCode, { detail });
    }
    if (err.code === "INVALID_ARGUMENT" || err.code === "FAILED_PRECONDITION" || err.code === "UNIMPLEMENTED" || err.code === "UNKNOWN" || err.code === "INTERNAL") {
      throw new TalosError(err.code, msg.applyRefused(node, err.code, detail || "no details"), node, err.grpcCode, { detail });
    }
    throw err.detail === undefined || detail === err.detail ? err
      : new TalosError(err.code, err.message.split(err.detail).join(detail), node, err.grpcCode, { detail, maybeProcessed: err.maybeProcessed, unsent: err.unsent });
  }
  if (result.mode !== APPLY_MODE.NO_REBOOT) {
    throw new TalosError("FAILED_PRECONDITION", msg.applyNotApplied(node, result.mode, scrub(result.modeDetails, yaml)), node);
  }
}

/** The control-plane static pods on `node` as its kubelet reports them (none on a worker). */
export async function staticPodVersions(client: TalosClient, node: string, opts?: CallOptions): Promise<StaticPod[]> {
  const list = await client.listResources(node, K8S_NAMESPACE, STATIC_POD_STATUS_TYPE, opts);
  const out: StaticPod[] = [];
  for (const r of list) {
    const pod = staticPodOf(r.id, fromStruct(decodeSpec("StaticPodStatusSpec", r.protoSpec).pod_status));
    if (pod) out.push(pod);
  }
  return out.sort((a, b) => STATIC_POD_COMPONENTS.indexOf(a.component) - STATIC_POD_COMPONENTS.indexOf(b.component));
}

/** The image the node's kubelet runs (KubeletSpec: what upgrade-k8s reads, since the configuration may set none). */
export async function kubeletSpecImage(client: TalosClient, node: string, opts?: CallOptions): Promise<string> {
  const r = await client.getResource(node, K8S_NAMESPACE, KUBELET_SPEC_TYPE, KUBELET_ID, opts);
  return String(decodeSpec("KubeletSpecSpec", r.protoSpec).image ?? "");
}

/** A Talos service's state (Services.v1alpha1.talos.dev); the kubelet's is what upgrade-k8s waits on after a patch. */
export interface ServiceState {
  running: boolean;
  healthy: boolean;
}

/**
 * The state of a Talos service on `node` (default the kubelet). A stopped service has no resource (Talos destroys it,
 * which upgrade-k8s waits for after patching the kubelet): that is `{ running: false, healthy: false }`.
 */
export async function serviceState(client: TalosClient, node: string, service = KUBELET_ID, opts?: CallOptions): Promise<ServiceState> {
  try {
    const r = await client.getResource(node, SERVICE_NAMESPACE, SERVICE_TYPE, service, opts);
    const s = decodeSpec("ServiceSpec", r.protoSpec);
    return { running: !!s.running, healthy: !!s.healthy };
  } catch (err) {
    if (err instanceof TalosError && err.code === "NOT_FOUND") return { running: false, healthy: false };
    throw err;
  }
}

/** One bootstrap manifest Talos rendered on a control plane: its id and the Kubernetes objects in it. */
export interface BootstrapManifest {
  id: string;
  objects: { [key: string]: Json }[];
}

/**
 * The bootstrap manifests a control plane renders from its machine configuration (COSI Manifests, namespace
 * "controlplane"); kube-proxy's DaemonSet is in `10-kube-proxy`. Talos only creates missing objects from them:
 * upgrade-k8s syncs them into the cluster (PerformManifestsSync) after patching `cluster.proxy.image`.
 */
export async function bootstrapManifests(client: TalosClient, node: string, opts?: CallOptions): Promise<BootstrapManifest[]> {
  const list = await client.listResources(node, CONTROLPLANE_NAMESPACE, MANIFEST_TYPE, opts);
  return list.map((r) => ({
    id: r.id,
    objects: ((decodeSpec("ManifestSpec", r.protoSpec).items ?? []) as { object?: unknown }[]).map((i) => fromStruct(i.object as never)),
  }));
}
