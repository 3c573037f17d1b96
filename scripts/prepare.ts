// package.json "prepare" (issue 22.1): what npm runs when it installs talos-gate from git (`npm install
// git+https://…/talos-gate.git#vX`: clone, install with devDependencies, prepare, pack) or with `--install-links` from a
// checkout, and on `npm ci` / `npm install` in this repository: the incremental build (scripts/build.ts). In CI the build
// moves from `npm test` into `npm ci`, and `npm test`'s own `--build` finds nothing to compile. Skipped for `npm pack`
// and `npm publish` of this checkout: prepack refuses a stale dist/ there, and a build in the middle of a test run
// (tests/e2e/package.test.ts packs) would rewrite the dist/ other test processes load. Says so on stderr: stdout is
// `npm pack --json`'s answer.
import { build } from "./build";
import { prepareScope } from "./build-scope";

const command = process.env.npm_command;
if (command === "pack" || command === "publish") {
  process.stderr.write(`prepare: not building for npm ${command} (prepack checks that dist/ is the build of the sources)\n`);
} else {
  build(prepareScope(process.env, `${__dirname}/..`));
}
