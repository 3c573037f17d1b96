// Shared helpers of the template unit tests: fixture paths and a parse that reads files like the CLI does.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseTemplate, type ParseOptions, type ParseResult } from "../../../provider/template";

/** Repository root (tests run from dist/tests/unit/template). */
export const ROOT = path.resolve(__dirname, "../../../..");
export const FIXTURES = path.join(ROOT, "tests/fixtures/templates");
export const EXAMPLES = path.join(ROOT, "examples/templates");

export function fileOptions(baseDir: string): ParseOptions {
  return { baseDir, readFile: (p) => fs.readFileSync(p), realPath: (p) => fs.realpathSync(p) };
}

export function parseFile(file: string, opts: ParseOptions = {}): ParseResult {
  return parseTemplate(fs.readFileSync(file), { ...fileOptions(path.dirname(file)), ...opts });
}

export function errorMessage(r: ParseResult): string {
  if (r.ok) throw new Error("expected the template to be invalid, but it is valid");
  return r.error.message;
}
