// Mocha root hooks: each file's fixtures are stopped after that file's last top-level suite (after the file's own
// `after` hooks), the shared ones at the end of the run.
import { stopFileFixtures, stopRunFixtures } from "./fixtures";

export const mochaHooks = {
  beforeAll(this: Mocha.Context) {
    const root = this.test?.parent;
    const lastOfFile = new Map<string, Mocha.Suite>();
    for (const suite of root?.suites ?? []) lastOfFile.set(suite.file ?? "", suite);
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
    await stopRunFixtures();
  },
};
