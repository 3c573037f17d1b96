// Credentials of a kubeconfig user that client-node 1.4.0 gets wrong for a long rollout (dist/exec_auth.js,
// dist/file_auth.js, dist/config_types.js): its exec plugin runs before the request's own bound with no bound of its
// own, is spawned again for every request when the ExecCredential has no `expirationTimestamp`, gets no
// KUBERNETES_EXEC_INFO, inherits stdin (an interactive plugin hangs every request, Lease renewal included) and fails
// with its raw stderr; a `tokenFile` (a bound ServiceAccount token, rotated by the kubelet) is read once, from the
// `token-file` key, relative to the working directory. This module follows client-go instead
// (plugin/pkg/client/auth/exec/exec.go: credentials cached until `expirationTimestamp`, or until a 401 when there is
// none; KUBERNETES_EXEC_INFO = the ExecCredential request; "executable X failed with exit code N";
// tools/clientcmd/loader.go: a command with a path separator and `tokenFile` are relative to the kubeconfig's folder;
// transport/token_source.go: a token file re-read every minute) and bounds each plugin run.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { KubeError, redactSecrets } from "./errors";
import { msg } from "./messages";

/** The longest a credential plugin may take (also bounded by the request's own bound, whichever is shorter). */
export const CREDENTIAL_TIMEOUT_MS = 30_000;
/** A credential is renewed this long before it expires, so a request never starts with one about to lapse. */
const EXPIRY_SKEW_MS = 10_000;
/** client-go re-reads a token file at most this often (transport.NewCachedFileTokenSource). */
const TOKEN_FILE_TTL_MS = 60_000;

export interface ExecConfig {
  command: string;
  args?: string[];
  env?: Array<{ name: string; value: string }>;
  apiVersion?: string;
  provideClusterInfo?: boolean;
}

/** What a request presents: an Authorization header value, and client certificates an exec plugin returned. */
export interface Credential {
  authorization?: string;
  cert?: string;
  key?: string;
}

export interface CredentialSource {
  get(timeoutMs: number): Promise<Credential>;
  /** A request was refused with 401: the next one gets fresh credentials. */
  unauthorized(): void;
}

/** A path from the kubeconfig, relative to the kubeconfig's own folder when one is known. */
const resolve = (dir: string | undefined, p: string) => (dir && !path.isAbsolute(p) ? path.join(dir, p) : p);

/** The plugin an exec user runs (client-go: a command with a path separator is relative to the kubeconfig's folder). */
export function execCommand(exec: ExecConfig, dir: string | undefined): string {
  return exec.command.includes("/") || exec.command.includes(path.sep) ? resolve(dir, exec.command) : exec.command;
}

export class ExecCredentials implements CredentialSource {
  private cached: { credential: Credential; expiresAt?: number } | undefined;
  private running: Promise<Credential> | undefined;
  private readonly command: string;

  constructor(private readonly exec: ExecConfig, private readonly cluster: Record<string, unknown>, dir: string | undefined) {
    this.command = execCommand(exec, dir);
  }

  async get(timeoutMs: number): Promise<Credential> {
    const c = this.cached;
    if (c && (c.expiresAt === undefined || c.expiresAt - EXPIRY_SKEW_MS > Date.now())) return c.credential;
    this.running ??= this.run(timeoutMs).finally(() => (this.running = undefined));
    return this.running;
  }

  unauthorized(): void {
    this.cached = undefined;
  }

  private run(timeoutMs: number): Promise<Credential> {
    const apiVersion = this.exec.apiVersion ?? "client.authentication.k8s.io/v1";
    const info = {
      kind: "ExecCredential", apiVersion,
      spec: { interactive: false, ...(this.exec.provideClusterInfo ? { cluster: this.cluster } : {}) },
    };
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const e of this.exec.env ?? []) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify(info);
    return new Promise((resolvePromise, reject) => {
      // stdin closed: never interactive (a prompt would wait for a terminal nobody watches).
      const child = spawn(this.command, this.exec.args ?? [], { env, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      let settled = false;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(e);
      };
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        fail(new KubeError(msg.execPluginTimeout(this.command, timeoutMs), undefined, "Unauthorized"));
      }, timeoutMs);
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-4096)));
      child.on("error", (e: NodeJS.ErrnoException) =>
        fail(new KubeError(e.code === "ENOENT" ? msg.execPluginMissing(this.command) : msg.execPluginFailed(this.command, undefined, e.message), undefined, "Unauthorized")));
      child.on("close", (code, signal) => {
        if (settled) return;
        if (code !== 0) return fail(new KubeError(msg.execPluginFailed(this.command, code ?? signal ?? undefined, firstLine(stderr)), undefined, "Unauthorized"));
        try {
          const credential = this.parse(stdout, apiVersion);
          settled = true;
          clearTimeout(timer);
          resolvePromise(credential);
        } catch (e) {
          fail(new KubeError(msg.execPluginFailed(this.command, 0, (e as Error).message), undefined, "Unauthorized"));
        }
      });
    });
  }

  private parse(stdout: string, apiVersion: string): Credential {
    let out: { apiVersion?: string; status?: { token?: string; clientCertificateData?: string; clientKeyData?: string; expirationTimestamp?: string } };
    try {
      out = JSON.parse(stdout);
    } catch {
      throw new Error(msg.execNotJson());
    }
    if (out.apiVersion !== undefined && out.apiVersion !== apiVersion) throw new Error(msg.execApiVersion(out.apiVersion, apiVersion));
    const s = out.status;
    if (!s || (!s.token && !(s.clientCertificateData && s.clientKeyData))) throw new Error(msg.execNoCredential());
    const credential: Credential = {
      ...(s.token ? { authorization: `Bearer ${s.token}` } : {}),
      ...(s.clientCertificateData && s.clientKeyData ? { cert: s.clientCertificateData, key: s.clientKeyData } : {}),
    };
    const expiresAt = s.expirationTimestamp ? Date.parse(s.expirationTimestamp) : undefined;
    this.cached = { credential, ...(expiresAt !== undefined && Number.isFinite(expiresAt) ? { expiresAt } : {}) };
    return credential;
  }
}

const firstLine = (text: string) => redactSecrets(text.trim().split("\n")[0] ?? "").slice(0, 300);

/** A bearer token read from a file, re-read every minute and after a 401 (bound ServiceAccount tokens rotate). */
export class TokenFile implements CredentialSource {
  private token: { value: string; readAt: number } | undefined;
  readonly file: string;

  constructor(file: string, dir: string | undefined) {
    this.file = resolve(dir, file);
  }

  async get(): Promise<Credential> {
    if (!this.token || Date.now() - this.token.readAt > TOKEN_FILE_TTL_MS) {
      let value: string;
      try {
        value = (await fs.promises.readFile(this.file, "utf8")).trim();
      } catch (e) {
        throw new KubeError(msg.tokenFileUnreadable(this.file, (e as NodeJS.ErrnoException).code ?? (e as Error).message), undefined, "Unauthorized");
      }
      this.token = { value, readAt: Date.now() };
    }
    return { authorization: `Bearer ${this.token.value}` };
  }

  unauthorized(): void {
    this.token = undefined;
  }
}
