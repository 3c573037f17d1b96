// A small REST client for the sim's kubelet emulator, Node writer and drain.
//
// Why not the typed @kubernetes/client-node APIs here: they open a fresh TLS connection per request (a new
// https.Agent each call), which matters at 1,000 nodes, and their watch delivers raw JSON while their typed calls
// expect Date objects, so one cache cannot feed both. The sim keeps raw JSON objects (timestamps as strings, exactly
// as the server sent them) and talks to the API server over one keep-alive agent. Credentials come from the
// kubeconfig through client-node's KubeConfig, so every auth form it understands works here too.
import * as https from "node:https";
import * as k8s from "../../provider/kube/k8s";
import { simMsg } from "../messages";

/** An error answer of the API server (a metav1.Status), or a transport failure (code 0). */
export class KubeError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly status?: KubeStatus,
  ) {
    super(message);
    this.name = "KubeError";
  }
}

export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: { reason?: string; message?: string; field?: string }[] };
}

export function errorCode(err: unknown): number {
  return err instanceof KubeError ? err.code : -1;
}
export const isNotFound = (err: unknown) => errorCode(err) === 404;
export const isConflict = (err: unknown) => errorCode(err) === 409;
export const isAlreadyExists = (err: unknown) => err instanceof KubeError && err.code === 409 && err.reason === "AlreadyExists";
/** Transport errors and 5xx/429 answers that are worth retrying (API server restarting, overloaded). */
export const isTransient = (err: unknown) => {
  const c = errorCode(err);
  return c === 0 || c === 429 || c >= 500;
};

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  /** Defaults to application/json; use "application/merge-patch+json" etc. for PATCH. */
  contentType?: string;
  timeoutMs?: number;
}

export type WatchEvent = { type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR"; object: any };

export interface WatchHandle {
  /** Resolves when the server ends the stream (null) or with the error that ended it. */
  done: Promise<Error | null>;
  abort(): void;
}

const MERGE_PATCH = "application/merge-patch+json";
export { MERGE_PATCH };

export class Rest {
  private readonly agent: https.Agent;
  private readonly base: URL;
  /** The API server URL from the kubeconfig. */
  readonly server: string;
  private readonly headers: Record<string, string> = {};
  private inflight = 0;
  private readonly waiting: (() => void)[] = [];
  private closed = false;
  private readonly watches = new Set<WatchHandle>();
  requests = 0;

  private constructor(server: string, agentOpts: https.AgentOptions, headers: Record<string, string>, private readonly maxInflight: number) {
    this.base = new URL(server);
    this.server = server;
    this.agent = new https.Agent({ ...agentOpts, keepAlive: true, maxFreeSockets: maxInflight });
    Object.assign(this.headers, headers);
  }

  /** Builds a client from kubeconfig text (current context). */
  static async fromKubeconfig(kubeconfig: string, maxInflight = 24): Promise<Rest> {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(kubeconfig);
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error(simMsg.noCurrentCluster());
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    // The field manager name the API server records (managedFields) comes from the User-Agent.
    const headers: Record<string, string> = { "User-Agent": "talos-gate-kube-sim" };
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = String(v);
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
    const agentOpts: https.AgentOptions = { ca: opts.ca, cert: opts.cert, key: opts.key };
    if (cluster.skipTLSVerify) agentOpts.rejectUnauthorized = false;
    if (cluster.tlsServerName) agentOpts.servername = cluster.tlsServerName;
    return new Rest(cluster.server, agentOpts, headers, maxInflight);
  }

  private url(path: string, query?: RequestOptions["query"]): URL {
    const u = new URL(this.base.pathname.replace(/\/$/, "") + path, this.base);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u;
  }

  private async acquire(): Promise<void> {
    if (this.inflight < this.maxInflight) {
      this.inflight++;
      return;
    }
    await new Promise<void>((r) => this.waiting.push(r));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inflight--;
  }

  async request<T = any>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
    if (this.closed) throw new KubeError(0, "ClientClosed", `kube sim: client closed (${method} ${path})`);
    await this.acquire();
    try {
      this.requests++;
      return await this.once<T>(method, path, body, opts);
    } finally {
      this.release();
    }
  }

  private once<T>(method: string, path: string, body: unknown, opts: RequestOptions): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { ...this.headers, Accept: "application/json" };
    if (payload) {
      headers["Content-Type"] = opts.contentType ?? "application/json";
      headers["Content-Length"] = String(payload.length);
    }
    return new Promise<T>((resolve, reject) => {
      const req = https.request(this.url(path, opts.query), { method, headers, agent: this.agent, timeout: opts.timeoutMs ?? 30000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", (e) => reject(new KubeError(0, "TransportError", `${method} ${path}: ${e.message}`)));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const code = res.statusCode ?? 0;
          let parsed: any;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          if (code >= 200 && code < 300) return resolve(parsed as T);
          const st: KubeStatus | undefined = parsed && parsed.kind === "Status" ? parsed : undefined;
          reject(new KubeError(code, st?.reason ?? `HTTP${code}`, `${method} ${path}: ${code} ${st?.message ?? text.slice(0, 300)}`, st));
        });
      });
      req.on("timeout", () => req.destroy(new Error(`timed out after ${opts.timeoutMs ?? 30000} ms`)));
      req.on("error", (e) => reject(new KubeError(0, "TransportError", `${method} ${path}: ${e.message}`)));
      if (payload) req.write(payload);
      req.end();
    });
  }

  get<T = any>(path: string, query?: RequestOptions["query"]): Promise<T> {
    return this.request<T>("GET", path, undefined, { query });
  }
  post<T = any>(path: string, body: unknown): Promise<T> {
    return this.request<T>("POST", path, body);
  }
  put<T = any>(path: string, body: unknown): Promise<T> {
    return this.request<T>("PUT", path, body);
  }
  mergePatch<T = any>(path: string, body: unknown): Promise<T> {
    return this.request<T>("PATCH", path, body, { contentType: MERGE_PATCH });
  }
  delete<T = any>(path: string, body?: unknown): Promise<T> {
    return this.request<T>("DELETE", path, body);
  }

  /** Opens a watch (newline-delimited JSON events). The caller decides what to do when it ends. */
  watch(path: string, query: RequestOptions["query"], onEvent: (ev: WatchEvent) => void): WatchHandle {
    let settle!: (e: Error | null) => void;
    const done = new Promise<Error | null>((r) => (settle = r));
    let finished = false;
    const finish = (e: Error | null) => {
      if (finished) return;
      finished = true;
      this.watches.delete(handle);
      settle(e);
    };
    const req = https.request(this.url(path, { ...query, watch: true }), { method: "GET", headers: { ...this.headers, Accept: "application/json" }, agent: this.agent }, (res) => {
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          let st: KubeStatus | undefined;
          try {
            st = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            st = undefined;
          }
          finish(new KubeError(res.statusCode ?? 0, st?.reason ?? "WatchFailed", `watch ${path}: ${res.statusCode} ${st?.message ?? ""}`, st));
        });
        res.on("error", (e) => finish(e));
        return;
      }
      let buf = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i).trim();
          buf = buf.slice(i + 1);
          if (!line) continue;
          let ev: WatchEvent;
          try {
            ev = JSON.parse(line);
          } catch {
            continue;
          }
          try {
            onEvent(ev);
          } catch (e) {
            process.stderr.write(`kube sim: watch handler for ${path} threw: ${(e as Error).stack}\n`);
          }
        }
      });
      res.on("end", () => finish(null));
      res.on("close", () => finish(null));
      res.on("error", (e) => finish(e));
    });
    req.on("error", (e) => finish(new KubeError(0, "TransportError", `watch ${path}: ${e.message}`)));
    req.end();
    const handle: WatchHandle = {
      done,
      abort: () => {
        req.destroy();
        finish(null);
      },
    };
    this.watches.add(handle);
    if (this.closed) handle.abort();
    return handle;
  }

  close(): void {
    this.closed = true;
    for (const w of [...this.watches]) w.abort();
    this.agent.destroy();
  }
}

/** Now at whole-second precision, as the API server stores metav1.Time (see reference/kube-test-apiserver.md §5.6). */
export function nowTime(at = Date.now()): string {
  return new Date(Math.floor(at / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Retries a read-modify-write on 409 Conflict and on transient errors (API server restarting). */
export async function retrying<T>(what: string, fn: () => Promise<T>, opts: { attempts?: number; isStopped?: () => boolean } = {}): Promise<T> {
  const attempts = opts.attempts ?? 60;
  let delay = 50;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      const retry = isConflict(err) || isTransient(err);
      if (!retry || i >= attempts || opts.isStopped?.()) {
        if (err instanceof Error) err.message = `${what}: ${err.message}`;
        throw err;
      }
      await sleep(isConflict(err) ? 0 : delay);
      delay = Math.min(delay * 2, 2000);
    }
  }
}
