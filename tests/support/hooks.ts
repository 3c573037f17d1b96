// Mocha root hooks: shared fixtures started lazily by the tests that need them are stopped once at the end.
import { stopAllFixtures } from "./fixtures";

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60000);
    await stopAllFixtures();
  },
};
