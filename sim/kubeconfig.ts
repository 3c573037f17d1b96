// Kubeconfig files of the sim: one per identity (admin, kube-controller-manager, kube-scheduler, and each pod's
// service account), written with the `yaml` library in the shape kubectl and client-go read.
import * as YAML from "yaml";

/** Client-certificate credentials (base64 PEM), a bearer token, or none (the anonymous user). */
export type KubeCredentials = { clientCertificateData: string; clientKeyData: string } | { token: string } | Record<string, never>;

export interface KubeconfigSpec {
  server: string;
  /** base64 of the CA bundle that signed the API server's serving certificate ("" = none: TLS verification fails). */
  caData: string;
  /** The user entry's name (shown by `kubectl config view`). */
  user: string;
  credentials: KubeCredentials;
  /** Default namespace of the context (a pod's own namespace, as in-cluster config does). */
  namespace?: string;
}

export function kubeconfigYaml(spec: KubeconfigSpec): string {
  const c = spec.credentials;
  const user = "token" in c ? { token: c.token }
    : "clientCertificateData" in c ? { "client-certificate-data": c.clientCertificateData, "client-key-data": c.clientKeyData }
    : {};
  return YAML.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "talos-gate-sim", cluster: { server: spec.server, ...(spec.caData ? { "certificate-authority-data": spec.caData } : {}) } }],
    users: [{ name: spec.user, user }],
    contexts: [{ name: "talos-gate-sim", context: { cluster: "talos-gate-sim", user: spec.user, ...(spec.namespace ? { namespace: spec.namespace } : {}) } }],
    "current-context": "talos-gate-sim",
  });
}
