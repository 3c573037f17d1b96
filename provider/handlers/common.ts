// Helpers shared by the resource handlers: Pulumi's unknown sentinel, partial-failure errors, bounded cluster calls.
import type * as pulumi from "@pulumi/pulumi";
import { canonical } from "../resources/model";
import * as msg from "./messages";

/** Properties as Pulumi passes them: inputs (check, diff, create, update) or state (read, delete, a diff's olds). */
export type Properties = Record<string, unknown>;

export { canonical, hasUnknown, UNKNOWN } from "../resources/model";

/** The resource's URN from its properties, when the SDK set it (diagnostics land on its row). */
export function urnOf(p: Properties): string | undefined {
  return typeof p.resourceUrn === "string" ? p.resourceUrn : undefined;
}

export type CheckFailure = pulumi.dynamic.CheckFailure;

/**
 * An error that makes Pulumi save `properties` as the resource's outputs although the operation failed (partial
 * state): the host recognizes it by `id` and `properties` (duck typing). `__provider` must be carried over, or later
 * refreshes and deletes of the resource could not load its provider.
 */
export class PartialFailure extends Error {
  readonly reasons: string[];
  constructor(readonly id: string, readonly properties: Properties, message: string) {
    super(message);
    this.reasons = [message];
  }
}

export function changed(olds: Properties, news: Properties, keys: readonly string[]): string[] {
  return keys.filter((k) => canonical(olds[k] ?? null) !== canonical(news[k] ?? null));
}

/** Runs `fn`, failing with `what` after `ms` (cluster calls during preview must not hang a PR pipeline). */
export async function withTimeout<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(msg.noAnswer(what, ms))), ms);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** One progress line on the provider's stdout: the Pulumi CLI shows it on the stack row and under Diagnostics. */
export function progress(line: string): void {
  process.stdout.write(line + "\n");
}

export { errorText } from "../errorText";
