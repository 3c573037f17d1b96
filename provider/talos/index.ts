// The Talos port: `createTalosApi(talosconfigText, opts)` implements TalosApi (provider/rollout/ports.ts) on the
// real Talos machine API over gRPC with mTLS.
import type { TalosApi, UpgradeNodeOptions, UpgradeNodeResult } from "../rollout/ports";
import { TalosClient, TalosClientOptions } from "./client";
import { readEtcdHealth } from "./etcd";
import { readImageFacts } from "./facts";
import { parseTalosconfig } from "./talosconfig";
import { reinstall, upgradeNode, UpgradeTuning } from "./upgrade";

export { DEFAULT_CHANNEL_OPTIONS, TalosClient } from "./client";
export { APPLY_MODE } from "./client";
export type {
  ApplyConfigurationMode, ApplyConfigurationRequest, ApplyConfigurationResult, CallOptions, EtcdMemberInfo, EtcdMemberStatusInfo, EventStream, EventsRequest, LegacyUpgradeRequest, TalosClientOptions, TalosEvent,
  TalosResource, VersionInfo,
} from "./client";
export { classify, isRetryable, isTransientRefusal, redact, TalosError } from "./errors";
export type { TalosErrorCode } from "./errors";
export { etcdHealthOf, etcdVerdict } from "./etcd";
export { installerImage, nodeInstallerImage, parseImageRef, targetVersion, versionFromImage } from "./image";
export type { ImageRef, InstallerChoice, InstallerImageOptions } from "./image";
export {
  applyConfigurationNoReboot, bootstrapManifests, defaultKubernetesImages, DEFAULT_IMAGE_REPOSITORIES, imageField, KUBE_PROXY_MANIFEST_ID,
  kubeletSpecImage, KUBERNETES_IMAGE_KEYS, kubernetesImagesOf, kubernetesVersionOfImage, normalizeKubernetesVersion, patchKubernetesImages,
  readMachineConfig, serviceState, STATIC_POD_COMPONENTS, STATIC_POD_CONFIG_VERSION_ANNOTATION, STATIC_POD_OF, staticPodOf, staticPodVersions,
  targetKubernetesImages,
} from "./kubernetes";
export type { BootstrapManifest, KubernetesImageKey, KubernetesImages, ServiceState, StaticPod, StaticPodComponent } from "./kubernetes";
export { normalizeTalosKey, parseEndpoint, parseTalosconfig } from "./talosconfig";
export type { Endpoint, TalosConfig } from "./talosconfig";
export { supportsLifecycleApi, needsStagedUpgrade } from "./version";

export interface TalosApiOptions extends TalosClientOptions, UpgradeTuning {
  /** Context to use instead of the talosconfig's `context`. */
  context?: string;
}

export interface TalosApiImpl extends TalosApi {
  /** The underlying client, for the RPCs the port does not expose (events, reboot, ...). */
  readonly client: TalosClient;
}

export function createTalosApi(talosconfigText: string, opts: TalosApiOptions = {}): TalosApiImpl {
  const client = new TalosClient(parseTalosconfig(talosconfigText, opts.context), opts);
  return {
    client,
    async version(node: string, o?: { signal?: AbortSignal }) {
      return (await client.version(node, o)).tag;
    },
    bootId: (node: string, o?: { signal?: AbortSignal }) => client.bootId(node, o),
    upgradeNode: (node: string, o: UpgradeNodeOptions): Promise<UpgradeNodeResult> => upgradeNode(client, node, o, opts),
    reinstall: (node: string, o: { image: string; timeoutMs: number; signal?: AbortSignal }) => reinstall(client, node, o),
    imageFacts: (node: string, o?: { signal?: AbortSignal }) => readImageFacts(client, node, { ...o, timeoutMs: opts.probeTimeoutMs ?? 5000 }),
    etcdHealth: (cpNode: string, o?: { signal?: AbortSignal }) => readEtcdHealth(client, cpNode, { ...o, timeoutMs: opts.probeTimeoutMs ?? 5000 }),
    async forfeitLeadership(node: string, o?: { signal?: AbortSignal }) {
      return client.etcdForfeitLeadership(node, { ...o, timeoutMs: 60_000 });
    },
    close: () => client.close(),
  };
}
