// The API server's version (`/version`), for the Cluster resource's kubernetesVersion output.
import * as k8s from "./k8s";

export async function kubernetesVersion(kubeconfigText: string): Promise<string> {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfigText);
  return (await kc.makeApiClient(k8s.VersionApi).getCode()).gitVersion;
}
