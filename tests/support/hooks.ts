// Mocha root hooks: each file's fixtures are stopped after that file's last top-level suite (after the file's own
// `after` hooks), the shared ones at the end of the run. A worker of the full run (tests/support/worker.ts) runs one
// file per mocha run and stops the shared ones itself after its last file: it takes `fileHooks` only.
import { fileStarted, stopFileFixtures, stopRunFixtures } from "./fixtures";

export const fileHooks = {
  beforeAll(this: Mocha.Context) {
    const suites = this.test?.parent?.suites ?? [];
    const firstOfFile = new Map<string, Mocha.Suite>();
    const lastOfFile = new Map<string, Mocha.Suite>();
    for (const suite of suites) {
      if (!firstOfFile.has(suite.file ?? "")) firstOfFile.set(suite.file ?? "", suite);
      lastOfFile.set(suite.file ?? "", suite);
    }
    for (const suite of firstOfFile.values()) {
      // Must run before the suite's own `before` hooks, but a hook added now is appended: move it first (mocha keeps a
      // suite's hooks in `_beforeAll`; without it, fixtures of `before` hooks would only live until the end of the run).
      suite.beforeAll("this file's fixtures start here", fileStarted);
      const hooks = (suite as unknown as { _beforeAll?: Mocha.Hook[] })._beforeAll;
      if (Array.isArray(hooks)) hooks.unshift(hooks.pop()!);
    }
    for (const suite of lastOfFile.values()) {
      suite.afterAll("stop the fixtures this file started", async function (this: Mocha.Context) {
        this.timeout(60000);
        await stopFileFixtures();
      });
    }
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60000);
    await stopFileFixtures();
  },
};

/** `mocha --require dist/tests/support/hooks.js` (a run of some files in one process): the shared fixtures end with it. */
export const mochaHooks = {
  beforeAll: fileHooks.beforeAll,
  async afterAll(this: Mocha.Context) {
    this.timeout(60000);
    await stopFileFixtures();
    await stopRunFixtures();
  },
};
