// What every document kind's validation shares: field paths as Omni prints them, the line/column of a path in the
// YAML, the reserved label/annotation prefixes, inline content as manifest text, and a document's labels for its model.
import { stringify } from "yaml";
import * as M from "../messages";
import { leaf, type ErrNode, type Where } from "../errors";
import { toJS, type Pos, type YNode } from "../yamlnodes";
import type { Descriptors, InlineContent } from "../schema";

export type Seg = string | number;

export function formatPath(path: readonly Seg[]): string {
  let out = "";
  for (const s of path) {
    if (typeof s === "number") out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(s)) out += out === "" ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

/** Position of the node at `path` (for a missing key, its parent); `key` gives the key's own position. */
export function locate(root: YNode | undefined, path: readonly Seg[], key?: string): Pos | undefined {
  let n: YNode | undefined = root;
  let pos = root?.pos;
  for (const s of path) {
    if (n === undefined) break;
    if (n.kind === "map" && typeof s === "string") {
      const e = n.entries.find((x) => x.key === s);
      if (!e) break;
      pos = e.value.kind === "scalar" ? e.value.pos : e.keyPos;
      n = e.value;
    } else if (n.kind === "seq" && typeof s === "number") {
      n = n.items[s];
      if (n) pos = n.pos;
    } else break;
  }
  if (key !== undefined && n?.kind === "map") {
    const e = n.entries.find((x) => x.key === key);
    if (e) pos = e.keyPos;
  }
  return pos && pos.line > 0 ? pos : undefined;
}

export class DocContext {
  constructor(
    readonly document: string,
    readonly root: YNode | undefined,
  ) {}
  where(path: readonly Seg[], key?: string): Where {
    const pos = locate(this.root, path, key);
    const w: Where = { document: this.document, path: formatPath(key === undefined ? path : [...path, key]) };
    if (pos) {
      w.line = pos.line;
      w.column = pos.col;
    }
    return w;
  }
  leaf(text: string, path: readonly Seg[], key?: string): ErrNode {
    return leaf(text, this.where(path, key));
  }
}

export function checkDescriptors(ctx: DocContext, d: Descriptors, base: readonly Seg[]): ErrNode[] {
  const out: ErrNode[] = [];
  for (const [field, build] of [["labels", M.descriptors.reservedLabel], ["annotations", M.descriptors.reservedAnnotation]] as const) {
    for (const key of Object.keys(d[field] ?? {})) {
      const prefix = M.RESERVED_PREFIXES.find((p) => key.startsWith(p));
      if (prefix) out.push(ctx.leaf(build(key, prefix), [...base, field], key));
    }
  }
  return out;
}

function yamlText(value: unknown): string {
  return stringify(value, { sortMapEntries: true, lineWidth: 0 });
}

/** The manifest text of inline content: verbatim string, or the mapping(s) re-encoded (sorted keys, as Omni). */
export function inlineText(c: InlineContent): string {
  switch (c.form) {
    case "string":
      return c.text;
    case "mapping":
      return yamlText(toJS(c.node));
    case "sequence":
      return c.nodes.map((n) => yamlText(toJS(n))).join("---\n");
  }
}

export function labelsOf(d: Descriptors): { labels: Record<string, string>; annotations: Record<string, string> } {
  return { labels: { ...(d.labels ?? {}) }, annotations: { ...(d.annotations ?? {}) } };
}
