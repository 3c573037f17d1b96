// A simulated cluster per test file, plus small helpers tests use against it.
import * as k8s from "@kubernetes/client-node";
import { SimCluster, SimClusterOptions, startSimCluster } from "../../sim/cluster";
import { freshControlPlane } from "./controlPlanes";
import { onFileEnd } from "./fixtures";

export async function testSim(opts: SimClusterOptions = {}): Promise<SimCluster> {
  const sim = await startSimCluster({ bootSeconds: 1, workloadPodsPerNode: 1, pullMs: 50, installMs: 50, controlPlane: freshControlPlane(), ...opts });
  onFileEnd(() => sim.stop());
  return sim;
}

export function coreApi(sim: SimCluster): k8s.CoreV1Api {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  return kc.makeApiClient(k8s.CoreV1Api);
}

/** The ConfigMap a demo gate reads: `open` = "true" lets the check pass. */
export async function setGate(sim: SimCluster, open: boolean, name = "talos-gate-demo", namespace = "default"): Promise<void> {
  const core = coreApi(sim);
  const body = { metadata: { name, namespace }, data: { open: String(open) } };
  try {
    await core.replaceNamespacedConfigMap({ name, namespace, body });
  } catch {
    await core.createNamespacedConfigMap({ namespace, body });
  }
}

/** The ServiceAccount gate checks run as. */
export const GATE_SA = "talos-gate-gate";

/**
 * The gate check's RBAC as a Cluster's supporting manifest (what a user ships with the check): its ServiceAccount,
 * a Role that may get the gate ConfigMap, and the binding.
 */
export function gateRbac(name = "talos-gate-demo", namespace = "default") {
  const meta = { name: GATE_SA, namespace };
  return {
    name: "gate-rbac",
    mode: "full" as const,
    inline: [
      { apiVersion: "v1", kind: "ServiceAccount", metadata: meta },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: meta, rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: [name], verbs: ["get"] }] },
      {
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: meta,
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: GATE_SA },
        subjects: [{ kind: "ServiceAccount", ...meta }],
      },
    ],
  };
}

/** A gate check: fails with a stderr message until the ConfigMap says open. Runs as GATE_SA (see gateRbac). */
export function gateJob(name = "talos-gate-demo", namespace = "default"): string {
  return `apiVersion: batch/v1
kind: Job
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      serviceAccountName: ${GATE_SA}
      containers:
        - name: check
          image: bitnami/kubectl
          command:
            - sh
            - -c
            - |
              open=$(kubectl -n ${namespace} get configmap ${name} -o jsonpath='{.data.open}')
              if [ "$open" != "true" ]; then
                echo "gate is closed: configmap ${namespace}/${name} has open=\${open:-<unset>}" >&2
                exit 1
              fi
`;
}

/** Runner Jobs and pods left in the cluster (label of talos-gate runner Jobs and job-name prefix of their pods). */
export async function leftoverRunners(sim: SimCluster): Promise<string[]> {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  const jobs = await kc.makeApiClient(k8s.BatchV1Api).listJobForAllNamespaces({ labelSelector: "app.kubernetes.io/name=talos-gate-healthcheck" });
  const pods = await kc.makeApiClient(k8s.CoreV1Api).listPodForAllNamespaces({ labelSelector: "batch.kubernetes.io/job-name" });
  return [
    ...jobs.items.map((j) => `job ${j.metadata?.namespace}/${j.metadata?.name}`),
    ...pods.items.filter((p) => p.metadata?.labels?.["batch.kubernetes.io/job-name"]?.startsWith("talos-gate-"))
      .map((p) => `pod ${p.metadata?.namespace}/${p.metadata?.name}`),
  ];
}

/** Counts the boots of each simulated Talos node from now on (an upgrade is one boot). */
export function countBoots(sim: SimCluster): Map<string, number> {
  const boots = new Map<string, number>();
  sim.talos.on("up", (node) => boots.set(node.name, (boots.get(node.name) ?? 0) + 1));
  return boots;
}

/** The Talos version each Kubernetes Node reports, by node name (what a user sees with `kubectl get nodes`). */
export async function nodeVersions(sim: SimCluster): Promise<Record<string, string | undefined>> {
  const { createKubeApi } = require("../../provider/kube") as typeof import("../../provider/kube");
  const kube = createKubeApi(sim.kubeconfig);
  try {
    return Object.fromEntries((await kube.listMachines()).map((m) => [m.name, m.talosVersion]));
  } finally {
    await kube.close();
  }
}

/**
 * Where credential material of the sim's kubeconfig or talosconfig (client keys and certificates, base64) appears in
 * `texts` (name → text): the names of the texts that hold any, for asserting that none does.
 */
export function credentialLeaks(sim: SimCluster, texts: Record<string, string>): string[] {
  const marks = [
    /client-key-data: (\S+)/.exec(sim.kubeconfig)?.[1],
    /client-certificate-data: (\S+)/.exec(sim.kubeconfig)?.[1],
    /\bkey: (\S+)/.exec(sim.talosconfig)?.[1],
    /\bcrt: (\S+)/.exec(sim.talosconfig)?.[1],
  ].map((m) => m?.slice(0, 40)).filter((m): m is string => !!m && m.length === 40);
  if (marks.length !== 4) throw new Error("the sim's kubeconfig or talosconfig has no key or certificate to look for");
  return Object.entries(texts)
    .filter(([, text]) => text.includes("BEGIN") || marks.some((m) => text.includes(m)))
    .map(([name]) => name);
}
