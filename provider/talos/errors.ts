// Classified errors of the Talos port. `retryable` says whether trying again later can help (node rebooting,
// call cut short, a transient refusal by Talos); everything else needs a human (credentials, roles, images, node
// state, an etcd that cannot keep quorum).
// The status codes alone (grpc-js' constants module): loading all of grpc-js costs every provider start ~0.1 CPU-s,
// and most operations (checks, diffs, a Healthcheck's create) never call Talos.
import { Status } from "@grpc/grpc-js/build/src/constants";
import { msg } from "./messages";
import type { PortError, PortErrorKind } from "../rollout/ports";

export type TalosErrorCode =
  // retryable: the node or endpoint is busy rebooting, or the call was cut short
  | "UNAVAILABLE" | "CANCELLED" | "DEADLINE_EXCEEDED" | "STREAM_ENDED" | "ABORTED"
  // retryable: Talos refused for now (transient refusals, retried within nodeTimeout)
  | "MUTEX_BUSY" | "IN_PROGRESS" | "ETCD_UNHEALTHY"
  // permanent
  | "PERMISSION_DENIED" | "UNAUTHENTICATED" | "CERTIFICATE" | "FAILED_PRECONDITION" | "NOT_FOUND" | "UNIMPLEMENTED"
  | "INVALID_ARGUMENT" | "INSTALLER_EXIT" | "SEQUENCE_FAILED" | "LOCKED" | "ROLLED_BACK" | "TIMEOUT" | "ETCD_QUORUM"
  | "TARGET_UNKNOWN" | "CONFIG" | "INTERNAL" | "TALOS_TOO_OLD" | "UNKNOWN";

/** Refusals by Talos that go away by themselves: the same call may be sent again a little later. */
const TRANSIENT_REFUSALS: ReadonlySet<TalosErrorCode> = new Set<TalosErrorCode>(["MUTEX_BUSY", "IN_PROGRESS", "ETCD_UNHEALTHY"]);

const RETRYABLE: ReadonlySet<TalosErrorCode> = new Set<TalosErrorCode>([
  "UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED", "STREAM_ENDED", "ABORTED", ...TRANSIENT_REFUSALS,
]);

const KIND: Partial<Record<TalosErrorCode, PortErrorKind>> = {
  UNAVAILABLE: "unavailable", CANCELLED: "unavailable", DEADLINE_EXCEEDED: "unavailable", STREAM_ENDED: "unavailable", ABORTED: "unavailable",
  MUTEX_BUSY: "conflict", IN_PROGRESS: "conflict", LOCKED: "conflict", ETCD_UNHEALTHY: "unavailable",
  PERMISSION_DENIED: "forbidden", UNAUTHENTICATED: "forbidden", CERTIFICATE: "forbidden",
  NOT_FOUND: "not-found",
};

export class TalosError extends Error implements PortError {
  override readonly name = "TalosError";
  readonly retryable: boolean;
  /** What the server (or grpc-js) said, redacted; undefined for errors made up locally. */
  readonly detail?: string;
  /**
   * The call reached the node and its connection broke before the answer: it may have been processed. An action
   * (Reboot, Upgrade) that fails this way may have started, and must not be sent again without checking.
   */
  readonly maybeProcessed: boolean;
  /** No endpoint could be reached at all: the request never left this process (safe to send again). */
  readonly unsent: boolean;
  constructor(
    readonly code: TalosErrorCode,
    message: string,
    readonly node?: string,
    /** gRPC status code, when the error came from a call. */
    readonly grpcCode?: number,
    extra: { detail?: string; maybeProcessed?: boolean; unsent?: boolean } = {},
  ) {
    super(redact(message));
    this.retryable = RETRYABLE.has(code);
    this.detail = extra.detail;
    this.maybeProcessed = extra.maybeProcessed ?? false;
    this.unsent = !this.maybeProcessed && (extra.unsent ?? false);
  }

  /** The port's kind of this error (every code not named in KIND: refused). */
  get kind(): PortErrorKind {
    return KIND[this.code] ?? "refused";
  }

  /** The same error, marked as possibly processed by the node (or as never sent). */
  with(extra: { maybeProcessed?: boolean; unsent?: boolean }): TalosError {
    return new TalosError(this.code, this.message, this.node, this.grpcCode, { detail: this.detail, ...extra });
  }
}

/** Talos refused an action for now (upgrade mutex held, another installation running, etcd not healthy yet). */
export function isTransientRefusal(err: unknown): boolean {
  return err instanceof TalosError && TRANSIENT_REFUSALS.has(err.code);
}

/** Removes PEM blocks and long base64 runs (key or certificate material) from text that may reach a user. */
export function redact(text: string): string {
  return text
    .replace(/-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(-----END [A-Z0-9 ]+-----|$)/g, "[redacted PEM]")
    .replace(/[A-Za-z0-9+/]{120,}={0,2}/g, "[redacted]");
}

/**
 * Words that name a certificate problem. Not "handshake" or "alert" alone: a node mid-reboot fails the TLS handshake
 * too (apid's proxy: `transport: authentication handshake failed: EOF`, or `... read: connection reset by peer`, from
 * grpc-go's dial to the target's apid in internal/app/apid/pkg/backend/apid.go, talos v1.13.4) and must be waited
 * for, not reported as a wrong talosconfig.
 */
const CERT_PATTERNS = [
  /certificate/i, /x509/i, /self[- ]signed/i, /unable to verify/i, /unable to get (local )?issuer/i, /unknown ca/i,
  /ERR_TLS_CERT/i, /wrong signature/i, /CERT_/,
];

/**
 * apid's proxy could not open a connection to the target node at all (grpc-go's dial or TLS handshake failed before
 * any stream: google.golang.org/grpc v1.79.3 internal/transport/http2_client.go newHTTP2Client, "transport: Error
 * while dialing: %v" / "transport: authentication handshake failed: %v"): the request never reached the node, so
 * sending it again is safe.
 */
const NOT_DELIVERED = /transport: (Error while dialing|authentication handshake failed)/;

/** The "what happened" part of a grpc-js error: the status details without grpc-js' "14 UNAVAILABLE: " prefix. */
function detailOf(err: { details?: string; message?: string }): string {
  const d = err.details || err.message || "";
  return redact(d.replace(/^\d+ [A-Z_]+: /, "")).slice(0, 600);
}

/** Talos' etcd refusals that cannot pass by waiting (internal/pkg/etcd ValidateForUpgrade). */
const ETCD_QUORUM = /insufficient to maintain quorum|only 1 etcd member found/i;
/**
 * Talos' etcd refusals that pass once every member is healthy again (a member catching up after its node booted), and
 * etcd's own transient errors passed through by Talos (ValidateForUpgrade's MemberList, internal/pkg/etcd/etcd.go,
 * talos v1.13.4; etcd api v3.6.8 v3rpc/rpctypes/error.go ErrGRPCTimeout "etcdserver: request timed out" and its variants).
 */
const ETCD_UNHEALTHY = /etcd member \S+ is not (healthy|started)|etcdserver: no leader|etcdserver: request timed out/i;

export interface GrpcLikeError {
  code?: number | string;
  details?: string;
  message?: string;
}

/** Turns any error of a call into a TalosError naming the node and the operation. */
export function classify(err: unknown, node: string, op: string): TalosError {
  if (err instanceof TalosError) return err;
  const e = (err ?? {}) as GrpcLikeError;
  const code = typeof e.code === "number" ? e.code : undefined;
  const detail = detailOf(e);
  const make = (c: TalosErrorCode, m: string) => new TalosError(c, m, node, code, { detail });
  if (code === undefined) {
    if (typeof e.code === "string" && /^ERR_(OSSL|TLS|SSL)|CERT/.test(e.code)) return make("CERTIFICATE", msg.certificate(node, op, detail));
    return make("UNKNOWN", msg.local(node, op, detail || String(err)));
  }
  switch (code) {
    case Status.UNAVAILABLE:
      // etcd answers Unavailable "etcdserver: no leader" through a live node: not a reachability problem
      if (ETCD_UNHEALTHY.test(detail)) return make("ETCD_UNHEALTHY", msg.etcdUnhealthy(node, op, detail));
      if (CERT_PATTERNS.some((p) => p.test(detail))) return make("CERTIFICATE", msg.certificate(node, op, detail));
      if (NOT_DELIVERED.test(detail)) return new TalosError("UNAVAILABLE", msg.unavailable(node, op, detail), node, code, { detail, unsent: true });
      return make("UNAVAILABLE", msg.unavailable(node, op, detail));
    case Status.CANCELLED:
      return make("CANCELLED", msg.cancelled(node, op));
    case Status.DEADLINE_EXCEEDED:
      return make("DEADLINE_EXCEEDED", msg.deadline(node, op));
    case Status.PERMISSION_DENIED:
      return make("PERMISSION_DENIED", msg.permissionDenied(node, op, detail));
    case Status.UNAUTHENTICATED:
      return make("UNAUTHENTICATED", msg.unauthenticated(node, op, detail));
    case Status.FAILED_PRECONDITION:
      if (/another installation\/upgrade is already in progress/i.test(detail)) return make("IN_PROGRESS", msg.inProgress(node, op, detail));
      return make("FAILED_PRECONDITION", msg.failedPrecondition(node, op, detail));
    case Status.NOT_FOUND:
      return make("NOT_FOUND", msg.notFound(node, op, detail));
    case Status.UNIMPLEMENTED:
      return make("UNIMPLEMENTED", msg.unimplemented(node, op));
    case Status.INVALID_ARGUMENT:
      return make("INVALID_ARGUMENT", msg.invalidArgument(node, op, detail));
    case Status.RESOURCE_EXHAUSTED:
      // grpc-js' mapping of a GOAWAY ENHANCE_YOUR_CALM (e.g. apid's "too_many_pings"): the connection was closed
      if (/Bandwidth exhausted/i.test(detail)) return make("UNAVAILABLE", msg.unavailable(node, op, detail));
      return make("UNKNOWN", msg.failed(node, op, "RESOURCE_EXHAUSTED", detail));
    case Status.INTERNAL:
      // grpc-js reports a stream reset by a rebooting peer as INTERNAL "Received RST_STREAM ..."
      if (/RST_STREAM|Connection dropped|ECONNRESET/i.test(detail)) return make("UNAVAILABLE", msg.unavailable(node, op, detail));
      return make("INTERNAL", msg.failed(node, op, "INTERNAL", detail));
    default:
      if (/upgrade mutex/i.test(detail)) return make("MUTEX_BUSY", msg.mutexBusy(node, op, detail));
      if (ETCD_QUORUM.test(detail)) return make("ETCD_QUORUM", msg.etcdQuorum(node, op, detail));
      if (ETCD_UNHEALTHY.test(detail)) return make("ETCD_UNHEALTHY", msg.etcdUnhealthy(node, op, detail));
      if (/error validating installer image|error pulling image/i.test(detail)) return make("NOT_FOUND", msg.notFound(node, op, detail));
      if (CERT_PATTERNS.slice(0, 6).some((p) => p.test(detail))) return make("CERTIFICATE", msg.certificate(node, op, detail));
      return make("UNKNOWN", msg.failed(node, op, Status[code] ?? String(code), detail));
  }
}

export function isRetryable(err: unknown): boolean {
  return err instanceof TalosError && err.retryable;
}
