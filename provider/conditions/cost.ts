// The cost bound of a condition, checked at preview: how deeply its comprehensions nest, and at run time how many
// objects a selection may hold for that nesting. `objects.all(a, objects.all(b, …))` over 3,000 objects is 9 million
// steps (6 s per watch event); five nested `.map` over a 100-element list never ends. Depth multiplies, so depth is
// what is bounded; the wall-clock budget (sandbox.ts) catches what no static bound can (a backtracking regex). PURE.

/** The comprehension macros of CEL (cel-js 8 `lib/macros.js`: `list.all/exists/exists_one/map/filter(ast, …)`). */
const COMPREHENSIONS = new Set(["all", "exists", "exists_one", "map", "filter"]);

/** At most this many comprehensions inside one another (a loop over pairs of objects is the deepest a gate needs). */
export const MAX_NESTING = 2;

/**
 * The most objects a selection may hold, by the expression's nesting: one pass over 10,000 objects is cheap, pairs of
 * 1,000 are a million steps (about 0.7 s in cel-js 8 on one core), which the budget still allows.
 */
export function maxSelection(nesting: number): number {
  return nesting >= 2 ? 1_000 : 10_000;
}

interface AstNode {
  op: string;
  args: unknown;
}
const isNode = (v: unknown): v is AstNode => v !== null && typeof v === "object" && typeof (v as AstNode).op === "string" && "args" in (v as object);

/**
 * The deepest nesting of comprehensions in a parsed cel-js AST. A macro is an `rcall` node `[name, receiver, args]`:
 * its arguments (the predicate or transform) run once per element, so they count one level deeper; its receiver runs
 * once, at the macro's own level (`objects.map(…).all(…)` is two loops one after the other, depth 1).
 */
export function comprehensionNesting(ast: unknown): number {
  const walk = (v: unknown): number => {
    if (Array.isArray(v)) return v.reduce((m: number, x) => Math.max(m, walk(x)), 0);
    if (!isNode(v)) return 0;
    if (v.op === "rcall" && Array.isArray(v.args) && COMPREHENSIONS.has(v.args[0] as string)) {
      const [, receiver, args] = v.args as [string, unknown, unknown];
      return Math.max(walk(receiver), 1 + walk(args));
    }
    return typeof v.args === "object" ? walk(v.args) : 0;
  };
  return walk(ast);
}
