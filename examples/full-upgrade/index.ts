// A full upgrade in one `pulumi up` (issue 24.4): Talos first, then Kubernetes, both behind the same Ceph gate. The
// KubernetesUpgrade runs after the TalosUpgrade (`after`, which is a dependsOn too): a Talos release supports a range of
// Kubernetes versions, and the two never run at once anyway (they share the cluster's Lease; the second would be
// refused, not queued).
//
// Preview checks both against the live cluster: the Talos path (Talos' upgrade rules), and for Kubernetes its skew
// policy (the control plane one minor at a time, kubelets never newer than the API server) and the range of the Talos
// the nodes will run by then (`after`'s version); the Kubernetes run checks that range again on the live nodes.
import * as pulumi from "@pulumi/pulumi";
import * as gate from "talos-gate";

const cfg = new pulumi.Config();

const cluster = new gate.Cluster("prod", {
  clusterName: cfg.get("clusterName") ?? "full-upgrade",
  kubeconfig: cfg.requireSecret("kubeconfig"),
  talosconfig: cfg.requireSecret("talosconfig"),
  manifests: [{
    name: "ceph-healthcheck-rbac",
    mode: "full",
    inline: [
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "omni-ceph-healthcheck", namespace: "rook-ceph" } },
      {
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role",
        metadata: { name: "omni-ceph-healthcheck", namespace: "rook-ceph" },
        rules: [
          { apiGroups: [""], resources: ["configmaps"], resourceNames: ["rook-ceph-mon-endpoints"], verbs: ["get"] },
          { apiGroups: [""], resources: ["secrets"], resourceNames: ["rook-ceph-mon", "rook-ceph-config"], verbs: ["get"] },
        ],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding",
        metadata: { name: "omni-ceph-healthcheck", namespace: "rook-ceph" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "omni-ceph-healthcheck" },
        subjects: [{ kind: "ServiceAccount", name: "omni-ceph-healthcheck", namespace: "rook-ceph" }],
      },
    ],
  }],
});

// Omni's documented Ceph gate: `ceph health` must say HEALTH_OK before each next node (its stderr becomes the step).
const ceph = new gate.Healthcheck("ceph-health", {
  cluster,
  name: "ceph-health",
  interval: "30s",
  job: {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { namespace: "rook-ceph" },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: "Never",
          serviceAccountName: "omni-ceph-healthcheck",
          containers: [{
            name: "check",
            image: "quay.io/ceph/ceph:v18",
            command: ["sh", "-c", [
              "health=$(ceph health)",
              'if [ "$health" != "HEALTH_OK" ]; then',
              '  echo "ceph is not healthy, holding upgrade:" >&2',
              "  ceph status >&2",
              "  exit 1",
              "fi",
            ].join("\n")],
          }],
        },
      },
    },
  },
});

const talos = new gate.TalosUpgrade("talos", {
  cluster,
  version: cfg.get("talosVersion") ?? "v1.13.2",
  healthchecks: [ceph],
  strategy: { workerParallelism: 1 }, // Ceph re-balances between nodes
  holdTimeout: "2h",
  nodeTimeout: "20m",
});

const kubernetes = new gate.KubernetesUpgrade("kubernetes", {
  cluster,
  version: cfg.get("kubernetesVersion") ?? "v1.36.1",
  healthchecks: [ceph],
  holdTimeout: "2h",
  nodeTimeout: "10m",
  after: talos,
});

export const talosPlan = talos.plan;
export const talosStatus = talos.status;
export const kubernetesPlan = kubernetes.plan;
export const kubernetesStatus = kubernetes.status;
