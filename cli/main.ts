// The `talos-gate` command. Each subcommand lives in its own module exporting `run(argv): Promise<number>` (the exit
// code) and is loaded only when used, so `talos-gate validate` never loads the Kubernetes or gRPC clients.
// First: an unsupported Node.js stops here, naming the version needed (bin/talos-gate prints it without a stack).
import "../provider/nodeSupport";
import { exitAfterFlush } from "./exit";
import { cliMsg } from "./messages";
const commands: Record<string, { summary: string; load: () => { run(argv: string[]): Promise<number> } }> = {
  validate: { summary: "validate an Omni cluster template offline", load: () => require("./validate") },
  plan: { summary: "print the ordered rollout plan against a live or simulated cluster", load: () => require("./plan") },
  status: { summary: "print the live upgrade status mirrored into the cluster", load: () => require("./status") },
  report: { summary: "report the last rollout as Markdown (--markdown) or a self-contained HTML timeline (--html FILE)", load: () => require("./report") },
  stop: { summary: "ask the rollout running on a cluster to stop before its next node", load: () => require("./stop") },
  rbac: { summary: "print the least-privilege RBAC the pipeline's kubeconfig needs", load: () => require("./rbac") },
  sim: { summary: "start, stop, inspect or fault a local simulated Talos cluster (up|down|status|fault|recover)", load: () => require("./sim") },
  toolchain: { summary: "find or build the binaries the simulated cluster runs (kube-apiserver, etcd, ...)", load: () => require("./toolchain") },
  demo: { summary: "run the gated upgrade demo on a simulated cluster", load: () => require("./demo") },
};

export function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  return ["usage: talos-gate <command> [options]", "", "commands:",
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`), ""].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "-h" || name === "--help" || name === "help") {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(cliMsg.unknownCommand(name, usage()));
    return 2;
  }
  try {
    return await command.load().run(rest);
  } catch (err) {
    // Expected failures carry a user-facing message; anything else is a bug worth a stack trace.
    const e = err as Error & { userFacing?: boolean };
    process.stderr.write(`talos-gate ${name}: ${e.userFacing ? e.message : e.stack ?? String(e)}\n`);
    return 1;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => exitAfterFlush(code));
}
