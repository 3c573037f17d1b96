// The environment and argv of a container as the kubelet computes them: env (value, fieldRef, configMapKeyRef,
// secretKeyRef), envFrom, and $(VAR) expansion in env values, command and args.
import { KubeError, Rest, isNotFound } from "./rest";
import { Pod } from "./types";

/** Kubernetes' $(VAR) expansion (third_party/forked/golang/expansion): $$ escapes, unknown references stay as is. */
export function expand(input: string, env: Record<string, string>): string {
  let out = "";
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c !== "$" || i + 1 >= input.length) {
      out += c;
      continue;
    }
    const n = input[i + 1];
    if (n === "$") {
      out += "$";
      i++;
    } else if (n === "(") {
      const close = input.indexOf(")", i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      out += Object.prototype.hasOwnProperty.call(env, name) ? env[name] : `$(${name})`;
      i = close;
    } else {
      out += c + n;
      i++;
    }
  }
  return out;
}

/** A container config error (the kubelet's CreateContainerConfigError): the pod stays Pending and is retried. */
export class ContainerConfigError extends Error {}

function fieldRef(pod: Pod, path: string): string {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (m) return (pod.metadata as any)[m[1]]?.[m[2]] ?? "";
  switch (path) {
    case "metadata.name":
      return pod.metadata.name;
    case "metadata.namespace":
      return pod.metadata.namespace ?? "";
    case "metadata.uid":
      return pod.metadata.uid;
    case "spec.nodeName":
      return pod.spec?.nodeName ?? "";
    case "spec.serviceAccountName":
      return pod.spec?.serviceAccountName ?? "default";
    case "status.hostIP":
      return pod.status?.hostIP ?? "";
    case "status.podIP":
      return pod.status?.podIP ?? "";
    default:
      return "";
  }
}

async function readData(rest: Rest, ns: string, kind: "configmap" | "secret", name: string, optional: boolean): Promise<Record<string, string> | undefined> {
  try {
    const obj = await rest.get(`/api/v1/namespaces/${ns}/${kind}s/${name}`);
    if (kind === "secret") {
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries<string>(obj.data ?? {})) out[k] = Buffer.from(v, "base64").toString("utf8");
      return out;
    }
    return { ...(obj.data ?? {}) };
  } catch (err) {
    if (isNotFound(err)) {
      if (optional) return undefined;
      throw new ContainerConfigError(`${kind} "${name}" not found`);
    }
    throw err;
  }
}

/** The container's environment (only what the pod spec defines; the caller adds PATH, KUBECONFIG, ...). */
export async function containerEnv(rest: Rest, pod: Pod, container: any, base: Record<string, string>): Promise<Record<string, string>> {
  const ns = pod.metadata.namespace ?? "default";
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const data = await readData(rest, ns, from.configMapRef ? "configmap" : "secret", ref.name, !!ref.optional);
    for (const [k, v] of Object.entries(data ?? {})) env[`${from.prefix ?? ""}${k}`] = v;
  }
  for (const e of container.env ?? []) {
    const scope = { ...base, ...env };
    if (e.valueFrom?.fieldRef) env[e.name] = fieldRef(pod, e.valueFrom.fieldRef.fieldPath);
    else if (e.valueFrom?.configMapKeyRef || e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.configMapKeyRef ?? e.valueFrom.secretKeyRef;
      const kind = e.valueFrom.configMapKeyRef ? "configmap" : "secret";
      const data = await readData(rest, ns, kind, ref.name, !!ref.optional);
      if (data && Object.hasOwn(data, ref.key)) env[e.name] = data[ref.key];
      else if (data && !ref.optional) throw new ContainerConfigError(`couldn't find key ${ref.key} in ${kind === "configmap" ? "ConfigMap" : "Secret"} ${ns}/${ref.name}`);
    } else if (e.valueFrom) {
      // resourceFieldRef and file keys: not emulated; the variable is left unset.
      continue;
    } else env[e.name] = expand(e.value ?? "", scope);
  }
  return env;
}

export function isConfigError(err: unknown): err is ContainerConfigError | KubeError {
  return err instanceof ContainerConfigError;
}
