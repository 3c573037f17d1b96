// `talos-gate toolchain`: gets the real binaries `talos-gate sim` runs (kube-apiserver, etcd, kubectl,
// kube-controller-manager, kube-scheduler) at the versions this release pins: found in $TALOS_GATE_TOOLS,
// $KUBEBUILDER_ASSETS, the user cache or PATH, else built with Go into the user cache.
import { kubeToolchain } from "../sim/tools/toolchain";
import { kubeCacheDir } from "../sim/tools/resolve";
import { toolchainCommand } from "../sim/tools";
import { parseOptions, withCliErrors } from "./common";
import { TOOLCHAIN_USAGE } from "./messages";

export async function run(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(TOOLCHAIN_USAGE(kubeCacheDir()) + "\n");
    return 0;
  }
  return withCliErrors("toolchain", async () => {
    const { values } = parseOptions("toolchain", argv, { check: { type: "boolean" }, from: { type: "string" } });
    const resolutions = await kubeToolchain({
      say: (line) => process.stdout.write(line + "\n"),
      command: toolchainCommand(),
      check: values.check,
      from: values.from,
    });
    return resolutions.every((r) => r.found) ? 0 : 1;
  });
}
