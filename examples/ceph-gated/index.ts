// The Rook/Ceph-gated upgrade from Omni's documentation ("Gate Talos Upgrades with Healthchecks"), as a typed Pulumi
// program: RBAC for the check as supporting manifests, a Healthcheck that holds the upgrade while `ceph health` is not
// HEALTH_OK (its stderr becomes the step), and a TalosUpgrade gated by it before every node.
import * as pulumi from "@pulumi/pulumi";
import * as gate from "talos-gate";

const cfg = new pulumi.Config();

const cluster = new gate.Cluster("prod", {
  clusterName: cfg.get("clusterName") ?? "ceph-gated",
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

const upgrade = new gate.TalosUpgrade("talos", {
  cluster,
  version: cfg.get("version") ?? "v1.13.2",
  healthchecks: [ceph],
  // One worker at a time: Ceph must re-balance between nodes.
  strategy: { workerParallelism: 1 },
  holdTimeout: "2h",
  nodeTimeout: "20m",
});

export const plan = upgrade.plan;
export const status = upgrade.status;
