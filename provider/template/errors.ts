// Error tree that renders exactly like Omni's aggregated errors (go-multierror lists, prefixes, errors.Join), plus
// the flat list {document, path, message} that tools and the Pulumi layer consume.
import { multiErrorText } from "./messages";

/** One problem: which document, which field, what is wrong (and where in the file, when known). */
export interface TemplateError {
  /** Document that holds the problem, e.g. `document 1 (Cluster "prod")`; `template` for cross-document rules. */
  document: string;
  /** Field path inside the document, e.g. `kubernetes.healthchecks[0].interval` (empty for the whole document). */
  path: string;
  message: string;
  /** 1-based position in the template file, when known. */
  line?: number;
  column?: number;
}

export interface Where {
  document: string;
  path: string;
  line?: number;
  column?: number;
}

/** A node of the error tree. */
export type ErrNode =
  | { type: "leaf"; text: string; where: Where }
  /** go-multierror list; with a prefix it renders as `prefix + list` and is never flattened into its parent. */
  | { type: "multi"; prefix?: string; children: ErrNode[] }
  /** errors.Join: children joined with "\n". */
  | { type: "join"; children: ErrNode[] };

export function leaf(text: string, where: Where): ErrNode {
  return { type: "leaf", text, where };
}

/** A go-multierror list builder with the flattening rule of multierror.Append. */
export class MultiError {
  readonly children: ErrNode[] = [];
  add(node: ErrNode | undefined): this {
    if (node === undefined) return this;
    if (node.type === "multi" && node.prefix === undefined) {
      for (const c of node.children) this.add(c);
    } else if (node.type === "join" && node.children.length === 0) {
      // nothing
    } else {
      this.children.push(node);
    }
    return this;
  }
  get empty(): boolean {
    return this.children.length === 0;
  }
  /** `prefix + list` (nil when empty, as ErrorOrNil()). */
  wrapped(prefix: string): ErrNode | undefined {
    return this.empty ? undefined : { type: "multi", prefix, children: this.children };
  }
  node(): ErrNode | undefined {
    return this.empty ? undefined : { type: "multi", children: this.children };
  }
}

export function join(children: (ErrNode | undefined)[]): ErrNode | undefined {
  const kept = children.filter((c): c is ErrNode => c !== undefined);
  return kept.length === 0 ? undefined : { type: "join", children: kept };
}

export function render(node: ErrNode): string {
  switch (node.type) {
    case "leaf":
      return node.text;
    case "multi":
      return (node.prefix ?? "") + multiErrorText(node.children.map(render));
    case "join":
      return node.children.map(render).join("\n");
  }
}

export function flatten(node: ErrNode | undefined, out: TemplateError[] = []): TemplateError[] {
  if (node === undefined) return out;
  if (node.type === "leaf") {
    const e: TemplateError = { document: node.where.document, path: node.where.path, message: node.text };
    if (node.where.line !== undefined) {
      e.line = node.where.line;
      e.column = node.where.column;
    }
    out.push(e);
  } else {
    for (const c of node.children) flatten(c, out);
  }
  return out;
}

/**
 * All errors of a template. `message` is Omni's aggregated text (as `omnictl cluster template validate` prints it
 * after `Error: `); `errors` lists every problem with its document and field path.
 */
export class TemplateValidationError extends Error {
  readonly errors: TemplateError[];
  constructor(message: string, errors: TemplateError[]) {
    super(message);
    this.name = "TemplateValidationError";
    this.errors = errors;
  }
  static fromTree(tree: ErrNode): TemplateValidationError {
    return new TemplateValidationError(render(tree), flatten(tree));
  }
}
