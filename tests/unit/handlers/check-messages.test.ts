// What `check` says about bad inputs, per resource kind: every failure's property, wording and order, and the inputs it
// lets through while Pulumi's unknown values wait for apply. The expected results were recorded from the handlers
// before issue 21 (one zod model per kind) and must not change with it: `pulumi preview` users see these lines.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { check } from "../../../provider/handlers";
import { UNKNOWN } from "../../../provider/handlers/common";
import { cases } from "./checkCases";

interface Recorded { title: string; result: unknown }

const fixture = path.join(__dirname, "..", "..", "..", "..", "tests", "fixtures", "check-failures.json");
const recorded = JSON.parse(fs.readFileSync(fixture, "utf8")) as Recorded[];

describe("handlers: check's failures, as recorded before the zod models", () => {
  it("the table and the recording list the same cases", () => {
    assert.deepEqual(recorded.map((r) => r.title), Object.keys(cases));
  });
  for (const { title, result } of recorded) {
    it(title, async () => {
      const news = cases[title];
      assert.ok(news, `no input for "${title}" in checkCases.ts`);
      // Through JSON, as the recording went: undefined properties drop out on both sides.
      assert.deepEqual(JSON.parse(JSON.stringify(await check({}, news))), result);
    });
  }
});

describe("handlers: check leaves every value not known yet to apply (issue 21)", () => {
  it("a failure on an unknown value nested in an input is dropped, one on a known sibling is kept", async () => {
    const news = { ...cases["upgrade: worker parallelism 0"], strategy: { workerParallelism: UNKNOWN, order: "cp-1" } };
    const r = await check({}, news);
    // Before the models, check reported workerParallelism's unknown placeholder as `got "04da6b54-…"`.
    assert.deepEqual(r.failures, [{ property: "strategy", reason: "strategy order must be a list of node names" }]);
  });
});
