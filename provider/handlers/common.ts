// Helpers shared by the resource handlers: Pulumi's unknown sentinel, partial-failure errors, bounded cluster calls.
import type * as pulumi from "@pulumi/pulumi";

export type Props = Record<string, any>;

/** The value `check` and `diff` see for inputs not known during preview (pulumi.runtime.unknownValue). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** True if the value, or anything inside it, is not known yet (preview of a value computed by another resource). */
export function hasUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (Array.isArray(v)) return v.some(hasUnknown);
  if (v && typeof v === "object") return Object.values(v).some(hasUnknown);
  return false;
}

export type CheckFailure = pulumi.dynamic.CheckFailure;

/**
 * An error that makes Pulumi save `properties` as the resource's outputs although the operation failed (partial
 * state): the host recognizes it by `id` and `properties` (duck typing). `__provider` must be carried over, or later
 * refreshes and deletes of the resource could not load its provider.
 */
export class PartialFailure extends Error {
  readonly reasons: string[];
  constructor(readonly id: string, readonly properties: Props, message: string) {
    super(message);
    this.reasons = [message];
  }
}

/** Stable JSON for comparing inputs (object keys sorted). */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, val) =>
    val && typeof val === "object" && !Array.isArray(val)
      ? Object.fromEntries(Object.keys(val).sort().map((k) => [k, val[k]]))
      : val);
}

export function changed(olds: Props, news: Props, keys: readonly string[]): string[] {
  return keys.filter((k) => canonical(olds[k] ?? null) !== canonical(news[k] ?? null));
}

/** Runs `fn`, failing with `what` after `ms` (cluster calls during preview must not hang a PR pipeline). */
export async function withTimeout<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000}s`)), ms);
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

export function errorText(err: unknown): string {
  return (err as Error)?.message ?? String(err);
}
