// The Talos resources a simulated node serves over the COSI resource API (`/cosi.resource.State/Get|List`), as
// machined's state does: ExtensionStatuses.runtime.talos.dev (one per system extension, ids "0", "1", ..., the
// `schematic` meta extension that Image Factory adds carrying the schematic id as its version) and
// SecurityStates.talos.dev/securitystate, the machine configuration, and the Kubernetes resources upgrade-k8s reads
// (StaticPodStatuses, KubeletSpecs, Services, Manifests: sim/talos/kubernetes.ts). Specs travel protobuf-encoded in `proto_spec`, with `yaml_spec` alongside.
import { status as Status } from "@grpc/grpc-js";
import { stringify } from "yaml";
import { kubernetesImagesOf } from "../../provider/talos/kubernetes";
import { encodeSpec } from "../../provider/talos/proto";
import { toStruct } from "../../provider/talos/struct";
import { KUBE_PROXY_MANIFEST, kubeProxyObjects } from "../kube/kubeproxy";
import { proxyDisabledIn, type SimStaticPod } from "./kubernetes";
import type { SimNode } from "./node";
import { RpcError } from "./rpcerror";

export const RUNTIME_NAMESPACE = "runtime";
export const EXTENSION_STATUS_TYPE = "ExtensionStatuses.runtime.talos.dev";
export const SECURITY_STATE_TYPE = "SecurityStates.talos.dev";
export const SECURITY_STATE_ID = "securitystate";
export const CONFIG_NAMESPACE = "config";
export const MACHINE_CONFIG_TYPE = "MachineConfigs.config.talos.dev";
export { SIM_CONFIG_SECRET } from "./kubernetes";
export const K8S_NAMESPACE = "k8s";
export const CONTROLPLANE_NAMESPACE = "controlplane";
export const STATIC_POD_STATUS_TYPE = "StaticPodStatuses.kubernetes.talos.dev";
export const KUBELET_SPEC_TYPE = "KubeletSpecs.kubernetes.talos.dev";
export const SERVICE_TYPE = "Services.v1alpha1.talos.dev";
export const MANIFEST_TYPE = "Manifests.kubernetes.talos.dev";

interface WireResource {
  metadata: Record<string, unknown>;
  spec: { proto_spec: Buffer; yaml_spec: string };
}

const timestamp = (ms: number) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 });

function resource(node: SimNode, type: string, id: string, owner: string, specName: string, spec: Record<string, unknown>, yamlSpec: unknown,
  namespace = RUNTIME_NAMESPACE): WireResource {
  const at = timestamp(node.bootedAt);
  return {
    metadata: { namespace, type, id, version: "1", owner, phase: "running", created: at, updated: at },
    spec: { proto_spec: encodeSpec(specName, spec), yaml_spec: typeof yamlSpec === "string" ? yamlSpec : stringify(yamlSpec) },
  };
}

/** The active machine configuration (id v1alpha1): what the node started with or was last applied (sim/talos/kubernetes.ts). */
export function machineConfig(node: SimNode): WireResource {
  const text = node.kubernetes.config;
  const r = resource(node, MACHINE_CONFIG_TYPE, "v1alpha1", "", "MachineConfigSpec", { yaml_marshalled: Buffer.from(text) }, text, CONFIG_NAMESPACE);
  r.metadata.version = String(node.kubernetes.configVersion);
  return r;
}

/** A static pod's status as Talos copies it from the kubelet (a corev1.PodStatus in a Struct). */
function podStatus(node: SimNode, p: SimStaticPod): Record<string, unknown> {
  const started = new Date(Math.max(p.startedAt, node.bootedAt)).toISOString().replace(/\.\d+Z$/, "Z");
  const cond = (type: string, ok: boolean) => ({ type, status: ok ? "True" : "False", lastTransitionTime: started, lastProbeTime: null });
  return {
    phase: "Running",
    conditions: [cond("PodReadyToStartContainers", true), cond("Initialized", true), cond("Ready", p.ready), cond("ContainersReady", p.ready), cond("PodScheduled", true)],
    hostIP: node.address, podIP: node.address, startTime: started, qosClass: "BestEffort",
    containerStatuses: [{
      name: p.component, image: p.image, imageID: "", ready: p.ready, started: p.ready, restartCount: p.restartCount,
      state: { running: { startedAt: started } },
    }],
  };
}

/** StaticPodStatuses of a control plane: "kube-system/<component>-<node>" (kubelet_static_pod.go). */
export function staticPodStatuses(node: SimNode): WireResource[] {
  return node.kubernetes.staticPods().map((p) => {
    const status = podStatus(node, p);
    return resource(node, STATIC_POD_STATUS_TYPE, `kube-system/${p.component}-${node.name}`, "k8s.KubeletStaticPodController", "StaticPodStatusSpec",
      { pod_status: toStruct(status) }, status, K8S_NAMESPACE);
  });
}

/** KubeletSpecs/kubelet: the image the kubelet runs. */
export function kubeletSpec(node: SimNode): WireResource {
  const k = node.kubernetes.kubelet;
  return resource(node, KUBELET_SPEC_TYPE, "kubelet", "k8s.KubeletSpecController", "KubeletSpecSpec",
    { image: k.image, expected_nodename: node.name }, { image: k.image, expectedNodename: node.name }, K8S_NAMESPACE);
}

/** Services: the kubelet while it runs (Talos destroys a stopped service's resource; upgrade-k8s waits for that). */
export function services(node: SimNode): WireResource[] {
  if (!node.kubernetes.kubelet.running) return [];
  return [resource(node, SERVICE_TYPE, "kubelet", "v1alpha1.ServiceController", "ServiceSpec",
    { running: true, healthy: true }, { running: true, healthy: true, unknown: false })];
}

/** kube-proxy's DaemonSet as a control plane renders it from `cluster.proxy.image` (manifest "10-kube-proxy"). */
export function manifests(node: SimNode): WireResource[] {
  if (node.role !== "controlplane" || proxyDisabledIn(node.kubernetes.config)) return [];
  const image = kubernetesImagesOf(node.kubernetes.config, `node ${node.name}`).proxy;
  if (!image) return [];
  const objects = kubeProxyObjects(image);
  return [resource(node, MANIFEST_TYPE, KUBE_PROXY_MANIFEST, "k8s.ManifestController", "ManifestSpec",
    { items: objects.map((object) => ({ object: toStruct(object) })) }, objects, CONTROLPLANE_NAMESPACE)];
}

/** The node's ExtensionStatus resources: its extensions, then the `schematic` meta extension (Image Factory). */
export function extensionStatuses(node: SimNode): WireResource[] {
  const all = [...node.extensions, ...(node.schematic ? [{ name: "schematic", version: node.schematic }] : [])];
  return all.map((x, i) => resource(node, EXTENSION_STATUS_TYPE, String(i), "runtime.ExtensionStatusController", "ExtensionStatusSpec",
    { image: `${String(i).padStart(3, "0")}.${x.name}.sqsh`, metadata: { name: x.name, version: x.version } },
    { image: `${String(i).padStart(3, "0")}.${x.name}.sqsh`, metadata: { name: x.name, version: x.version } }));
}

export function securityState(node: SimNode): WireResource {
  return resource(node, SECURITY_STATE_TYPE, SECURITY_STATE_ID, "runtime.SecurityStateController", "SecurityStateSpec",
    { secure_boot: node.secureBoot, booted_with_uki: node.secureBoot },
    { secureBoot: node.secureBoot, bootedWithUKI: node.secureBoot });
}

const notFound = (type: string, ns: string, id: string) =>
  new RpcError(Status.NOT_FOUND, `resource ${type}(${ns}/${id}@undefined) doesn't exist`);

/** State.List of one resource type in a namespace. */
export function listResources(node: SimNode, namespace: string, type: string): WireResource[] {
  if (namespace === RUNTIME_NAMESPACE && type === EXTENSION_STATUS_TYPE) return extensionStatuses(node);
  if (namespace === RUNTIME_NAMESPACE && type === SECURITY_STATE_TYPE) return [securityState(node)];
  if (namespace === CONFIG_NAMESPACE && type === MACHINE_CONFIG_TYPE) return [machineConfig(node)];
  if (namespace === K8S_NAMESPACE && type === STATIC_POD_STATUS_TYPE) return staticPodStatuses(node);
  if (namespace === K8S_NAMESPACE && type === KUBELET_SPEC_TYPE) return [kubeletSpec(node)];
  if (namespace === RUNTIME_NAMESPACE && type === SERVICE_TYPE) return services(node);
  if (namespace === CONTROLPLANE_NAMESPACE && type === MANIFEST_TYPE) return manifests(node);
  throw new RpcError(Status.NOT_FOUND, `the simulated node serves no resources of type ${type} in namespace ${namespace}`);
}

/** State.Get of one resource. */
export function getResource(node: SimNode, namespace: string, type: string, id: string): WireResource {
  const found = listResources(node, namespace, type).find((r) => r.metadata.id === id);
  if (!found) throw notFound(type, namespace, id);
  return found;
}
