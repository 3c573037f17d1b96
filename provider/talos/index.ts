// The Talos port: `createTalosApi(talosconfigText, opts)` implements TalosApi (provider/rollout/ports.ts) on the
// real Talos machine API over gRPC with mTLS.
import type { TalosApi, UpgradeNodeOptions, UpgradeNodeResult } from "../rollout/ports";
import { TalosClient, TalosClientOptions } from "./client";
import { parseTalosconfig } from "./talosconfig";
import { upgradeNode, UpgradeTuning } from "./upgrade";

export { TalosClient } from "./client";
export type { CallOptions, EventStream, EventsRequest, LegacyUpgradeRequest, TalosClientOptions, TalosEvent, VersionInfo } from "./client";
export { classify, isRetryable, redact, TalosError } from "./errors";
export type { TalosErrorCode } from "./errors";
export { installerImage, parseImageRef, targetVersion, versionFromImage } from "./image";
export type { ImageRef, InstallerImageOptions } from "./image";
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
    close: () => client.close(),
  };
}
