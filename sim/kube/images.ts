// Image references as the kubelet and containerd see them, and which images the simulated kubelet cannot pull.
//
// Nothing is ever pulled (the container's command runs as a local process), so a pull can only fail on purpose:
// - any image whose registry host ends in `.invalid` (RFC 6761: such names never resolve, so a real kubelet fails the
//   same way), e.g. `unpullable.invalid/check:1`;
// - any image listed in the kube sim's `unpullableImages` knob (a full reference, or a repository without tag).
// The pod then stays Pending with its container waiting in ErrImagePull / ImagePullBackOff, like a real pod.
import { createHash } from "node:crypto";

const DEFAULT_IMAGE = "registry.k8s.io/pause:3.10";

/** docker.io/library/busybox:latest for "busybox" (containerd's normalisation). */
export function normalizeImage(image: string | undefined): string {
  let img = image || DEFAULT_IMAGE;
  const first = img.split("/")[0];
  if (!img.includes("/")) img = `docker.io/library/${img}`;
  else if (!first.includes(".") && !first.includes(":") && first !== "localhost") img = `docker.io/${img}`;
  if (!/[:@][^/]+$/.test(img)) img += ":latest";
  return img;
}

/** The repository of a normalised reference (no tag or digest). */
export function repository(normalized: string): string {
  return normalized.replace(/@[^/]+$/, "").replace(/:[^/:]+$/, "");
}

/** What the kubelet reports as imageID once the image is present. */
export function imageId(image: string): string {
  return `${repository(image)}@sha256:${createHash("sha256").update(image).digest("hex")}`;
}

function registryHost(normalized: string): string {
  return normalized.split("/")[0].replace(/:\d+$/, "");
}

/** An `unpullableImages` entry with a tag or digest names that image; without, every tag of the repository. */
function listed(ref: string, entry: string): boolean {
  const n = normalizeImage(entry);
  return /[:@][^/]+$/.test(entry) ? n === ref : repository(n) === repository(ref);
}

/**
 * Why `image` (as written in the pod spec) cannot be pulled, in containerd's words, or undefined when it can: a host
 * that does not resolve for `.invalid` registries, "not found" for listed images.
 */
export function pullFailure(image: string | undefined, unpullable: readonly string[] = []): string | undefined {
  const ref = normalizeImage(image);
  const host = registryHost(ref);
  const prefix = `rpc error: code = Unknown desc = failed to pull and unpack image "${ref}": failed to resolve reference "${ref}"`;
  if (host.endsWith(".invalid")) {
    const path = repository(ref).slice(host.length + 1);
    const tag = ref.slice(repository(ref).length + 1) || "latest";
    return `${prefix}: failed to do request: Head "https://${host}/v2/${path}/manifests/${tag}": dial tcp: lookup ${host}: no such host`;
  }
  if (unpullable.some((u) => listed(ref, u))) return `${prefix}: ${ref}: not found`;
  return undefined;
}

/** The kubelet's image pull back-off: 10 s doubling to 5 minutes (pkg/kubelet/images, backOffPeriod). */
export function pullBackoffMs(attempt: number, baseMs: number): number {
  return Math.min(baseMs * 2 ** attempt, 5 * 60 * 1000);
}
