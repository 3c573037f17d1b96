// Quickstart: a healthcheck-gated Talos upgrade of the simulated cluster (`talos-gate sim up`).
// The gate is a ConfigMap: the check fails, and the upgrade holds, until `data.open` is "true":
//   kubectl --kubeconfig .sim/kubeconfig -n default patch configmap talos-gate-demo -p '{"data":{"open":"true"}}'
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as gate from "talos-gate";

const cfg = new pulumi.Config();
// Credentials: from stack config (secrets) if set, else the files `talos-gate sim up` wrote.
const simDir = path.resolve(cfg.get("simDir") ?? process.env.TALOS_GATE_SIM_DIR ?? ".sim");
const fromSim = (file: string) => {
  const p = path.join(simDir, file);
  if (!fs.existsSync(p)) {
    throw new Error(`${p} does not exist: start the simulated cluster with 'talos-gate sim up' (or set the ${file} config secret)`);
  }
  return fs.readFileSync(p, "utf8");
};
const kubeconfig = cfg.getSecret("kubeconfig") ?? pulumi.secret(fromSim("kubeconfig"));
const talosconfig = cfg.getSecret("talosconfig") ?? pulumi.secret(fromSim("talosconfig"));

const cluster = new gate.Cluster("sim", {
  clusterName: "sim",
  kubeconfig,
  talosconfig,
  manifests: [{
    name: "gate-rbac",
    mode: "full",
    inline: [
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "talos-gate-demo", namespace: "default" } },
      {
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: "talos-gate-demo", namespace: "default" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: ["talos-gate-demo"], verbs: ["get"] }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name: "talos-gate-demo", namespace: "default" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "talos-gate-demo" },
        subjects: [{ kind: "ServiceAccount", name: "talos-gate-demo", namespace: "default" }],
      },
    ],
  }],
});

const gateCheck = new gate.Healthcheck("gate", {
  cluster,
  name: "gate",
  interval: cfg.get("interval") ?? "5s",
  job: `
apiVersion: batch/v1
kind: Job
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      serviceAccountName: talos-gate-demo
      containers:
        - name: check
          image: bitnami/kubectl
          command:
            - sh
            - -c
            - |
              open=$(kubectl -n default get configmap talos-gate-demo -o jsonpath='{.data.open}')
              if [ "$open" != "true" ]; then
                echo "gate is closed: configmap default/talos-gate-demo has open=\${open:-<unset>}" >&2
                exit 1
              fi
`,
});

const upgrade = new gate.TalosUpgrade("talos", {
  cluster,
  version: cfg.get("version") ?? "v1.13.2",
  healthchecks: [gateCheck],
  holdTimeout: cfg.get("holdTimeout") ?? "10m",
  nodeTimeout: cfg.get("nodeTimeout") ?? "5m",
});

export const phase = upgrade.status.phase;
export const status = upgrade.status;
export const plan = upgrade.plan;
