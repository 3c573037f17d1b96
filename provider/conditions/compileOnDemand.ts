// compile.ts's compileCondition, with the CEL library (~50 ms of a provider process's start) loaded on the first
// condition compiled: most programs have no condition gate, and every preview and up starts a provider process.
import type * as Compile from "./compile";

let compile: typeof Compile | undefined;

export function compileCondition(...args: Parameters<typeof Compile.compileCondition>): ReturnType<typeof Compile.compileCondition> {
  compile ??= require("./compile") as typeof Compile;
  return compile.compileCondition(...args);
}
