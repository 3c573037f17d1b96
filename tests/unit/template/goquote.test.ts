import assert from "node:assert/strict";
import { goQuote } from "../../../provider/template";

describe("template/goquote: Go's %q", () => {
  const cases: [string, string][] = [
    ["cluster-foo-ceph", '"cluster-foo-ceph"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ["tab\there\nnl", '"tab\\there\\nnl"'],
    ["\x00\x07\x1b\x7f", '"\\x00\\a\\x1b\\x7f"'],
    ["café ∞ 日本", '"café ∞ 日本"'],
    ["nbsp\u00a0zw\u200b", '"nbsp\\u00a0zw\\u200b"'],
    ["emoji 😀", '"emoji 😀"'],
    ["\u{e0001}", '"\\U000e0001"'],
  ];
  for (const [input, want] of cases) {
    it(`quotes ${JSON.stringify(input)}`, () => assert.equal(goQuote(input), want));
  }
});
