// Input fields more than one resource kind has, each a zod schema that carries its check (wording from messages.ts)
// and gives the parsed value: a cluster name that can name Kubernetes objects, a bounded Go duration.
import { z } from "zod";
import { MAX_TIMER_MS, MAX_TIMER_TEXT, parseDuration } from "../template/duration";
import { dnsLabelErrors } from "../template/formats";
import { fail } from "./model";
import * as msg from "./messages";

/**
 * Why a cluster name cannot name the cluster's Kubernetes objects (the Lease `talos-gate-<name>`, the status ConfigMap,
 * a label value: a DNS-1123 label), or undefined when it can. "Prod" or "prod_eu" would pass preview and fail at the
 * Lease with a 422 otherwise.
 */
export function clusterNameProblem(field: string, v: unknown): string | undefined {
  if (typeof v !== "string" || v === "") return msg.required(field, "the cluster's name");
  const problems = dnsLabelErrors(v, (n) => `is longer than ${n} characters`, "has characters Kubernetes names cannot hold");
  if (problems.length === 0) return undefined;
  const suggestion = v.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 63).replace(/-+$/, "");
  return msg.clusterNameInvalid(field, v, problems.join(" and "), suggestion);
}

/** A cluster name; `field` is the property Pulumi shows a failure on (a Healthcheck's is `cluster`). */
export function clusterName(field = "clusterName") {
  return z.unknown().optional().transform((v, ctx) => {
    const problem = clusterNameProblem(field, v);
    if (problem) fail(ctx, problem, [], field === "clusterName" ? undefined : field);
    return v as string;
  });
}

export interface DurationBounds {
  /** The shortest value accepted, in ms and as the message says it. */
  min: { ms: number; text: string };
  /** The value an omitted input means; without one, an omitted input is 0. */
  default?: string;
}

/** Why a Go duration input is refused, or its value in ms. */
function durationMs(field: string, v: unknown, min: DurationBounds["min"]): { ms: number } | { problem: string } {
  if (typeof v !== "string") return { problem: msg.durationInvalid(field, v, 'use a Go duration such as "15m" or "1h30m"') };
  let ms: number;
  try {
    ms = parseDuration(v);
  } catch (err) {
    return { problem: msg.durationInvalid(field, v, (err as Error).message) };
  }
  if (ms < min.ms) return { problem: msg.durationTooShort(field, min.text) };
  if (ms > MAX_TIMER_MS) return { problem: msg.durationTooLong(field, v, MAX_TIMER_TEXT) };
  return { ms };
}

/** A Go duration input ("15m", "1h30m") within a timer's reach, parsed to ms (an omitted one: its default, else 0). */
export function goDuration(field: string, bounds: DurationBounds) {
  return z.unknown().optional().transform((given, ctx) => {
    const v = given ?? bounds.default;
    if (v === undefined) return 0;
    const r = durationMs(field, v, bounds.min);
    if ("problem" in r) {
      fail(ctx, r.problem);
      return z.NEVER;
    }
    return r.ms;
  });
}
