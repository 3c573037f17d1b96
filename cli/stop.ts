// `talos-gate stop [--kubeconfig K] [--cluster NAME] [--no-wait] [--timeout D]`: the break-glass. Asks the rollout
// running on the cluster — from any shell or pipeline step with the kubeconfig, whatever started it — to stop before
// its next node: it annotates the rollout's Lease, which the rollout watches. The node in flight finishes (a node is
// never left half-upgraded), the status says who stopped it, and the next `pulumi up` resumes. Waits (bounded) until
// the rollout has let go of its Lease, then prints where it stopped.
import * as path from "node:path";
import * as os from "node:os";
import { parseDuration } from "../provider/template/duration";
import { coreApi, parseOptions, printable, readKubeconfig, readMirroredStatus, resolveCluster, withCliErrors } from "./common";
import { CliError, cliMsg, STOP_USAGE } from "./messages";

const POLL_MS = 1000;

export async function run(argv: string[]): Promise<number> {
  return withCliErrors("stop", async () => {
    const { values } = parseOptions("stop", argv, {
      kubeconfig: { type: "string" },
      cluster: { type: "string" },
      "no-wait": { type: "boolean" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h" },
    });
    if (values.help) {
      process.stdout.write(`${STOP_USAGE}\n`);
      return 0;
    }
    let timeoutMs: number;
    try {
      timeoutMs = parseDuration(values.timeout ?? "30m");
    } catch (err) {
      throw new CliError(cliMsg.badTimeout(values.timeout ?? "", (err as Error).message), 2);
    }
    const kubeconfig = readKubeconfig(values.kubeconfig);
    const core = coreApi(kubeconfig.text);
    const cluster = await resolveCluster(core, values.cluster);
    if (!cluster) throw new CliError(cliMsg.stopNoCluster());
    const kube = (require("../provider/kube") as typeof import("../provider/kube")).createKubeApi(kubeconfig.text, { kubeconfigDir: path.dirname(path.resolve(kubeconfig.file)) });
    try {
      const by = `${os.userInfo().username}@${os.hostname()}`;
      const asked = await kube.requestStop(cluster, by).catch((err: Error) => {
        throw new CliError(printable(cliMsg.stopFailed(cluster, err.message)));
      });
      if (!asked) {
        process.stdout.write(`${cliMsg.stopNothingRunning(cluster)}\n`);
        return 0;
      }
      process.stdout.write(`${printable(cliMsg.stopAsked(cluster, asked.holder))}\n`);
      if (values["no-wait"]) return 0;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const running = await kube.runningRollout(cluster).catch(() => asked);
        if (!running || running.holder !== asked.holder) break;
        if (Date.now() >= deadline) throw new CliError(printable(cliMsg.stopStillRunning(cluster, asked.holder, timeoutMs)));
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      const mirrored = await readMirroredStatus(core, cluster).catch(() => undefined);
      process.stdout.write(`${printable(cliMsg.stopped(cluster, mirrored?.status.error || mirrored?.status.step || ""))}\n`);
      return 0;
    } finally {
      await kube.close();
    }
  });
}
