// The Rook/Ceph-gated upgrade from Omni's documentation ("Gate Talos Upgrades with Healthchecks"), as a typed Pulumi
// program: RBAC for the check as supporting manifests, a Healthcheck that holds the upgrade while `ceph health` is not
// HEALTH_OK (its stderr becomes the step), and a TalosUpgrade gated by it before every node.
//
// `pulumi config set gate condition` switches to the watch-driven variant: a Condition on the CephCluster's
// status.ceph.health (no Job, no ceph CLI, the next node goes the moment Rook reports HEALTH_OK), with `noout` set and
// cleared around each node by hooks, a soak after each node, and a maintenance window. See README.md for which to use.
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

/** A Ceph Job in rook-ceph: the Ceph image and the check's service account, running `script` in container `name`. */
function cephJob(name: string, script: string[]): Record<string, unknown> {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { namespace: "rook-ceph" },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: "Never",
          serviceAccountName: "omni-ceph-healthcheck",
          containers: [{ name, image: "quay.io/ceph/ceph:v18", command: ["sh", "-c", script.join("\n")] }],
        },
      },
    },
  };
}

const useCondition = cfg.get("gate") === "condition";

// Omni's gate: a Job re-run every interval while it fails.
const cephJobCheck = () => new gate.Healthcheck("ceph-health", {
  cluster,
  name: "ceph-health",
  interval: "30s",
  job: cephJob("check", [
    "health=$(ceph health)",
    'if [ "$health" != "HEALTH_OK" ]; then',
    '  echo "ceph is not healthy, holding upgrade:" >&2',
    "  ceph status >&2",
    "  exit 1",
    "fi",
  ]),
});

// Beyond Omni: a CEL condition over Rook's CephCluster, evaluated on every watch event of the object.
const cephCondition = () => new gate.Condition("ceph-health", {
  cluster,
  name: "ceph-health",
  target: { apiVersion: "ceph.rook.io/v1", kind: "CephCluster", namespace: "rook-ceph", name: "rook-ceph" },
  expression: "object.status.ceph.health == 'HEALTH_OK'",
  message: "'ceph is ' + object.status.ceph.health + ', holding upgrade'",
});

const upgrade = new gate.TalosUpgrade("talos", {
  cluster,
  version: cfg.get("version") ?? "v1.13.2",
  ...(useCondition
    ? {
      conditions: [cephCondition()],
      // Rook must not start re-balancing while a node reboots, and must be cleared again even if the node fails.
      hooks: {
        beforeNode: { name: "ceph-noout-set", job: cephJob("noout", ["ceph osd set noout"]) },
        afterNode: { name: "ceph-noout-unset", job: cephJob("noout", ["ceph osd unset noout"]) },
      },
      // HEALTH_OK must last: a flap during the soak restarts it.
      soakTime: cfg.get("soakTime") ?? "5m",
      maintenanceWindows: cfg.getObject<string[]>("maintenanceWindows") ?? ["Sat 02:00-06:00 Europe/Berlin"],
    }
    : { healthchecks: [cephJobCheck()] }),
  // One worker at a time: Ceph must re-balance between nodes.
  strategy: { workerParallelism: 1 },
  holdTimeout: "2h",
  nodeTimeout: "20m",
});

export const plan = upgrade.plan;
export const status = upgrade.status;
