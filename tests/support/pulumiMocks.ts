// A program run under Pulumi's mocks in a process of its own (the mocks are global to a process). The script sees
// `pulumi`, `dist` (this build's root), `seen` (each registration: type, name, inputs) and `done(value)`, which prints
// the value as JSON and ends the process; that value is returned.
import { execFileSync } from "node:child_process";
import * as path from "node:path";

export interface Registration { type: string; name: string; inputs: Record<string, unknown> }

export function runWithPulumiMocks<T>(script: string): T {
  const dist = path.resolve(__dirname, "../..");
  const program = `
    const pulumi = require("@pulumi/pulumi");
    const dist = ${JSON.stringify(dist)};
    const seen = [];
    const done = (value) => { process.stdout.write(JSON.stringify(value)); process.exit(0); };
    pulumi.runtime.setMocks({
      newResource: (a) => { seen.push({ type: a.type, name: a.name, inputs: a.inputs }); return { id: a.name, state: { ...a.inputs, status: {} } }; },
      call: () => ({}),
    }, "p", "s", false);
    ${script}
  `;
  return JSON.parse(execFileSync(process.execPath, ["-e", program], { cwd: path.resolve(dist, ".."), encoding: "utf8", timeout: 60_000 })) as T;
}
