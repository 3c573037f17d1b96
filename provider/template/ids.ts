// The id rule of everything a user names within a cluster (a healthcheck, a condition, a hook, a manifest), as Omni
// derives a healthcheck's: `cluster-<cluster>-<name>`. Written once; the SDK's planned ids and the provider agree.

export function runnerId(cluster: string, name: string): string {
  return `cluster-${cluster}-${name}`;
}

/** Healthcheck id as Omni derives it: `idOverride`, else `cluster-<cluster>-<name>`. */
export function healthcheckId(hc: { name?: string; idOverride?: string }, cluster: string): string {
  return hc.idOverride ? hc.idOverride : runnerId(cluster, hc.name ?? "");
}
