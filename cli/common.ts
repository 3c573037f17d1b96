// What `talos-gate plan` and `talos-gate status` share: option parsing (node:util parseArgs), the kubeconfig
// (as kubectl finds it), and the mirrored upgrade statuses (ConfigMaps kube-system/talos-gate-status-*,
// written by the rollout through the Kubernetes port).
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import type * as k8s from "../provider/kube/k8s";
import { apiMessage, isNotFound } from "../provider/kube/errors";
import { CLUSTER_LABEL, LEGACY_STATUS_KEY, STATUS_KEY, statusConfigMapName, SYSTEM_NAMESPACE } from "../provider/kube/labels";
import { decodeStatus } from "../provider/kube/status";
import { KUBERNETES_STATUS_SUFFIX } from "../provider/rollout/status";
import { loadKubeconfig } from "./kubeconfig";
import { CliError, cliMsg } from "./messages";

/**
 * Runs a subcommand body: a CliError is printed the way cli/main.ts prints user-facing errors
 * (`talos-gate <cmd>: <message>`) and becomes the exit code (1, or 2 for usage errors); anything else propagates.
 */
export async function withCliErrors(cmd: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    process.stderr.write(`talos-gate ${cmd}: ${err.message}\n`);
    return err.exitCode;
  }
}

/** Parses `argv` strictly; unknown options and missing values are usage errors (exit 2). */
export function parseOptions<T extends NonNullable<ParseArgsConfig["options"]>>(cmd: string, argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false });
  } catch (err) {
    const e = err as Error & { code?: string };
    const opt = /'([^']+)'/.exec(e.message)?.[1] ?? e.message;
    if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw new CliError(cliMsg.unknownOption(cmd, opt.split(/\s/)[0]), 2);
    if (e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") throw new CliError(cliMsg.missingValue(opt.split(/[\s,]/)[0]), 2);
    if (e.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") throw new CliError(cliMsg.unexpectedArgument(cmd, opt), 2);
    throw new CliError(e.message, 2);
  }
}

/**
 * Text written by whoever may write in the cluster (the status ConfigMap, a Lease holder), made safe for a terminal:
 * escape sequences (which can retitle a window, rewrite the screen or hide lines) and other control characters
 * removed; newlines and tabs kept.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, "");
}

/** A file named by a flag or an environment variable; a `:`-separated list uses its first entry. */
function fileFrom(flag: string | undefined, env: string | undefined): string | undefined {
  if (flag !== undefined && flag !== "") return flag;
  const first = (env ?? "").split(path.delimiter).find((p) => p !== "");
  return first;
}

/** The kubeconfig as kubectl finds it (cli/kubeconfig.ts: --kubeconfig, else $KUBECONFIG's files merged, else ~/.kube/config). */
export function readKubeconfig(flag: string | undefined): { file: string; text: string } {
  return loadKubeconfig(flag);
}

export function readTalosconfig(flag: string | undefined): { file: string; text: string } | undefined {
  const file = fileFrom(flag, process.env.TALOSCONFIG);
  if (!file) return undefined;
  try {
    return { file, text: fs.readFileSync(file, "utf8") };
  } catch (err) {
    throw new CliError(cliMsg.talosconfigUnreadable(file, (err as Error).message.replace(/^[A-Z]+: /, "")));
  }
}

/** A core/v1 client on the kubeconfig (the CLI reads ConfigMap metadata the port does not expose). */
export function coreApi(kubeconfigText: string): k8s.CoreV1Api {
  const k = require("../provider/kube/k8s") as typeof k8s;
  const kc = new k.KubeConfig();
  try {
    kc.loadFromString(kubeconfigText);
  } catch (err) {
    throw new CliError(cliMsg.kubeconfigInvalid((err as Error).message.split("\n")[0]));
  }
  return kc.makeApiClient(k.CoreV1Api);
}

/** The clusters that have a mirrored status, by name. */
export async function mirroredClusters(core: k8s.CoreV1Api): Promise<string[]> {
  try {
    const list = await core.listNamespacedConfigMap({ namespace: SYSTEM_NAMESPACE, labelSelector: CLUSTER_LABEL });
    return list.items
      .filter((cm) => cm.metadata?.name?.startsWith(statusConfigMapName("")) && (cm.data?.[STATUS_KEY] ?? cm.data?.[LEGACY_STATUS_KEY]) !== undefined)
      .map((cm) => cm.metadata!.labels![CLUSTER_LABEL]!)
      .sort();
  } catch (err) {
    throw new CliError(cliMsg.listStatusesFailed(apiMessage(err)));
  }
}

/** --cluster, else the only cluster with a mirrored status; undefined when there is none (and none was named). */
export async function resolveCluster(core: k8s.CoreV1Api, flag: string | undefined): Promise<string | undefined> {
  if (flag) return flag;
  const clusters = await mirroredClusters(core);
  if (clusters.length > 1) {
    const kinds = clusters.map((name) => ({ name, kind: name.endsWith(KUBERNETES_STATUS_SUFFIX) ? "KubernetesUpgrade" as const : "TalosUpgrade" as const }));
    throw new CliError(cliMsg.clusterRequired(kinds));
  }
  return clusters[0];
}

export interface MirroredStatus {
  cluster: string;
  /** The ConfigMap holding it (name, resourceVersion, creation time, updated-at annotation). */
  configMap: k8s.V1ConfigMap;
  /** The rollout's UpgradeStatus as written (provider/rollout/status.ts). */
  status: Record<string, any>;
}

/** The mirrored status of `cluster`, or undefined if no rollout has written one yet. */
export async function readMirroredStatus(core: k8s.CoreV1Api, cluster: string): Promise<MirroredStatus | undefined> {
  let cm: k8s.V1ConfigMap;
  try {
    cm = await core.readNamespacedConfigMap({ name: statusConfigMapName(cluster), namespace: SYSTEM_NAMESPACE });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new CliError(cliMsg.readStatusFailed(cluster, `${SYSTEM_NAMESPACE}/${statusConfigMapName(cluster)}`, apiMessage(err)));
  }
  return mirroredFrom(cm, cluster);
}

/** The mirrored status a ConfigMap holds (undefined if none); a CliError when it does not parse. */
export function mirroredFrom(cm: k8s.V1ConfigMap, cluster: string): MirroredStatus | undefined {
  let status: unknown;
  try {
    status = decodeStatus(cm);
    if (status === undefined) return undefined;
  } catch (err) {
    throw new CliError(cliMsg.statusUnreadable(cluster, (err as Error).message.split("\n")[0]));
  }
  if (typeof status !== "object" || status === null) throw new CliError(cliMsg.statusUnreadable(cluster, "not a status object"));
  return { cluster, configMap: cm, status: status as Record<string, any> };
}

