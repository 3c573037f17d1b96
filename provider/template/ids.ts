// The id rule of everything a user names within a cluster (a healthcheck, a condition, a hook, a manifest), as Omni
// derives a healthcheck's: `cluster-<cluster>-<name>`. Written once; the SDK's planned ids and the provider agree.

export function runnerId(cluster: string, name: string): string {
  return `cluster-${cluster}-${name}`;
}
