// The Kubernetes side of one simulated Talos node, as machined keeps it: the node's machine configuration (replaced by
// MachineService.ApplyConfiguration), the control-plane static pods Talos renders from it (their images, and their
// kubelet-reported status, COSI StaticPodStatus), the kubelet service and its spec, and kube-proxy's bootstrap
// manifest. A changed apiServer/controllerManager/scheduler image restarts that static pod (not ready with the new
// image for `staticPodRestartMs`, then ready); a changed `machine.kubelet.image` restarts the kubelet (its service is
// gone for `kubeletRestartMs`, then it reports the image's version). The sim's Kubernetes side mirrors both
// (sim/kube/staticpods.ts, the Node's kubeletVersion) through the host callbacks.
//
// Talos' behaviour followed (siderolabs/talos v1.14.0-beta.1-84 ad88231): ApplyConfiguration's checks and replies
// (internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go), StaticPodStatus ids "<ns>/<pod>" in namespace
// "k8s" (internal/app/machined/pkg/controllers/k8s/kubelet_static_pod.go), where each image is read
// (pkg/machinery/config/generate/stdpatches: the Talos 1.14 KubeAPIServerConfig… documents over v1alpha1).
import { status as Status } from "@grpc/grpc-js";
import { parseAllDocuments, stringify } from "yaml";
import {
  defaultKubernetesImages, KUBERNETES_IMAGE_KEYS, kubernetesImagesOf, kubernetesVersionOfImage, STATIC_POD_COMPONENTS, STATIC_POD_OF,
  type KubernetesImages, type StaticPodComponent,
} from "../../provider/talos/kubernetes";
import { RpcError } from "./rpcerror";

/** A stand-in for the cluster's secrets in the simulated machine config: none of it may leave the provider. */
export const SIM_CONFIG_SECRET = "sim-machine-secret-do-not-leak";
/** The Kubernetes version a simulated node starts on unless told otherwise (sim/kube's DEFAULT_KUBELET_VERSION). */
export const SIM_DEFAULT_KUBERNETES_VERSION = "v1.34.1";

/** ApplyConfigurationRequest.Mode (api/machine/machine.proto). */
const MODE = { REBOOT: 0, AUTO: 1, NO_REBOOT: 2, STAGED: 3, TRY: 4 } as const;
const MODE_NAMES = ["REBOOT", "AUTO", "NO_REBOOT", "STAGED", "TRY"];
/** constants.ConfigTryTimeout */
const TRY_TIMEOUT_MS = 60_000;

/** One static pod's state as the node's kubelet reports it. */
export interface SimStaticPod {
  component: StaticPodComponent;
  image: string;
  ready: boolean;
  /** Talos' config version of the component (the static pod's `talos.dev/config-version` annotation). */
  configVersion: string;
  /** When the running container started (epoch ms). */
  startedAt: number;
  restartCount: number;
}

export interface SimKubeletState {
  image: string;
  /** The kubelet's version (its image tag). */
  version: string;
  /** False while it restarts (the Services resource is gone). */
  running: boolean;
}

/** What the node tells its cluster (the Kubernetes side mirrors it). */
export interface KubernetesHost {
  readonly timing: { staticPodRestartMs: number; kubeletRestartMs: number };
  staticPod(pod: SimStaticPod): void;
  kubelet(state: SimKubeletState): void;
}

/** Kubernetes fault knobs of a node (`sim.node("cp-1").faults`). */
export interface KubernetesFaults {
  /** A restarted static pod never becomes ready (`true`: any; or only these components). */
  staticPodNeverReady?: boolean | StaticPodComponent[];
  /** A restarted kubelet never comes back (its service stays stopped; the Node keeps its old kubeletVersion). */
  kubeletNeverReturns?: boolean;
  /** ApplyConfiguration is refused with this status (e.g. Talos' "another apply configuration is already in progress"). */
  rejectApply?: { code: Status; message: string };
}

export interface MachineConfigOwner {
  readonly name: string;
  readonly role: "controlplane" | "worker";
  readonly installImage: string;
  readonly up: boolean;
  readonly faults: KubernetesFaults;
  /** false: kube-proxy disabled in its config. */
  readonly kubeProxy?: boolean;
}

/** The machine configuration a simulated node starts with: v1alpha1 with the images of `version`, then a HostnameConfig. */
export function initialMachineConfig(node: MachineConfigOwner, version: string): string {
  const images = defaultKubernetesImages(version);
  const cluster: Record<string, unknown> = { secret: SIM_CONFIG_SECRET };
  if (node.role === "controlplane") {
    cluster.apiServer = { image: images.apiServer };
    cluster.controllerManager = { image: images.controllerManager };
    cluster.scheduler = { image: images.scheduler };
    cluster.proxy = node.kubeProxy === false ? { disabled: true, image: images.proxy } : { image: images.proxy };
  }
  return stringify({
    version: "v1alpha1",
    machine: { type: node.role, token: SIM_CONFIG_SECRET, install: { disk: "/dev/sda", image: node.installImage }, kubelet: { image: images.kubelet } },
    cluster,
  }) + "---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: " + node.name + "\n";
}

/**
 * Whether the configuration disables kube-proxy (`cluster.proxy.disabled`): Talos then renders no manifest of it
 * (siderolabs/talos internal/app/machined/pkg/controllers/k8s/manifest.go, `if cfg.ProxyEnabled`).
 */
export function proxyDisabledIn(config: string): boolean {
  return parseAllDocuments(config).some((d) => {
    const js = d.toJS() as { version?: string; cluster?: { proxy?: { disabled?: boolean } } } | null;
    return js?.version === "v1alpha1" && js.cluster?.proxy?.disabled === true;
  });
}

/** Talos' configloader: YAML documents, one of them v1alpha1 (its errors never quote the text). */
function loadConfig(text: string): void {
  const docs = parseAllDocuments(text, { prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [];
  const broken = list.find((d) => d.errors.length);
  if (broken) throw new RpcError(Status.INVALID_ARGUMENT, `failed to decode config: ${broken.errors[0].code}`);
  if (!list.some((d) => { const js = d.toJS(); return js && typeof js === "object" && js.version === "v1alpha1" && !("kind" in js); })) {
    throw new RpcError(Status.INVALID_ARGUMENT,
      "the applied machine configuration doesn't contain v1alpha1 config, did you mean to patch the machine config instead?");
  }
}

type PodEntry = SimStaticPod & { timer?: NodeJS.Timeout };
/** A static pod's state without its timer (what is reported). */
const snapshot = ({ timer: _t, ...p }: PodEntry): SimStaticPod => p;

export class NodeKubernetes {
  /** The active configuration; written on first use (a 1,000-node sim never renders most of them). */
  private text?: string;
  /** The COSI version of the MachineConfig resource: +1 per change. */
  private configResourceVersion = 1;
  private stagedText?: string;
  private tryTimer?: NodeJS.Timeout;
  private readonly pods = new Map<StaticPodComponent, PodEntry>();
  private kubeletState: SimKubeletState;
  private kubeletTimer?: NodeJS.Timeout;
  /** ApplyConfiguration calls this node received (whatever became of them). */
  applies = 0;

  constructor(private readonly node: MachineConfigOwner, private readonly version: string, private readonly host: KubernetesHost) {
    const images = defaultKubernetesImages(version); // what initialMachineConfig(node, version) sets
    this.kubeletState = { image: images.kubelet!, version: kubernetesVersionOfImage(images.kubelet!) ?? version, running: true };
    const now = Date.now();
    if (node.role === "controlplane") {
      for (const c of STATIC_POD_COMPONENTS) this.pods.set(c, { component: c, image: this.imageOf(images, c), ready: true, configVersion: "1", startedAt: now, restartCount: 0 });
    }
  }

  /** The active machine configuration (a secret). */
  get config(): string { return (this.text ??= initialMachineConfig(this.node, this.version)); }
  get configVersion(): number { return this.configResourceVersion; }
  /** A configuration applied in STAGED mode, active after the next reboot. */
  get staged(): string | undefined { return this.stagedText; }
  staticPods(): SimStaticPod[] { return [...this.pods.values()].map(snapshot); }
  get kubelet(): SimKubeletState { return { ...this.kubeletState }; }

  private images(text = this.config): KubernetesImages {
    return kubernetesImagesOf(text, `node ${this.node.name}`);
  }

  /** The image Talos runs for a component: the configuration's, else its default for the kubelet's version. */
  private imageOf(images: KubernetesImages, c: StaticPodComponent): string {
    const key = KUBERNETES_IMAGE_KEYS.find((k) => STATIC_POD_OF[k] === c)!;
    return images[key] ?? defaultKubernetesImages(this.kubeletState.version)[key];
  }

  /** MachineService.ApplyConfiguration (the server checked the role): Talos' checks, then the mode's effect. */
  apply(req: { data: Buffer | Uint8Array; mode: number; dry_run?: boolean; try_mode_timeout?: { seconds?: string | number; nanos?: number } | null }) {
    this.applies++;
    const reject = this.node.faults.rejectApply;
    if (reject) throw new RpcError(reject.code, reject.message);
    const text = Buffer.from(req.data ?? []).toString("utf8");
    loadConfig(text);
    let mode = req.mode;
    if (mode === MODE.REBOOT) throw new RpcError(Status.UNIMPLEMENTED, "the REBOOT mode is not supported, please use AUTO or NO_REBOOT modes instead");
    if (mode === MODE.AUTO) mode = MODE.NO_REBOOT;
    if (mode !== MODE.NO_REBOOT && mode !== MODE.STAGED && mode !== MODE.TRY) {
      throw new RpcError(Status.INVALID_ARGUMENT, `incorrect mode '${MODE_NAMES[mode] ?? mode}' specified for the apply config call`);
    }
    let details = mode === MODE.STAGED ? "Staged configuration to be applied after the next reboot" : "Applied configuration without a reboot";
    if (req.dry_run) return { messages: [{ mode, warnings: [], mode_details: `Dry run summary:\n${details} (skipped in dry-run).\n` }] };
    if (mode === MODE.STAGED) {
      this.stagedText = text;
    } else {
      clearTimeout(this.tryTimer);
      this.tryTimer = undefined;
      if (mode === MODE.TRY) {
        const ms = req.try_mode_timeout ? Number(req.try_mode_timeout.seconds ?? 0) * 1000 + Math.round((req.try_mode_timeout.nanos ?? 0) / 1e6) : TRY_TIMEOUT_MS;
        const previous = this.config;
        details += `\nThe config is applied in 'try' mode and will be automatically reverted back in ${ms / 1000}s`;
        this.tryTimer = setTimeout(() => { this.tryTimer = undefined; this.activate(previous); }, ms);
      }
      this.activate(text);
    }
    return { messages: [{ mode, warnings: [], mode_details: details }] };
  }

  /** The node booted: a staged configuration becomes active. */
  booted(): void {
    if (this.stagedText === undefined) return;
    const text = this.stagedText;
    this.stagedText = undefined;
    this.activate(text);
  }

  /** Makes `text` the active configuration and restarts what its images changed. */
  private activate(text: string): void {
    const before = this.images();
    const after = this.images(text);
    if (text !== this.config) this.configResourceVersion++;
    this.text = text;
    for (const pod of this.pods.values()) {
      const image = this.imageOf(after, pod.component);
      if (image !== this.imageOf(before, pod.component) || image !== pod.image) this.restartStaticPod(pod, image);
    }
    if (after.kubelet && after.kubelet !== before.kubelet && after.kubelet !== this.kubeletState.image) this.restartKubelet(after.kubelet);
  }

  private restartStaticPod(pod: PodEntry, image: string): void {
    clearTimeout(pod.timer);
    pod.image = image;
    pod.ready = false;
    pod.configVersion = String(Number(pod.configVersion) + 1);
    pod.startedAt = Date.now();
    pod.restartCount = 0; // a new pod (new UID), not a container restart
    this.host.staticPod(snapshot(pod));
    pod.timer = setTimeout(() => {
      pod.timer = undefined;
      const never = this.node.faults.staticPodNeverReady;
      if (never === true || (Array.isArray(never) && never.includes(pod.component))) return;
      pod.ready = true;
      this.host.staticPod(snapshot(pod));
    }, this.host.timing.staticPodRestartMs);
  }

  private restartKubelet(image: string): void {
    clearTimeout(this.kubeletTimer);
    this.kubeletState = { ...this.kubeletState, running: false };
    this.host.kubelet({ ...this.kubeletState });
    this.kubeletTimer = setTimeout(() => {
      this.kubeletTimer = undefined;
      if (this.node.faults.kubeletNeverReturns) return;
      this.kubeletState = { image, version: kubernetesVersionOfImage(image) ?? this.kubeletState.version, running: true };
      this.host.kubelet({ ...this.kubeletState });
    }, this.host.timing.kubeletRestartMs);
  }

  /** Whether a static pod is not ready or the kubelet is stopped (what `recover` ends). */
  held(): boolean {
    return [...this.pods.values()].some((p) => !p.ready) || !this.kubeletState.running;
  }

  /** Brings back what a fault holds (now, even mid-restart): static pods become ready, a stopped kubelet starts on its configured image. */
  recover(): void {
    for (const pod of this.pods.values()) {
      if (pod.ready) continue;
      clearTimeout(pod.timer);
      pod.timer = undefined;
      pod.ready = true;
      this.host.staticPod(snapshot(pod));
    }
    if (!this.kubeletState.running) {
      clearTimeout(this.kubeletTimer);
      this.kubeletTimer = undefined;
      const image = this.images().kubelet ?? this.kubeletState.image;
      this.kubeletState = { image, version: kubernetesVersionOfImage(image) ?? this.kubeletState.version, running: true };
      this.host.kubelet({ ...this.kubeletState });
    }
  }

  dispose(): void {
    clearTimeout(this.tryTimer);
    clearTimeout(this.kubeletTimer);
    for (const p of this.pods.values()) clearTimeout(p.timer);
  }
}
