// A rollout in its own process, for tests that kill it (SIGKILL mid-node) and start it again: the real adapters on
// the kubeconfig/talosconfig files named in the JSON argument; one progress line per transition on stdout, then
// `RESULT <json>` (phase, error) when the run ends.
//   node dist/tests/support/rollout-child.js '{"kubeconfigPath":"…","talosconfigPath":"…","cluster":"c","holder":"h",
//     "targetVersion":"v1.13.2","leaseDurationSeconds":3}'
import * as fs from "node:fs";
import { createKubeApi } from "../../provider/kube";
import { RolloutError } from "../../provider/rollout/run";
import { runPath } from "../../provider/rollout/pathRun";
import { createTalosApi } from "../../provider/talos";

export interface ChildConfig {
  kubeconfigPath: string;
  talosconfigPath: string;
  cluster: string;
  holder: string;
  targetVersion: string;
  leaseDurationSeconds?: number;
  nodeTimeoutMs?: number;
  /** Intermediate versions (TalosUpgrade.path); none: a plain rollout. */
  path?: string[];
}

async function main(cfg: ChildConfig): Promise<void> {
  const kube = createKubeApi(fs.readFileSync(cfg.kubeconfigPath, "utf8"), { statusThrottleMs: 100 });
  const talos = createTalosApi(fs.readFileSync(cfg.talosconfigPath, "utf8"), { pollIntervalMs: 200 });
  const out = (line: string) => process.stdout.write(line + "\n");
  try {
    const st = await runPath(kube, talos, {
      cluster: cfg.cluster,
      holder: cfg.holder,
      targetVersion: cfg.targetVersion,
      installerImage: (_m, v) => `ghcr.io/siderolabs/installer:${v}`,
      healthchecks: [],
      holdTimeoutMs: 60_000,
      nodeTimeoutMs: cfg.nodeTimeoutMs ?? 60_000,
      readyPollMs: 200,
      statusWriteIntervalMs: 100,
      ...(cfg.leaseDurationSeconds !== undefined ? { leaseDurationSeconds: cfg.leaseDurationSeconds } : {}),
      onProgress: out,
    }, cfg.path ?? []);
    out("RESULT " + JSON.stringify({ phase: st.phase, error: st.error }));
  } catch (err) {
    out("RESULT " + JSON.stringify({ phase: err instanceof RolloutError ? err.status.phase : "error", error: (err as Error).message }));
    process.exitCode = 1;
  } finally {
    talos.close();
    await kube.close();
  }
}

if (require.main === module) {
  void main(JSON.parse(process.argv[2] ?? "{}") as ChildConfig);
}
