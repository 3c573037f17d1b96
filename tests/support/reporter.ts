// Mocha's spec reporter plus one plain closing line "N passed, N failed, N skipped" that CI tooling reads.
import Mocha from "mocha";

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    let passed = 0, failed = 0, skipped = 0;
    runner.on(Mocha.Runner.constants.EVENT_TEST_PASS, () => passed++);
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, () => failed++);
    runner.on(Mocha.Runner.constants.EVENT_TEST_PENDING, () => skipped++);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    });
  }
}

export = SpecWithSummary;
