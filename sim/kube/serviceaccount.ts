// The pod's service-account volume as the kubelet sets it up: the ServiceAccount admission plugin adds a projected
// volume (kube-api-access-*) with a serviceAccountToken source, the kube-root-ca.crt ConfigMap's ca.crt and the pod's
// namespace; the kubelet requests the token from the API server (TokenRequest bound to the pod, so it dies with the
// pod), writes the files, and refreshes the token at 80 % of its lifetime (at least daily).
//
// Substitution: a local process cannot read /var/run/secrets/kubernetes.io/serviceaccount, and kubectl's in-cluster
// config only looks there, so the emulator writes the volume to a per-pod directory (env SERVICE_ACCOUNT_DIR) and a
// kubeconfig built from it (env KUBECONFIG): the API server address of KUBERNETES_SERVICE_HOST/PORT, the volume's
// CA and the pod's token. A pod that mounts no token (automountServiceAccountToken: false) gets a kubeconfig without
// credentials, i.e. the anonymous user.
import { writePrivateFile } from "../files";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeconfigYaml } from "../kubeconfig";
import { KubeError, Rest, isNotFound } from "./rest";
import { Pod } from "./types";

/** A volume the kubelet cannot set up yet (missing ConfigMap or ServiceAccount): the pod stays ContainerCreating. */
export class MountError extends Error {}

interface Projection {
  volume: string;
  sources: any[];
}

/** The projected volume with a serviceAccountToken source the container mounts, if any. */
function tokenVolume(pod: Pod, container: any): Projection | undefined {
  const mounted = new Set<string>((container?.volumeMounts ?? []).map((m: { name: string }) => m.name));
  for (const v of pod.spec?.volumes ?? []) {
    const sources: any[] = v.projected?.sources ?? [];
    if (mounted.has(v.name) && sources.some((s) => s.serviceAccountToken)) return { volume: v.name, sources };
  }
  return undefined;
}

export interface ServiceAccountMount {
  /** The volume's directory (token, ca.crt, namespace), or undefined when the container mounts no token. */
  dir?: string;
  kubeconfigPath: string;
  /** Stops refreshing the token. */
  close(): void;
}

interface TokenAnswer {
  status: { token: string; expirationTimestamp: string };
}

async function requestToken(rest: Rest, pod: Pod, source: any): Promise<TokenAnswer["status"]> {
  const ns = pod.metadata.namespace!;
  const sa = pod.spec?.serviceAccountName || "default";
  try {
    const answer = await rest.post<TokenAnswer>(`/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: {
        ...(source.audience ? { audiences: [source.audience] } : {}),
        expirationSeconds: source.expirationSeconds ?? 3600,
        boundObjectRef: { apiVersion: "v1", kind: "Pod", name: pod.metadata.name, uid: pod.metadata.uid },
      },
    });
    return answer.status;
  } catch (err) {
    if (isNotFound(err) || (err instanceof KubeError && err.code === 403)) {
      throw new MountError(`MountVolume.SetUp failed for volume "${source.__volume}" : failed to fetch token: ${(err as Error).message.replace(/^POST \S+: \d+ /, "")}`);
    }
    throw err;
  }
}

function fieldValue(pod: Pod, fieldPath: string): string {
  if (fieldPath === "metadata.namespace") return pod.metadata.namespace ?? "";
  if (fieldPath === "metadata.name") return pod.metadata.name;
  if (fieldPath === "metadata.uid") return pod.metadata.uid;
  return "";
}

/** Sets up the service-account volume and kubeconfig of `container` in `podDir`; MountError while it cannot yet. */
export async function mountServiceAccount(
  rest: Rest, pod: Pod, container: any, podDir: string, log: (m: string) => void,
): Promise<ServiceAccountMount> {
  const kubeconfigPath = path.join(podDir, "kubeconfig");
  const projection = tokenVolume(pod, container);
  const ns = pod.metadata.namespace ?? "default";
  if (!projection) {
    writePrivateFile(kubeconfigPath, kubeconfigYaml({ server: rest.server, caData: "", user: "anonymous", credentials: {}, namespace: ns }));
    return { kubeconfigPath, close: () => undefined };
  }
  const dir = path.join(podDir, "serviceaccount");
  fs.mkdirSync(dir, { recursive: true });
  const files = new Map<string, string>();
  let tokenSource: any;
  let tokenPath = "token";
  for (const s of projection.sources) {
    if (s.serviceAccountToken) {
      tokenSource = { ...s.serviceAccountToken, __volume: projection.volume };
      tokenPath = s.serviceAccountToken.path ?? "token";
    } else if (s.configMap) {
      let cm: any;
      try {
        cm = await rest.get(`/api/v1/namespaces/${ns}/configmaps/${s.configMap.name}`);
      } catch (err) {
        if (isNotFound(err) && !s.configMap.optional) {
          throw new MountError(`MountVolume.SetUp failed for volume "${projection.volume}" : configmap "${s.configMap.name}" not found`);
        }
        if (!isNotFound(err)) throw err;
        continue;
      }
      const items: { key: string; path: string }[] = s.configMap.items ?? Object.keys(cm.data ?? {}).map((k) => ({ key: k, path: k }));
      for (const it of items) if (cm.data?.[it.key] !== undefined) files.set(it.path, cm.data[it.key]);
    } else if (s.downwardAPI) {
      for (const it of s.downwardAPI.items ?? []) if (it.fieldRef) files.set(it.path, fieldValue(pod, it.fieldRef.fieldPath));
    }
  }
  for (const [p, text] of files) fs.writeFileSync(path.join(dir, p), text, { mode: 0o644 });
  const caData = files.has("ca.crt") ? Buffer.from(files.get("ca.crt")!).toString("base64") : "";
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const write = (token: string) => {
    writePrivateFile(path.join(dir, tokenPath), token);
    const user = `system:serviceaccount:${ns}:${pod.spec?.serviceAccountName || "default"}`;
    writePrivateFile(kubeconfigPath, kubeconfigYaml({ server: rest.server, caData, user, credentials: { token }, namespace: ns }));
  };
  const refreshAfter = (expires: string) => {
    const ttl = Date.parse(expires) - Date.now();
    const wait = Math.max(1000, Math.min(ttl * 0.8, 24 * 3600 * 1000));
    timer = setTimeout(() => {
      if (closed) return;
      requestToken(rest, pod, tokenSource).then((st) => {
        if (closed) return;
        write(st.token);
        refreshAfter(st.expirationTimestamp);
      }, (err) => {
        log(`kubelet: refreshing the token of pod ${ns}/${pod.metadata.name}: ${(err as Error).message}`);
        if (!closed) refreshAfter(new Date(Date.now() + 12_500).toISOString());
      });
    }, wait);
    timer.unref();
  };
  if (tokenSource) {
    const st = await requestToken(rest, pod, tokenSource);
    write(st.token);
    refreshAfter(st.expirationTimestamp);
  }
  return {
    dir,
    kubeconfigPath,
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
    },
  };
}
