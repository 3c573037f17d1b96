// Every request of the Kubernetes port ends at its bound: an API server that accepts connections and never answers
// (a hung load balancer, a half-open connection) must not hang a rollout, its cleanup or a preview. Getting credentials
// is bounded too, and an exec plugin or token file behaves as client-go's (credentials.ts), on the real API server.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import * as YAML from "yaml";
import { createKubeApi } from "../../../provider/kube";
import type { ControlPlane } from "../../../sim/controlplane";
import { freshNamespace, kubeConfigOf, serviceAccountToken, testControlPlane } from "../../support/kube";

function silentServer(): Promise<{ port: number; close(): void }> {
  return new Promise((resolve) => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((s) => sockets.add(s)); // accepts, never answers (not even the TLS handshake)
    server.listen(0, "127.0.0.1", () => resolve({
      port: (server.address() as net.AddressInfo).port,
      close: () => {
        for (const s of sockets) s.destroy();
        server.close();
      },
    }));
  });
}

function kubeconfig(port: number): string {
  return [
    "apiVersion: v1", "kind: Config",
    "clusters:", "- name: c", "  cluster:", `    server: https://127.0.0.1:${port}`, "    insecure-skip-tls-verify: true",
    "users:", "- name: u", "  user:", "    token: t",
    "contexts:", "- name: c", "  context:", "    cluster: c", "    user: u", "current-context: c", "",
  ].join("\n");
}

describe("integration: kube port — request bound", function () {
  this.timeout(60000);

  it("a request the API server never answers fails at the request timeout, saying so", async () => {
    const server = await silentServer();
    const logs: string[] = [];
    const kube = createKubeApi(kubeconfig(server.port), { requestTimeoutMs: 500, log: (l) => logs.push(l) });
    try {
      for (const call of [() => kube.uncordon("w-1", "test"), () => kube.runningRollout("prod")]) {
        await assert.rejects(Promise.race([
          call(),
          new Promise((_, reject) => setTimeout(() => reject(new Error("still waiting after 20 s")), 20_000)),
        ]), (err: Error) => {
          assert.match(err.message, /no answer from the API server before the request timed out/);
          return true;
        });
      }
      // Best-effort calls end too, and say why in their log.
      assert.deepEqual(await kube.sweepRunners(), { jobs: 0, pods: 0 });
      assert.match(logs.join("\n"), /listing runner Jobs.*no answer from the API server before the request timed out/);
    } finally {
      await kube.close();
      server.close();
    }
  });
});

/**
 * A kubeconfig on the shared control plane whose user is `user` (an exec plugin or a token file), written into `dir`;
 * `tag` makes the text unique (one KubeConfig, so one credential cache, per kubeconfig text).
 */
function kubeconfigWithUser(cpKubeconfig: string, user: Record<string, unknown>, tag: string): string {
  const cp = YAML.parse(cpKubeconfig);
  return `# ${tag}\n` + YAML.stringify({
    apiVersion: "v1", kind: "Config", clusters: [{ ...cp.clusters[0], name: "c" }], users: [{ name: "u", user }],
    contexts: [{ name: "c", context: { cluster: "c", user: "u" } }], "current-context": "c",
  });
}

/** A real bearer token of a ServiceAccount allowed to read Nodes (the built-in `view` role does not cover them). */
async function nodeReaderToken(cp: ControlPlane): Promise<string> {
  const ns = await freshNamespace(cp, "cred");
  const kc = kubeConfigOf(cp);
  const token = await serviceAccountToken(cp, ns, "pipeline");
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  await rbac.createClusterRole({ body: { metadata: { name: `${ns}-nodes` }, rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["list", "get"] }] } });
  await rbac.createClusterRoleBinding({ body: {
    metadata: { name: `${ns}-nodes` }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${ns}-nodes` },
    subjects: [{ kind: "ServiceAccount", name: "pipeline", namespace: ns }],
  } });
  return token;
}

/** Rejects with `call`'s error, or after 20 s (so a hang fails the test instead of timing it out). */
const within20s = <T>(call: Promise<T>) => Promise.race([
  call, new Promise<T>((_, reject) => setTimeout(() => reject(new Error("still waiting after 20 s")), 20_000)),
]);

describe("integration: kube port — credentials (exec plugin, token file)", function () {
  this.timeout(120000);
  let cp: ControlPlane;
  let token: string;
  let dir: string;
  const runs = () => (fs.existsSync(path.join(dir, "runs")) ? fs.readFileSync(path.join(dir, "runs"), "utf8").split("\n").filter(Boolean).length : 0);

  before(async () => {
    cp = await testControlPlane();
    token = await nodeReaderToken(cp);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "kubeconfig-"));
    // The plugin: counts its runs, keeps the ExecCredential request it was given, and answers with the token in
    // ./token — or hangs (./hang), or fails with an id_token on stderr (./fail).
    fs.writeFileSync(path.join(dir, "plugin.sh"), [
      "#!/bin/sh",
      'echo run >> "$PLUGIN_DIR/runs"',
      'printf "%s" "$KUBERNETES_EXEC_INFO" > "$PLUGIN_DIR/info"',
      '[ -e "$PLUGIN_DIR/hang" ] && exec sleep 60',
      '[ -e "$PLUGIN_DIR/fail" ] && { echo "oidc: refresh failed, id_token=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwaXBlbGluZSJ9.c2lnbmF0dXJlMTIz" >&2; exit 3; }',
      'printf \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\' "$(cat "$PLUGIN_DIR/token")"',
      "",
    ].join("\n"), { mode: 0o755 });
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const withDir = () => ({
    exec: { apiVersion: "client.authentication.k8s.io/v1", command: "./plugin.sh", env: [{ name: "PLUGIN_DIR", value: dir }], interactiveMode: "Never" },
  });

  it("an exec plugin from the kubeconfig's folder runs once per credential, with KUBERNETES_EXEC_INFO, until a 401 renews it", async () => {
    fs.writeFileSync(path.join(dir, "token"), "not-a-token");
    const text = kubeconfigWithUser(cp.kubeconfig, withDir(), "cached");
    const first = createKubeApi(text, { kubeconfigDir: dir });
    try {
      await assert.rejects(first.listMachines(), /credentials were refused/);
      assert.equal(runs(), 1);
      fs.writeFileSync(path.join(dir, "token"), token);
      assert.ok((await first.listMachines()).length > 0, "the 401 renewed the credentials");
      assert.equal(runs(), 2);
      await first.listMachines();
      // Another port on the same kubeconfig shares the credential (no expirationTimestamp: kept until a 401).
      const second = createKubeApi(text, { kubeconfigDir: dir });
      await second.listMachines();
      await second.close();
      assert.equal(runs(), 2, "no run per request, nor per port");
      assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, "info"), "utf8")),
        { kind: "ExecCredential", apiVersion: "client.authentication.k8s.io/v1", spec: { interactive: false } });
    } finally {
      await first.close();
    }
  });

  it("a plugin that hangs is stopped at the bound; one that fails is named with its exit code, its stderr redacted", async () => {
    fs.writeFileSync(path.join(dir, "hang"), "");
    const hung = createKubeApi(kubeconfigWithUser(cp.kubeconfig, withDir(), "hang"), { kubeconfigDir: dir, requestTimeoutMs: 1000 });
    try {
      await assert.rejects(within20s(hung.listMachines()), (err: Error) => {
        assert.match(err.message, /the credential plugin \S+plugin\.sh did not return credentials within 1s and was stopped/);
        return true;
      });
    } finally {
      await hung.close();
      fs.rmSync(path.join(dir, "hang"));
    }
    fs.writeFileSync(path.join(dir, "fail"), "");
    const failing = createKubeApi(kubeconfigWithUser(cp.kubeconfig, withDir(), "fail"), { kubeconfigDir: dir });
    try {
      await assert.rejects(within20s(failing.listMachines()), (err: Error) => {
        assert.match(err.message, /the credential plugin \S+plugin\.sh failed with exit code 3: oidc: refresh failed, id_token=\[redacted/);
        assert.doesNotMatch(err.message, /eyJ/);
        return true;
      });
    } finally {
      await failing.close();
      fs.rmSync(path.join(dir, "fail"));
    }
  });

  it("a tokenFile is read from the kubeconfig's folder and read again after a 401 (bound tokens rotate)", async () => {
    fs.writeFileSync(path.join(dir, "sa-token"), "expired-token");
    const kube = createKubeApi(kubeconfigWithUser(cp.kubeconfig, { tokenFile: "sa-token" }, "token-file"), { kubeconfigDir: dir });
    try {
      await assert.rejects(kube.listMachines(), /credentials were refused/);
      fs.writeFileSync(path.join(dir, "sa-token"), `${token}\n`); // the kubelet rotated it
      assert.ok((await kube.listMachines()).length > 0);
    } finally {
      await kube.close();
    }
  });
});
