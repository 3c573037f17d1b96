// Hostile input is refused quickly with a clear error, never a crash or a stack trace.
import assert from "node:assert/strict";
import { parseTemplate, TemplateValidationError } from "../../../provider/template";

function failsQuickly(input: string | Uint8Array, want: RegExp, ms = 10000): void {
  const start = Date.now();
  const r = parseTemplate(input);
  const took = Date.now() - start;
  assert.ok(!r.ok, "expected an error");
  assert.ok(r.error instanceof TemplateValidationError);
  assert.match(r.error.message, want);
  assert.ok(took < ms, `took ${took} ms`);
}

describe("template/hostile input", () => {
  it("a YAML alias bomb (billion laughs)", () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      lines.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(",")}]`);
    }
    failsQuickly("kind: Cluster\n" + lines.join("\n") + "\n", /^error loading template: error decoding template: yaml: document contains excessive aliasing$/);
  });

  it("deeply nested flow collections", () => {
    failsQuickly("kind: Cluster\nname: " + "[".repeat(200_000) + "]".repeat(200_000) + "\n", /^error loading template: error decoding template: yaml: exceeded max depth of 100$/);
  });

  it("deeply nested block sequences", () => {
    failsQuickly("kind: Cluster\nname:\n" + "- ".repeat(100_000) + "x\n", /exceeded max depth of 100$/);
  });

  it("deeply nested block mappings", () => {
    const text = "kind: Cluster\nname:\n" + Array.from({ length: 300 }, (_, i) => " ".repeat(i + 1) + "a:").join("\n") + " x\n";
    failsQuickly(text, /exceeded max depth of 100$/);
  });

  it("a huge file is refused above the size limit without parsing", () => {
    failsQuickly("kind: Cluster\n" + "# padding\n".repeat(200_000), /^error loading template: template is too large: 2000014 bytes, the limit is 1048576 bytes/, 500);
  });

  it("the size limit is configurable", () => {
    const r = parseTemplate("kind: Cluster\nname: x\n", { limits: { maxBytes: 10 } });
    assert.ok(!r.ok);
    assert.match(r.error.message, /template is too large: 22 bytes, the limit is 10 bytes/);
  });

  it("binary garbage gives a parse error", () => {
    const bytes = new Uint8Array(4096);
    let x = 12345;
    for (let i = 0; i < bytes.length; i++) bytes[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
    failsQuickly(bytes, /^error loading template: error decoding template: yaml: (invalid UTF-8 byte sequence|control characters are not allowed)$/);
  });

  it("control characters are refused as go-yaml refuses them", () => {
    failsQuickly("kind: Cluster\nname: a\u0000b\n", /^error loading template: error decoding template: yaml: control characters are not allowed$/);
  });

  it("a YAML syntax error names the line", () => {
    failsQuickly("kind: Cluster\nname: [demo\ntalos: {\n", /^error loading template: error decoding template: yaml: line \d+: /);
  });

  it("a recursive alias does not loop", () => {
    const r = parseTemplate("kind: Cluster\nname: demo\nlabels: &l\n  self: *l\n");
    assert.ok(!r.ok);
    assert.match(r.error.message, /error loading template/);
  });
});
