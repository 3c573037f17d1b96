// Issue 22.8: a Cluster's `context` chooses the kubeconfig's and the talosconfig's context instead of their current
// ones; both adapters read the choice from the rewritten texts. A missing context is refused, naming the ones there are.
import * as assert from "node:assert/strict";
import * as crypto from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import * as YAML from "yaml";
import { withKubeContext, withTalosContext } from "../../../provider/resources/credentialContext";
import { parseTalosconfig } from "../../../provider/talos/talosconfig";

const kubeconfig = YAML.stringify({
  apiVersion: "v1", kind: "Config", "current-context": "admin@staging",
  clusters: [{ name: "staging", cluster: { server: "https://10.0.0.1:6443" } }, { name: "prod", cluster: { server: "https://10.0.1.1:6443" } }],
  users: [{ name: "admin", user: { token: "secret-token" } }],
  contexts: [{ name: "admin@staging", context: { cluster: "staging", user: "admin" } }, { name: "admin@prod", context: { cluster: "prod", user: "admin" } }],
});
const ca = Buffer.from("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").toString("base64");
const key = Buffer.from(crypto.generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" })).toString("base64");
const talosconfig = YAML.stringify({
  context: "staging",
  contexts: {
    staging: { endpoints: ["10.0.0.1"], ca, crt: ca, key },
    prod: { endpoints: ["10.0.1.1"], ca, crt: ca, key },
  },
});

describe("sdk: Cluster context", () => {
  it("makes the chosen context the current one, as the Kubernetes client and the talosconfig reader see it", () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(withKubeContext(kubeconfig, "admin@prod"));
    assert.equal(kc.getCurrentContext(), "admin@prod");
    assert.equal(kc.getCurrentCluster()?.server, "https://10.0.1.1:6443");
    const talos = parseTalosconfig(withTalosContext(talosconfig, "prod"));
    assert.equal(talos.context, "prod");
    assert.deepEqual(talos.endpoints.map((e) => e.host), ["10.0.1.1"]);
  });

  it("refuses a context the file does not have, naming the ones it has and never the credentials", () => {
    assert.throws(() => withKubeContext(kubeconfig, "prod"), (err: Error) => {
      assert.equal(err.message, 'Cluster context.kubeconfig: "prod" is not a context of the kubeconfig (it has: admin@staging, admin@prod); use one of those names (kubectl config get-contexts)');
      return true;
    });
    assert.throws(() => withTalosContext(talosconfig, "admin@prod"), /^Error: Cluster context\.talosconfig: "admin@prod" is not a context of the talosconfig \(it has: staging, prod\); use one of those names \(talosctl config contexts\)$/);
    assert.throws(() => withKubeContext("[1, 2", "x"), (err: Error) => !err.message.includes("secret-token") && /cannot be read/.test(err.message));
  });
});
