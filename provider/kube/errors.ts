// Reading errors of @kubernetes/client-node: HTTP status, the API server's own message (a metav1.Status), and whether
// retrying can help. The client's ApiException text includes response headers and the raw body; it never reaches a
// user message — only the Status `message` does.

import type { PortError, PortErrorKind } from "../rollout/ports";

/** An error of the Kubernetes port: a user-facing message plus the HTTP status (if the API server answered). */
export class KubeError extends Error implements PortError {
  constructor(
    message: string,
    /** HTTP status of the failed request, undefined for network errors. */
    readonly status?: number,
    /** The Status `reason` (NotFound, AlreadyExists, Forbidden, Invalid, TooManyRequests, ...). */
    readonly reason?: string,
  ) {
    super(message);
    this.name = "KubeError";
  }

  get retryable(): boolean {
    return this.status !== undefined && isTransientStatus(this.status);
  }

  /** No status (no answer), 429 and 5xx: unavailable; 403 and 401 forbidden; 404 and 410 not-found; 409 conflict. */
  get kind(): PortErrorKind {
    const s = this.status;
    if (s === undefined || s === 429 || s >= 500) return "unavailable";
    if (s === 401 || s === 403) return "forbidden";
    if (s === 404 || s === 410) return "not-found";
    if (s === 409) return "conflict";
    return "refused";
  }
}

interface StatusBody {
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: Array<{ reason?: string; message?: string; field?: string }> };
}

/** HTTP status of a failed client-node request (ApiException.code, Watch errors' statusCode). */
export function statusOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === "number") return e.code;
  if (typeof e.statusCode === "number") return e.statusCode;
  return undefined;
}

/** The metav1.Status body of a failed request, if the API server sent one. */
export function statusBody(err: unknown): StatusBody | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  let body = (err as { body?: unknown }).body;
  if (typeof body === "string") {
    try {
      body = JSON.parse(body);
    } catch {
      const text = (body as string).trim();
      return text ? { message: text.slice(0, 500) } : undefined;
    }
  }
  if (typeof body === "object" && body !== null) return body as StatusBody;
  return undefined;
}

export function reasonOf(err: unknown): string | undefined {
  return statusBody(err)?.reason;
}

/**
 * What the API server said, for a user message: the Status message, else a short description of a network error.
 * Never the raw exception text (it carries response headers).
 */
/**
 * Removes what may be a credential from text that reaches a user (plan output posted on pull requests, status, logs):
 * JWTs (id_tokens, ServiceAccount tokens), bearer tokens, PEM blocks and long base64 runs. An exec plugin's stderr
 * or an API server's message can hold any of them.
 */
export function redactSecrets(text: string): string {
  return text
    .replace(/-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(-----END [A-Z0-9 ]+-----|$)/g, "[redacted PEM]")
    .replace(/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}(\.[A-Za-z0-9_-]*)?/g, "[redacted token]")
    .replace(/\b(Bearer|Basic)\s+(?!\[redacted)[A-Za-z0-9._~+/=-]{8,}/gi, "$1 [redacted]")
    .replace(/\b((?:access|id|refresh)?_?token|password|secret)(["']?\s*[:=]\s*["']?)(?!\[redacted)[^\s"',;}]{8,}/gi, "$1$2[redacted]")
    .replace(/[A-Za-z0-9+/]{100,}={0,2}|[A-Za-z0-9_-]{100,}/g, "[redacted]");
}

export function apiMessage(err: unknown): string {
  return redactSecrets(rawApiMessage(err));
}

function rawApiMessage(err: unknown): string {
  if (err instanceof KubeError) return err.message;
  const body = statusBody(err);
  if (body?.message) return body.message;
  const status = statusOf(err);
  if (status !== undefined) return `HTTP ${status}`;
  // The only signal on a request is the port's request timeout (client.ts): node-fetch reports it as a user abort.
  if ((err as { name?: unknown })?.name === "AbortError" || (err as { type?: unknown })?.type === "aborted") {
    return "no answer from the API server before the request timed out";
  }
  const e = err as { code?: unknown; errno?: unknown; message?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.code === "string" ? e.code : typeof e?.cause?.code === "string" ? e.cause.code : undefined;
  const text = typeof e?.message === "string" ? e.message.split("\n")[0] : String(err);
  return code && !text.includes(code) ? `${text} (${code})` : text;
}

export const isNotFound = (err: unknown): boolean => statusOf(err) === 404;
export const isConflict = (err: unknown): boolean => statusOf(err) === 409;
export const isAlreadyExists = (err: unknown): boolean => statusOf(err) === 409 && reasonOf(err) === "AlreadyExists";
export const isGone = (err: unknown): boolean => statusOf(err) === 410;

/**
 * Worth retrying: no answer at all (connection refused/reset while the API server restarts), 429, 5xx, and 409
 * conflicts that are not AlreadyExists (optimistic concurrency).
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof KubeError) return err.status === undefined ? false : isTransientStatus(err.status);
  const status = statusOf(err);
  if (status === undefined) return true;
  return isTransientStatus(status);
}

function isTransientStatus(status: number): boolean {
  return status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
}

export { sleep } from "../sleep";

/** Exponential backoff with jitter: base, 2×base, ... capped at max. */
export function backoffMs(attempt: number, base = 100, max = 1000): number {
  const raw = Math.min(max, base * 2 ** Math.min(attempt, 16));
  return Math.round(raw * (0.8 + Math.random() * 0.4));
}
