// One real kube-apiserver + etcd for the whole test run (envtest-style), started on first use, stopped at the end.
import * as k8s from "@kubernetes/client-node";
import { ControlPlane, startControlPlane } from "../../sim/controlplane";
import { onSuiteEnd } from "./fixtures";

let shared: Promise<ControlPlane> | undefined;

export function testControlPlane(): Promise<ControlPlane> {
  if (!shared) {
    shared = startControlPlane().then((cp) => {
      onSuiteEnd(() => cp.stop());
      return cp;
    });
  }
  return shared;
}

export function kubeConfigOf(cp: ControlPlane): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(cp.kubeconfig);
  return kc;
}

let nsCounter = 0;
/** A fresh namespace per test (namespaces never finish deleting without controllers, so names are unique). */
export async function freshNamespace(cp: ControlPlane, prefix = "t"): Promise<string> {
  const name = `${prefix}-${process.pid}-${Date.now().toString(36)}-${nsCounter++}`;
  await kubeConfigOf(cp).makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name } } });
  return name;
}
