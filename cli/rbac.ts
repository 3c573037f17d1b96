// `talos-gate rbac`: prints the least-privilege RBAC of the pipeline's kubeconfig (provider/kube/rbac.ts) as YAML,
// with bindings when a subject is named, ready for `kubectl apply -f -`.
import * as YAML from "yaml";
import { pipelineRbac, type RbacSubject } from "../provider/kube/rbac";
import { parseOptions, withCliErrors } from "./common";
import { CliError, cliMsg } from "./messages";

export function run(argv: string[]): Promise<number> {
  return withCliErrors("rbac", async () => {
    const { values } = parseOptions("rbac", argv, {
      "service-account": { type: "string" },
      user: { type: "string" },
      help: { type: "boolean", short: "h" },
    });
    if (values.help) {
      process.stdout.write(cliMsg.rbacUsage + "\n");
      return 0;
    }
    let subject: RbacSubject | undefined;
    if (values["service-account"] !== undefined) {
      const [namespace, name, ...rest] = values["service-account"].split("/");
      if (!namespace || !name || rest.length > 0) throw new CliError(cliMsg.rbacBadServiceAccount(values["service-account"]), 2);
      subject = { kind: "ServiceAccount", namespace, name };
    } else if (values.user !== undefined) {
      subject = { kind: "User", name: values.user };
    }
    process.stdout.write(`${cliMsg.rbacHeader}\n${pipelineRbac(subject).map((o) => YAML.stringify(o)).join("---\n")}`);
    return 0;
  });
}
