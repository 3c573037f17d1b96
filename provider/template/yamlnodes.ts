// Safe YAML reading: the `yaml` package parses the stream, this module turns each document into a small node tree
// with Go-yaml (v4) tag resolution and 1-based positions, and refuses hostile input quickly: size limit, control
// characters, nesting depth (checked on the lexer's tokens before the recursive parser runs), alias expansion.
import { CST, LineCounter, Lexer, parseAllDocuments, isAlias, isMap, isPair, isScalar, isSeq, Scalar } from "yaml";
import type { Node as YamlLibNode, Document } from "yaml";
import { load as msg, construct } from "./messages";

export interface Pos {
  line: number;
  col: number;
}

export type YNode = YScalar | YMap | YSeq;

/** A scalar with its resolved tag (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!timestamp`, or a custom tag). */
export class YScalar {
  readonly kind = "scalar";
  constructor(
    readonly tag: string,
    /** The text (source text for plain scalars, the decoded value for quoted and block scalars). */
    readonly text: string,
    readonly pos: Pos,
  ) {}
}

export interface YEntry {
  key: string;
  keyPos: Pos;
  value: YNode;
  /** Came from a `<<` merge key. */
  merged?: boolean;
}

export class YMap {
  readonly kind = "map";
  readonly entries: YEntry[] = [];
  /** Set when the mapping has duplicate keys (Omni does not decode such a mapping any further). */
  duplicate = false;
  constructor(readonly pos: Pos, readonly tag: string = "!!map") {}
  get(key: string): YNode | undefined {
    return this.entries.find((e) => e.key === key)?.value;
  }
}

export class YSeq {
  readonly kind = "seq";
  readonly items: YNode[] = [];
  constructor(readonly pos: Pos, readonly tag: string = "!!seq") {}
}

export interface YDoc {
  /** 0-based index in the stream. */
  index: number;
  /** Position of the document (its `---` marker, or its first token). */
  pos: Pos;
  /** First file line of the document's content (after a `---` line), for go-yaml's per-document line numbers. */
  contentLine: number;
  root?: YNode;
  /** The root was an alias (go-yaml node kind 16). */
  rootIsAlias: boolean;
  /** Construct errors found while reading (duplicate keys, non-scalar keys), with their positions. */
  constructErrors: { pos: Pos; message: string }[];
}

export interface YamlLimits {
  /** Maximum input size in bytes (default 1 MiB). */
  maxBytes: number;
  /** Maximum nesting depth of collections (default 100). */
  maxDepth: number;
  /** Maximum number of nodes produced by alias expansion, per stream (default 10000). */
  maxAliasNodes: number;
  /** Maximum number of documents (default 1000). */
  maxDocuments: number;
}

export const DEFAULT_LIMITS: YamlLimits = {
  maxBytes: 1024 * 1024,
  maxDepth: 100,
  maxAliasNodes: 10_000,
  maxDocuments: 1000,
};

/** A failure of the whole stream (the message is complete, e.g. `error decoding template: ...`). */
export class YamlStreamError extends Error {
  constructor(message: string, readonly pos?: Pos) {
    super(message);
    this.name = "YamlStreamError";
  }
}

export interface YamlStream {
  docs: YDoc[];
  lines: LineIndex;
}

/** Maps offsets to positions and counts non-blank lines (go-yaml numbers lines of a re-encoded document). */
export class LineIndex {
  private readonly counter = new LineCounter();
  private readonly nonBlankBefore: number[] = [0];
  constructor(text: string) {
    let start = 0;
    const lines = text.split("\n");
    let acc = 0;
    for (const l of lines) {
      this.counter.addNewLine(start);
      start += l.length + 1;
      if (l.trim() !== "") acc++;
      this.nonBlankBefore.push(acc);
    }
  }
  pos(offset: number): Pos {
    const p = this.counter.linePos(offset);
    return { line: p.line, col: p.col };
  }
  /** 1-based line number of `line` within the document starting at `contentLine`, counting non-blank lines. */
  docLine(contentLine: number, line: number): number {
    if (line < contentLine) return 1;
    const n = this.nonBlankBefore[line]! - this.nonBlankBefore[contentLine - 1]!;
    return Math.max(1, n);
  }
}

const NOT_PRINTABLE = /[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** Decodes bytes as UTF-8 (fatal on invalid sequences) and checks size. */
export function decodeInput(input: string | Uint8Array, limits: YamlLimits): string {
  const bytes = typeof input === "string" ? new TextEncoder().encode(input).length : input.length;
  if (bytes > limits.maxBytes) throw new YamlStreamError(msg.tooLarge(bytes, limits.maxBytes));
  if (typeof input === "string") return input;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(input);
  } catch {
    throw new YamlStreamError(msg.decodeTemplate(msg.invalidUtf8));
  }
}

/** Estimates nesting depth from lexer tokens (never under-estimates); throws when above the limit. */
function checkDepth(text: string, limit: number, lines: LineIndex): void {
  // The estimate may count up to about twice the real depth (indentation levels plus indicators on one line).
  const max = limit * 2 + 8;
  let flow = 0;
  let stack: number[] = [];
  let atLineStart = true;
  let indent = 0;
  let indicators = 0;
  let skipContent = false;
  let offset = 0;
  for (const tok of new Lexer().lex(text)) {
    const at = offset;
    offset += tok.length;
    if (skipContent) {
      skipContent = false;
      continue;
    }
    const type = CST.tokenType(tok);
    switch (type) {
      case "newline":
        atLineStart = true;
        indent = 0;
        indicators = 0;
        continue;
      case "space":
        if (atLineStart) indent += tok.length;
        continue;
      case "comment":
      case "doc-mode":
      case "byte-order-mark":
      case "directive-line":
        continue;
      case "doc-start":
      case "doc-end":
        stack = [];
        flow = 0;
        continue;
    }
    if (atLineStart) {
      if (flow === 0) {
        while (stack.length > 0 && stack[stack.length - 1]! >= indent) stack.pop();
        stack.push(indent);
      }
      atLineStart = false;
    }
    if (type === "scalar") skipContent = true;
    if (type === "flow-map-start" || type === "flow-seq-start") flow++;
    else if (type === "flow-map-end" || type === "flow-seq-end") flow = Math.max(0, flow - 1);
    else if (type === "seq-item-ind" || type === "explicit-key-ind" || type === "map-value-ind") indicators++;
    if (stack.length + indicators + flow > max) {
      throw new YamlStreamError(msg.decodeTemplate(msg.tooDeep(limit)), lines.pos(at));
    }
  }
}

const CORE = "tag:yaml.org,2002:";

function shortTag(tag: string): string {
  return tag.startsWith(CORE) ? "!!" + tag.slice(CORE.length) : tag;
}

const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const SPECIAL_FLOAT = new Set([".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN"]);
const TIMESTAMP = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]*)?([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)?$/;

/** go-yaml's resolution of a plain scalar's tag. */
export function resolvePlain(text: string): string {
  if (text === "" || text === "~" || text === "null" || text === "Null" || text === "NULL") return "!!null";
  if (/^(true|True|TRUE|false|False|FALSE)$/.test(text)) return "!!bool";
  if (SPECIAL_FLOAT.has(text)) return "!!float";
  const c = text[0]!;
  if (c === "." && YAML_FLOAT.test(text)) return "!!float";
  if ((c >= "0" && c <= "9") || c === "-" || c === "+") {
    if (TIMESTAMP.test(text)) return "!!timestamp";
    const plain = text.replace(/_/g, "");
    if (/^[-+]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[0-9]+)$/.test(plain)) return "!!int";
    if (YAML_FLOAT.test(plain)) return "!!float";
  }
  return "!!str";
}

/**
 * The value of a plain scalar from its source text: a multi-line plain scalar is folded as YAML (and go-yaml) fold it —
 * each line break between two lines becomes one space, each empty line one newline, the lines' surrounding white space
 * is dropped — so `do sleep\n      0.01` is `do sleep 0.01`.
 */
export function foldPlain(src: string): string {
  if (!src.includes("\n")) return src;
  const lines = src.split(/\r?\n/).map((l, i, all) => (i === 0 ? l.replace(/[ \t]+$/, "") : i === all.length - 1 ? l.replace(/^[ \t]+/, "") : l.trim()));
  let out = lines[0]!;
  let breaks = 0;
  for (const line of lines.slice(1)) {
    if (line === "") {
      breaks++;
      continue;
    }
    out += breaks > 0 ? "\n".repeat(breaks) : " ";
    out += line;
    breaks = 0;
  }
  return out;
}

/** Converts a resolved scalar to a JS value (used for manifests and Jobs). */
export function scalarValue(s: YScalar): unknown {
  switch (s.tag) {
    case "!!null":
      return null;
    case "!!bool":
      return /^(true|True|TRUE)$/.test(s.text);
    case "!!int": {
      const t = s.text.replace(/_/g, "");
      const neg = t.startsWith("-");
      const body = t.replace(/^[-+]/, "");
      let v: number;
      if (/^0[xX]/.test(body)) v = parseInt(body.slice(2), 16);
      else if (/^0[oO]/.test(body)) v = parseInt(body.slice(2), 8);
      else if (/^0[bB]/.test(body)) v = parseInt(body.slice(2), 2);
      else if (/^0[0-7]+$/.test(body)) v = parseInt(body.slice(1), 8);
      else v = parseInt(body, 10);
      return neg ? -v : v;
    }
    case "!!float": {
      const t = s.text.replace(/_/g, "");
      if (/nan/i.test(t)) return NaN;
      if (/inf/i.test(t)) return t.startsWith("-") ? -Infinity : Infinity;
      return Number(t);
    }
    default:
      return s.text;
  }
}

/** Converts a node tree to plain JS values (maps become objects, in key order). */
export function toJS(n: YNode): unknown {
  if (n.kind === "scalar") return scalarValue(n);
  if (n.kind === "seq") return n.items.map(toJS);
  const o: Record<string, unknown> = {};
  for (const e of n.entries) {
    Object.defineProperty(o, e.key, { value: toJS(e.value), enumerable: true, writable: true, configurable: true });
  }
  return o;
}

class Converter {
  aliasNodes = 0;
  constructor(
    private readonly doc: Document.Parsed,
    private readonly lines: LineIndex,
    private readonly limits: YamlLimits,
    private readonly errors: { pos: Pos; message: string }[],
  ) {}

  private pos(node: { range?: [number, number, number] | null } | null | undefined, fallback: Pos): Pos {
    const r = node?.range;
    return r ? this.lines.pos(r[0]) : fallback;
  }

  convert(node: unknown, depth: number, inAlias: boolean, fallback: Pos, seen: Set<unknown>): YNode {
    if (depth > this.limits.maxDepth) throw new YamlStreamError(msg.decodeTemplate(msg.tooDeep(this.limits.maxDepth)), fallback);
    if (inAlias && ++this.aliasNodes > this.limits.maxAliasNodes) {
      throw new YamlStreamError(msg.decodeTemplate(msg.excessiveAliasing), fallback);
    }
    if (node === null || node === undefined) return new YScalar("!!null", "", fallback);
    if (isAlias(node)) {
      const target = node.resolve(this.doc);
      const p = this.pos(node as never, fallback);
      if (target === undefined || seen.has(target)) return new YScalar("!!null", "", p);
      seen.add(target);
      try {
        return this.convert(target, depth, true, p, seen);
      } finally {
        seen.delete(target);
      }
    }
    const p = this.pos(node as never, fallback);
    const explicit = (node as YamlLibNode).tag;
    if (isScalar(node)) {
      const s = node as Scalar;
      const raw = (s as Scalar & { srcToken?: { source?: string } }).srcToken?.source;
      const src = raw !== undefined && s.type === Scalar.PLAIN ? foldPlain(raw) : raw;
      const text = typeof s.value === "string" ? s.value : src ?? String(s.value ?? "");
      let tag: string;
      if (explicit && explicit !== "!") tag = shortTag(explicit);
      else if (explicit === "!" || (s.type !== undefined && s.type !== Scalar.PLAIN)) tag = "!!str";
      else tag = resolvePlain(src ?? text);
      return new YScalar(tag, s.type === Scalar.PLAIN && src !== undefined ? src : text, p);
    }
    if (isSeq(node)) {
      const seq = new YSeq(p, explicit ? shortTag(explicit) : "!!seq");
      for (const item of node.items) seq.items.push(this.convert(item, depth + 1, inAlias, p, seen));
      return seq;
    }
    if (isMap(node)) {
      const map = new YMap(p, explicit ? shortTag(explicit) : "!!map");
      const firstLine = new Map<string, number>();
      const merges: YNode[] = [];
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const kp = this.pos(pair.key as never, p);
        const keyNode = this.convert(pair.key, depth + 1, inAlias, p, seen);
        const value = this.convert(pair.value, depth + 1, inAlias, kp, seen);
        if (keyNode.kind !== "scalar") {
          this.errors.push({ pos: kp, message: construct.cannotConstruct(keyNode.tag, undefined, "string") });
          continue;
        }
        // `<<` is a merge key when plain and untagged (go-yaml resolves it to !!merge)
        if (keyNode.text === "<<" && isScalar(pair.key) && (pair.key as Scalar).type === Scalar.PLAIN && !(pair.key as Scalar).tag) {
          merges.push(value);
          continue;
        }
        const prev = firstLine.get(keyNode.text);
        if (prev !== undefined) {
          map.duplicate = true;
          this.errors.push({ pos: kp, message: construct.duplicateKey(keyNode.text, prev) });
          continue;
        }
        firstLine.set(keyNode.text, kp.line);
        map.entries.push({ key: keyNode.text, keyPos: kp, value });
      }
      // `<<` merge keys: merged entries never override keys written in the mapping itself.
      for (const m of merges) {
        const sources = m.kind === "seq" ? m.items : [m];
        for (const src of sources) {
          if (src.kind !== "map") {
            this.errors.push({ pos: src.pos, message: construct.cannotConstruct(src.tag, src.kind === "scalar" ? src.text : undefined, "map") });
            continue;
          }
          for (const e of src.entries) {
            if (!firstLine.has(e.key)) {
              firstLine.set(e.key, e.keyPos.line);
              map.entries.push({ ...e, merged: true });
            }
          }
        }
      }
      return map;
    }
    return new YScalar("!!null", "", p);
  }
}

/** go-yaml's numeric node kinds, as they appear in Omni's messages. */
export function nodeKindNumber(n: YNode | undefined, isAliasRoot = false): number {
  if (isAliasRoot) return 16;
  if (n === undefined) return 8;
  return n.kind === "map" ? 4 : n.kind === "seq" ? 2 : 8;
}

/** Parses a YAML stream into documents; throws YamlStreamError for stream-level failures (syntax, limits). */
export function parseYamlStream(input: string | Uint8Array, limits: YamlLimits = DEFAULT_LIMITS): YamlStream {
  const text = decodeInput(input, limits);
  const lines = new LineIndex(text);
  const bad = NOT_PRINTABLE.exec(text);
  if (bad) throw new YamlStreamError(msg.decodeTemplate(msg.controlCharacters), lines.pos(bad.index));
  checkDepth(text, limits.maxDepth, lines);
  let parsed: Document.Parsed[];
  try {
    parsed = parseAllDocuments(text, {
      schema: "failsafe",
      uniqueKeys: false,
      merge: false,
      prettyErrors: false,
      keepSourceTokens: true,
      strict: false,
    }) as Document.Parsed[];
  } catch (err) {
    throw new YamlStreamError(msg.decodeTemplate(`yaml: ${(err as Error).message}`));
  }
  if (parsed.length > limits.maxDocuments) throw new YamlStreamError(msg.decodeTemplate(msg.tooManyDocuments(limits.maxDocuments)));
  const docs: YDoc[] = [];
  let aliasBudget = limits.maxAliasNodes;
  for (let i = 0; i < parsed.length; i++) {
    const d = parsed[i]!;
    if (d.errors.length > 0) {
      const e = d.errors[0]!;
      const p = lines.pos(e.pos[0]);
      throw new YamlStreamError(msg.decodeTemplate(msg.yamlSyntax(p.line, e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, ""))), p);
    }
    const pos = lines.pos(d.range[0]);
    const contentsStart = d.contents?.range?.[0] ?? d.range[0];
    let contentLine = pos.line;
    if (d.directives?.docStart) contentLine = Math.min(lines.pos(contentsStart).line, pos.line + 1);
    const constructErrors: { pos: Pos; message: string }[] = [];
    const conv = new Converter(d, lines, { ...limits, maxAliasNodes: aliasBudget }, constructErrors);
    const rootIsAlias = isAlias(d.contents);
    const root = d.contents === null ? undefined : conv.convert(d.contents, 0, false, pos, new Set());
    aliasBudget -= conv.aliasNodes;
    docs.push({ index: i, pos, contentLine, root, rootIsAlias, constructErrors });
  }
  return { docs, lines };
}

/** Parses one embedded YAML text (a Job or manifest) into documents of plain JS values, with the same limits. */
export function parseEmbeddedYaml(text: string, limits: YamlLimits = DEFAULT_LIMITS): { nodes: (YNode | undefined)[] } {
  const s = parseYamlStream(text, limits);
  return { nodes: s.docs.map((d) => d.root) };
}
