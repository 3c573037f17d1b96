// The load stage: each YAML document decoded strictly into its kind's raw shape (schema.ts), with Omni's "error
// loading template" wording; nothing is validated until every document decodes.
import type { z } from "zod";
import * as M from "../messages";
import { goQuote } from "../goquote";
import { nodeKindNumber, type LineIndex, type Pos, type YDoc, type YNode } from "../yamlnodes";
import { KIND_SCHEMAS, UNKNOWN_FIELD_MARK, project, type KnownKind } from "../schema";
import { TemplateValidationError, type TemplateError } from "../errors";
import { DocContext, formatPath, locate, type Seg } from "./context";

export interface Loaded {
  kind: KnownKind;
  ctx: DocContext;
  value: unknown;
}

function docLabel(doc: YDoc, kind?: string): string {
  let label = `document ${doc.index + 1}`;
  if (kind !== undefined) {
    const nameNode = doc.root?.kind === "map" ? doc.root.get("name") : undefined;
    const name = nameNode?.kind === "scalar" && nameNode.tag !== "!!null" ? ` ${goQuote(nameNode.text)}` : "";
    label += ` (${kind}${name})`;
  }
  return label;
}

export interface LoadError {
  text: string;
  errors: TemplateError[];
}

export function loadDocument(doc: YDoc, lines: LineIndex): { loaded?: Loaded; error?: LoadError } {
  const at = (e: string): LoadError => ({
    text: M.load.inDocument(doc.pos.line, doc.pos.col, e),
    errors: [{ document: docLabel(doc), path: "", message: e, line: doc.pos.line, column: doc.pos.col }],
  });
  const root = doc.root;
  if (doc.rootIsAlias || root === undefined || root.kind !== "map") {
    return { error: at(M.load.unexpectedNodeKindExpectingMapping(nodeKindNumber(root, doc.rootIsAlias))) };
  }
  const kindEntry = root.entries.find((e) => e.key === "kind" && !e.merged);
  if (!kindEntry) return { error: at(M.load.kindNotFound) };
  if (kindEntry.value.kind !== "scalar") return { error: at(M.load.unexpectedKindValueType(nodeKindNumber(kindEntry.value))) };
  const kind = kindEntry.value.text;
  if (!Object.hasOwn(KIND_SCHEMAS, kind)) return { error: at(M.load.unknownKind(kind)) };
  const ctx = new DocContext(docLabel(doc, kind), root);
  const schema = KIND_SCHEMAS[kind as KnownKind];
  const res = (schema as z.ZodType).safeParse(project(root));
  const problems: { pos: Pos; message: string; path: string }[] = doc.constructErrors.map((e) => ({ ...e, path: "" }));
  if (!res.success) {
    for (const iss of res.error.issues) {
      const path = iss.path.filter((s): s is Seg => typeof s !== "symbol");
      if (insideDuplicate(root, path)) continue;
      if (iss.code === "unrecognized_keys" && iss.message.startsWith(UNKNOWN_FIELD_MARK)) {
        const goType = iss.message.slice(UNKNOWN_FIELD_MARK.length);
        for (const k of iss.keys) {
          problems.push({ pos: locate(root, path, k) ?? doc.pos, message: M.construct.fieldNotFound(k, goType), path: formatPath([...path, k]) });
        }
      } else {
        problems.push({ pos: locate(root, path) ?? doc.pos, message: iss.message, path: formatPath(path) });
      }
    }
  }
  if (problems.length === 0) return { loaded: { kind: kind as KnownKind, ctx, value: res.data } };
  problems.sort((a, b) => a.pos.line - b.pos.line || a.pos.col - b.pos.col);
  const entries = problems.map((p) => M.construct.line(lines.docLine(doc.contentLine, p.pos.line), p.message));
  return {
    error: {
      text: M.load.decodingDocument(doc.pos.line, doc.pos.col, entries),
      errors: problems.map((p) => ({ document: ctx.document, path: p.path, message: p.message, line: p.pos.line, column: p.pos.col })),
    },
  };
}

function insideDuplicate(root: YNode, path: readonly Seg[]): boolean {
  let n: YNode | undefined = root;
  for (let i = 0; ; i++) {
    if (n === undefined) return false;
    if (n.kind === "map" && n.duplicate) return true;
    if (i >= path.length) return false;
    const s = path[i]!;
    if (n.kind === "map" && typeof s === "string") n = n.get(s);
    else if (n.kind === "seq" && typeof s === "number") n = n.items[s];
    else return false;
  }
}

export function loadFailure(errs: LoadError[]): TemplateValidationError {
  return new TemplateValidationError(
    errs.map((e) => M.load.prefix + e.text).join("\n"),
    errs.flatMap((e) => e.errors),
  );
}
