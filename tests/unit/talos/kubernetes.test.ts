import * as assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import {
  defaultKubernetesImages, kubernetesImagesOf, kubernetesVersionOfImage, patchKubernetesImages, staticPodOf, targetKubernetesImages, TalosError,
} from "../../../provider/talos";
import { fromStruct, toStruct } from "../../../provider/talos/struct";

const SECRET = "c2VjcmV0LXRva2VuLWRvLW5vdC1sZWFr";

/** A control plane's configuration as Talos writes it: comments, flow lists, other documents after v1alpha1. */
const CP_CONFIG = `# managed by talos-gate tests
version: v1alpha1 # the v1alpha1 document
debug: false
machine:
  type: controlplane
  token: ${SECRET}
  kubelet:
    image: ghcr.io/siderolabs/kubelet:v1.35.2-fat # keep this comment
    extraArgs: {rotate-server-certificates: "true"}
  certSANs: [10.5.0.2, cp.example.com]
cluster:
  secret: ${SECRET}
  apiServer:
    image: registry.k8s.io/kube-apiserver:v1.35.2
    certSANs:
      - 10.5.0.2
  controllerManager:
    image: mirror.example.com/k8s/kube-controller-manager:v1.35.2
  proxy:
    disabled: false
---
apiVersion: v1alpha1
kind: HostnameConfig
hostname: cp-1 # static
---
apiVersion: v1alpha1
kind: KubeSchedulerConfig
image: registry.k8s.io/kube-scheduler:v1.35.2
`;

const js = (yaml: string) => parseAllDocuments(yaml).map((d) => d.toJS());

describe("talos: Kubernetes images in the machine configuration (pure)", () => {
  it("reads the images where Talos reads them: the component's own document (1.14) over v1alpha1; unset is undefined", () => {
    assert.deepEqual(kubernetesImagesOf(CP_CONFIG), {
      apiServer: "registry.k8s.io/kube-apiserver:v1.35.2",
      controllerManager: "mirror.example.com/k8s/kube-controller-manager:v1.35.2",
      scheduler: "registry.k8s.io/kube-scheduler:v1.35.2",
      kubelet: "ghcr.io/siderolabs/kubelet:v1.35.2-fat",
    });
  });

  it("sets each image and keeps every other field, comment and document as it was", () => {
    const target = targetKubernetesImages(kubernetesImagesOf(CP_CONFIG), "v1.36.1");
    const out = patchKubernetesImages(CP_CONFIG, target);
    assert.deepEqual(kubernetesImagesOf(out), target);
    // everything else is unchanged: the same documents with only the image fields replaced
    const expected = js(CP_CONFIG);
    expected[0].machine.kubelet.image = target.kubelet;
    expected[0].cluster.apiServer.image = target.apiServer;
    expected[0].cluster.controllerManager.image = target.controllerManager;
    expected[0].cluster.proxy.image = target.proxy;
    expected[2].image = target.scheduler;
    assert.deepEqual(js(out), expected);
    // comments, flow style and the document order survive
    for (const kept of ["# managed by talos-gate tests", "# the v1alpha1 document", `image: ${target.kubelet} # keep this comment`, "certSANs: [10.5.0.2, cp.example.com]",
      "hostname: cp-1 # static", "extraArgs: {rotate-server-certificates: \"true\"}"]) {
      assert.ok(out.includes(kept), `kept: ${kept}`);
    }
    assert.equal(out.split("\n---\n").length, 3);
    // the scheduler lives in its own document: v1alpha1 gets no cluster.scheduler
    assert.equal(js(out)[0].cluster.scheduler, undefined);
  });

  it("only the images asked for change; a worker's configuration gets the kubelet and nothing of the control plane", () => {
    const worker = "version: v1alpha1\nmachine:\n  type: worker\n  token: x\ncluster:\n  secret: y\n";
    const out = patchKubernetesImages(worker, { kubelet: "ghcr.io/siderolabs/kubelet:v1.36.1" });
    assert.deepEqual(js(out), [{ version: "v1alpha1", machine: { type: "worker", token: "x", kubelet: { image: "ghcr.io/siderolabs/kubelet:v1.36.1" } }, cluster: { secret: "y" } }]);
    assert.equal(patchKubernetesImages(worker, {}), worker);
  });

  it("an empty section (`kubelet:` is null) becomes the mapping the image goes in; a section that is not a mapping is refused", () => {
    const out = patchKubernetesImages("version: v1alpha1\nmachine:\n  kubelet:\ncluster:\n", { kubelet: "ghcr.io/siderolabs/kubelet:v1.36.1", apiServer: "registry.k8s.io/kube-apiserver:v1.36.1" });
    assert.deepEqual(js(out), [{ version: "v1alpha1", machine: { kubelet: { image: "ghcr.io/siderolabs/kubelet:v1.36.1" } }, cluster: { apiServer: { image: "registry.k8s.io/kube-apiserver:v1.36.1" } } }]);
    assert.throws(() => patchKubernetesImages("version: v1alpha1\nmachine:\n  kubelet: [a]\n", { kubelet: "ghcr.io/siderolabs/kubelet:v1.36.1" }, "node w-1"),
      /^TalosError: node w-1: `machine\.kubelet` in the machine configuration is not a mapping/);
  });

  it("long values are never folded (certificates, tokens)", () => {
    const long = "A".repeat(300);
    const cfg = `version: v1alpha1\nmachine:\n  ca:\n    crt: ${long}\n`;
    const out = patchKubernetesImages(cfg, { kubelet: "ghcr.io/siderolabs/kubelet:v1.36.1" });
    assert.ok(out.includes(`crt: ${long}\n`));
  });

  it("refuses a configuration without v1alpha1, bad YAML and a bad image, naming where and never quoting the text", () => {
    const noV1 = "apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: x\n";
    assert.throws(() => patchKubernetesImages(noV1, { kubelet: "ghcr.io/siderolabs/kubelet:v1.36.1" }, "node cp-1"),
      (e: unknown) => e instanceof TalosError && e.code === "CONFIG" && /^node cp-1: .*no v1alpha1 document/.test(e.message));
    const bad = `version: v1alpha1\nmachine:\n  token: ${SECRET}\n  bad: [unclosed\n`;
    assert.throws(() => kubernetesImagesOf(bad, "node cp-1"), (e: unknown) => {
      assert.ok(e instanceof TalosError && /^node cp-1: the machine configuration is not valid YAML \(\w+/.test(e.message), String(e));
      assert.ok(!e.message.includes(SECRET) && !e.message.includes("unclosed"), e.message);
      return true;
    });
    assert.throws(() => patchKubernetesImages(CP_CONFIG, { apiServer: "not an image" }), /"not an image" is not a container image reference/);
  });
});

describe("talos: Kubernetes versions and default images (pure)", () => {
  it("Talos' default repositories (constants.go) tagged with the version", () => {
    assert.deepEqual(defaultKubernetesImages("1.36.1"), {
      apiServer: "registry.k8s.io/kube-apiserver:v1.36.1",
      controllerManager: "registry.k8s.io/kube-controller-manager:v1.36.1",
      scheduler: "registry.k8s.io/kube-scheduler:v1.36.1",
      proxy: "registry.k8s.io/kube-proxy:v1.36.1",
      kubelet: "ghcr.io/siderolabs/kubelet:v1.36.1",
    });
    assert.throws(() => defaultKubernetesImages("latest"), /"latest" is not a Kubernetes version; use the form v1\.36\.1/);
  });
  it("a target keeps each component's repository and the kubelet's variant; unset components get Talos' default", () => {
    const t = targetKubernetesImages({ controllerManager: "mirror:5000/kcm:v1.35.2@sha256:abc", kubelet: "ghcr.io/siderolabs/kubelet:v1.35.2-slim" }, "v1.36.0");
    assert.equal(t.controllerManager, "mirror:5000/kcm:v1.36.0");
    assert.equal(t.kubelet, "ghcr.io/siderolabs/kubelet:v1.36.0-slim");
    assert.equal(t.apiServer, "registry.k8s.io/kube-apiserver:v1.36.0");
  });
  it("the version an image's tag names", () => {
    assert.equal(kubernetesVersionOfImage("registry.k8s.io/kube-apiserver:v1.36.1"), "v1.36.1");
    assert.equal(kubernetesVersionOfImage("ghcr.io/siderolabs/kubelet:v1.35.2-fat"), "v1.35.2");
    assert.equal(kubernetesVersionOfImage("mirror:5000/kube-apiserver:1.36.0-rc.1@sha256:ab"), "v1.36.0-rc.1");
    assert.equal(kubernetesVersionOfImage("registry.k8s.io/kube-apiserver"), undefined);
    assert.equal(kubernetesVersionOfImage("registry.k8s.io/kube-apiserver:latest"), undefined);
  });
});

describe("talos: StaticPodStatus as a static pod (pure)", () => {
  const status = (phase: string, ready: string, image: string) =>
    fromStruct(toStruct({ phase, conditions: [{ type: "Initialized", status: "True" }, { type: "Ready", status: ready }], containerStatuses: [{ name: "kube-apiserver", image, ready: ready === "True", restartCount: 0 }] }));
  it("reads the component, its image and readiness (Running and Ready True) through the Struct round trip", () => {
    assert.deepEqual(staticPodOf("kube-system/kube-apiserver-cp-1", status("Running", "True", "registry.k8s.io/kube-apiserver:v1.36.1")),
      { component: "kube-apiserver", id: "kube-system/kube-apiserver-cp-1", image: "registry.k8s.io/kube-apiserver:v1.36.1", ready: true, phase: "Running" });
    assert.equal(staticPodOf("kube-system/kube-apiserver-cp-1", status("Running", "False", "x:v1"))?.ready, false);
    assert.equal(staticPodOf("kube-system/kube-apiserver-cp-1", status("Pending", "True", "x:v1"))?.ready, false);
    // other static pods (a user's) are not control-plane components
    assert.equal(staticPodOf("default/nginx-cp-1", status("Running", "True", "nginx")), undefined);
  });
});
