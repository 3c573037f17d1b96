// Writes tests/fixtures/compat/<version>.json: the state a released talos-gate leaves in a user's stack, for the
// e2e test that an upgraded package previews that stack with no changes (CHANGELOG.md, "Compatibility").
//   bash scripts/with-tools.sh node -r ts-node/register/transpile-only scripts/compat-fixture.ts <commit of the release>
// It packs the release from git, installs it into a fresh project with the e2e test's program, runs the sim (from this
// checkout, same options as the e2e test) and `pulumi up` with that release, and exports the state with the sim's
// credentials replaced by placeholders (the test puts its own sim's back), so the fixture holds no secret.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { packageRoot } from "../provider/package";
import { stopFileFixtures, stopRunFixtures } from "../tests/support/fixtures";
import { pulumiEnv } from "../tests/support/pulumi";
import { COMPAT_SIM, configure, createUserProject, mapSecrets, mustRun, npmPack, PROGRAM, SECRET_PLACEHOLDERS, userStack } from "../tests/support/userProject";

async function main(commit: string): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-compat-"));
  const say = (s: string) => process.stdout.write(`compat-fixture: ${s}\n`);
  try {
    const src = path.join(work, "release");
    fs.mkdirSync(src);
    execFileSync("bash", ["-c", `git -C "${packageRoot}" archive "${commit}" | tar -x -C "${src}"`]);
    const release = JSON.parse(fs.readFileSync(path.join(src, "package.json"), "utf8")).version as string;
    say(`building talos-gate ${release} from ${commit}`);
    mustRun("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"], src, 600_000);
    mustRun(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], src, 600_000);
    const packed = npmPack(work, src);
    const project = path.join(work, "infra");
    say(`installing ${path.basename(packed.tarball)} into a fresh project`);
    createUserProject(project, packed.tarball);
    const simDir = path.join(project, ".sim");
    const cli = path.join(packageRoot, "bin", "talos-gate");
    mustRun(process.execPath, [cli, "sim", "up", "--dir", simDir, ...COMPAT_SIM.args], project);
    try {
      const env = await pulumiEnv();
      const stack = await userStack(env, project, COMPAT_SIM.stack);
      const sim = { kubeconfig: path.join(simDir, "kubeconfig"), talosconfig: path.join(simDir, "talosconfig") };
      await configure(stack, sim, COMPAT_SIM.to);
      say(`pulumi up with talos-gate ${release}`);
      const up = await stack.up();
      if (up.outputs.status?.value?.phase !== "Done") throw new Error(`pulumi up did not end Done:\n${up.stdout}`);
      const deployment = (await stack.exportStack()).deployment as Record<string, unknown>;
      const secrets = new Map<unknown, string>([
        [fs.readFileSync(sim.kubeconfig, "utf8"), SECRET_PLACEHOLDERS.kubeconfig],
        [fs.readFileSync(sim.talosconfig, "utf8"), SECRET_PLACEHOLDERS.talosconfig],
      ]);
      // Every secret becomes a plaintext placeholder, so the importing stack's own secrets provider encrypts them.
      const { secrets_providers: _, ...rest } = mapSecrets(deployment, (plain) => secrets.get(plain)) as Record<string, unknown>;
      const out = path.join(packageRoot, "tests", "fixtures", "compat", `v${release}.json`);
      fs.mkdirSync(path.dirname(out), { recursive: true });
      fs.writeFileSync(out, JSON.stringify({ release, commit, sim: COMPAT_SIM, program: PROGRAM, deployment: rest }, null, 2) + "\n");
      say(`wrote ${path.relative(packageRoot, out)} (${fs.statSync(out).size} bytes)`);
    } finally {
      mustRun(process.execPath, [cli, "sim", "down", "--dir", simDir], project);
    }
  } finally {
    await stopFileFixtures();
    await stopRunFixtures();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

const commit = process.argv[2];
if (!commit) {
  process.stderr.write("usage: scripts/compat-fixture.ts <commit of the release>\n");
  process.exit(2);
}
main(commit).then(() => process.exit(0), (err: Error) => {
  process.stderr.write(`compat-fixture: FAILED: ${err.stack ?? err}\n`);
  process.exit(1);
});
