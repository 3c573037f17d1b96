// The client-node clients of one cluster, sharing one keep-alive HTTPS agent for requests and watches (client-node
// creates a new agent, so a new TLS handshake, per request and per watch otherwise), one request counter (middleware;
// watches are counted when started) and one byte counter (traffic.ts) on every agent the requests and watches use.
import { createHash } from "node:crypto";
import type * as http from "node:http";
import * as https from "node:https";
import * as k8s from "./k8s";
import * as YAML from "yaml";
import { CREDENTIAL_TIMEOUT_MS, ExecCredentials, TokenFile, type CredentialSource, type ExecConfig } from "./credentials";
import { KubeError } from "./errors";
import { msg } from "./messages";
import { requestTrace } from "./trace";
import { ByteCounter } from "./traffic";

/**
 * Every request ends within this time (watches excepted: they have their own server-side timeout and watchdog): an
 * API server that accepts a connection and never answers must not hang a rollout, a cleanup or a preview.
 */
export const REQUEST_TIMEOUT_MS = 60_000;

/** Kubernetes API requests made through one port instance. */
export interface KubeStats {
  /** Every HTTP request, watches included. */
  requests: number;
  /** Watch requests started (each reconnect counts). */
  watches: number;
  /** Requests per HTTP method (GET, POST, PUT, PATCH, DELETE, WATCH). */
  byMethod: Record<string, number>;
  /** Bytes read from the API server (HTTP responses and watch streams as received, after TLS; see traffic.ts). */
  bytesRead: number;
  /** Connections opened to the API server (each a TLS handshake on HTTPS). */
  connections: number;
}

/** Marks a request whose JSON answer is returned as it is (see ObjectApi.getRaw). */
const RAW = "raw-json";
/** Marks a request whose answer is read and dropped (see ObjectApi.sendRaw). */
const DISCARD = "discard";

/** KubernetesObjectApi (generic objects, server-side apply) that also answers discovery questions. */
export class ObjectApi extends k8s.KubernetesObjectApi {
  /**
   * GET of an API path with its JSON answer as sent: a list of any kind reads exactly like its watch events (client-
   * node's typed models would turn timestamps into Date objects and rename or drop fields of known kinds).
   */
  async getRaw(path: string, query: Record<string, string | number | undefined>): Promise<unknown> {
    const ctx = this.configuration.baseServer.makeRequestContext(path, k8s.HttpMethod.GET);
    ctx.setHeaderParam("Accept", "application/json");
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") ctx.setQueryParam(k, String(v));
    return this.requestPromise(ctx, RAW);
  }

  /**
   * PUT, POST or PATCH (a JSON patch) of a JSON body whose answer is not needed: the answer is read and dropped, not
   * parsed into client-node's models (the status mirror writes a ~200 KB ConfigMap twice a second at 1,000 nodes; a
   * node's cordon and uncordon answer with the whole Node; parsing each echo into models was a stream of garbage).
   */
  async sendRaw(method: "PUT" | "POST" | "PATCH", path: string, body: unknown, query: Record<string, string | undefined> = {}): Promise<void> {
    const ctx = this.configuration.baseServer.makeRequestContext(path, k8s.HttpMethod[method]);
    ctx.setHeaderParam("Accept", "application/json");
    ctx.setHeaderParam("Content-Type", method === "PATCH" ? k8s.PatchStrategy.JsonPatch : "application/json");
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") ctx.setQueryParam(k, v);
    ctx.setBody(JSON.stringify(body));
    await this.requestPromise(ctx, DISCARD);
  }

  protected async processResponse<T extends k8s.KubernetesObject>(response: k8s.ResponseContext, type?: string): Promise<T> {
    if (type !== RAW && type !== DISCARD) return super.processResponse<T>(response, type);
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299) {
      // A dropped answer is read as bytes, not text: a large string would stay in the old generation until a full GC.
      if (type === DISCARD) {
        await response.body.binary();
        return undefined as unknown as T;
      }
      return JSON.parse(await response.body.text()) as T;
    }
    throw new k8s.ApiException(response.httpStatusCode, "Unsuccessful HTTP Request", await response.getBodyAsAny(), response.headers);
  }

  /** Whether `kind` of `apiVersion` is namespaced; undefined if the cluster does not serve it. */
  async namespaced(apiVersion: string, kind: string): Promise<boolean | undefined> {
    return (await this.served(apiVersion, kind))?.namespaced;
  }

  /**
   * The resource (plural name, scope) serving `kind` of `apiVersion`, from API discovery; undefined if the cluster
   * does not serve it (a CRD not installed). Hits are cached by the client; a miss asks the API server again.
   */
  /**
   * Server-side apply with the object sent as it is. client-node's `patch` re-serializes known kinds through its
   * generated models, which renames or drops wire fields its model spells differently: a CRD's
   * `x-kubernetes-preserve-unknown-fields`, `default` and `enum` vanished (and the API server then pruned every
   * status field of the CRD's objects).
   */
  async applyRaw(obj: k8s.KubernetesObject, o: { fieldManager: string; force?: boolean; dryRun?: string }): Promise<k8s.KubernetesObject | undefined> {
    const path = await this.specUriPath(structuredClone(obj), "patch");
    const ctx = this.configuration.baseServer.makeRequestContext(path, k8s.HttpMethod.PATCH);
    ctx.setHeaderParam("Accept", "application/json");
    ctx.setHeaderParam("Content-Type", k8s.PatchStrategy.ServerSideApply);
    ctx.setQueryParam("fieldManager", o.fieldManager);
    if (o.force !== undefined) ctx.setQueryParam("force", String(o.force));
    if (o.dryRun !== undefined) ctx.setQueryParam("dryRun", o.dryRun);
    ctx.setBody(JSON.stringify(obj));
    return (await this.requestPromise(ctx)) as k8s.KubernetesObject | undefined;
  }

  async served(apiVersion: string, kind: string): Promise<{ plural: string; namespaced: boolean } | undefined> {
    try {
      const r = await this.resource(apiVersion, kind);
      return r ? { plural: r.name, namespaced: r.namespaced } : undefined;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }
}

/** A loaded kubeconfig and its credential source, shared by every port made from the same text (and folder). */
interface SharedConfig {
  kc: k8s.KubeConfig;
  cluster: k8s.Cluster;
  /** Exec plugin or token file of the current user, handled here instead of by client-node (credentials.ts). */
  auth?: CredentialSource;
}

/**
 * One KubeConfig per kubeconfig text: the preview, the run, the Lease and every watch of a process share one credential
 * cache, so a plugin runs once per credential lifetime, not once per port (or per request). Kept small: a process sees
 * one or two kubeconfigs.
 */
const configs = new Map<string, SharedConfig>();
const MAX_CONFIGS = 8;

type RawEntry<K extends string, V> = { name?: string } & { [key in K]?: V };

function sharedConfig(text: string, dir: string | undefined): SharedConfig {
  const key = createHash("sha256").update(`${dir ?? ""}\0${text}`).digest("hex");
  const hit = configs.get(key);
  if (hit) return hit;
  const kc = new k8s.KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (err) {
    throw new KubeError(msg.kubeconfigInvalid((err as Error).message.split("\n")[0]));
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new KubeError(msg.kubeconfigNoCluster());
  const shared: SharedConfig = { kc, cluster, ...credentialsOf(kc, text, dir) };
  if (configs.size >= MAX_CONFIGS) configs.delete(configs.keys().next().value!);
  configs.set(key, shared);
  return shared;
}

/** The current user's exec plugin or token file, taken out of client-node's hands. */
function credentialsOf(kc: k8s.KubeConfig, text: string, dir: string | undefined): { auth?: CredentialSource } {
  const user = kc.getCurrentUser();
  if (!user) return {};
  let raw: { users?: RawEntry<"user", Record<string, unknown>>[]; clusters?: RawEntry<"cluster", Record<string, unknown>>[] };
  try {
    raw = YAML.parse(text) ?? {};
  } catch {
    return {};
  }
  const rawUser = raw.users?.find((u) => u?.name === user.name)?.user ?? {};
  const rawCluster = raw.clusters?.find((c) => c?.name === kc.getCurrentCluster()?.name)?.cluster ?? {};
  const exec = (rawUser.exec ?? user.exec) as ExecConfig | undefined;
  const tokenFile = rawUser.tokenFile;
  if (exec && typeof exec.command === "string") {
    kc.users = kc.users.map((u) => (u.name === user.name ? { ...u, exec: undefined } : u));
    const clusterInfo = Object.fromEntries(["server", "certificate-authority-data", "insecure-skip-tls-verify", "tls-server-name", "proxy-url"]
      .filter((k) => rawCluster[k] !== undefined).map((k) => [k, rawCluster[k]]));
    return { auth: new ExecCredentials(exec, clusterInfo, dir) };
  }
  if (typeof tokenFile === "string" && tokenFile !== "" && !user.token) return { auth: new TokenFile(tokenFile, dir) };
  return {};
}

export class KubeClients {
  readonly kc: k8s.KubeConfig;
  readonly core: k8s.CoreV1Api;
  readonly batch: k8s.BatchV1Api;
  readonly policy: k8s.PolicyV1Api;
  readonly coordination: k8s.CoordinationV1Api;
  readonly objects: ObjectApi;
  private readonly counts: Omit<KubeStats, "bytesRead" | "connections"> = { requests: 0, watches: 0, byMethod: {} };
  private readonly bytes = new ByteCounter();
  private agent?: Promise<https.Agent>;
  private readonly watcher: k8s.Watch;

  /**
   * @param kubeconfigDir the folder of the kubeconfig file, when it came from one: a relative exec command or token
   * file is taken from there (client-go's rule); otherwise from the working directory.
   */
  constructor(kubeconfigText: string, requestTimeoutMs = REQUEST_TIMEOUT_MS, kubeconfigDir?: string) {
    const { kc, cluster, auth } = sharedConfig(kubeconfigText, kubeconfigDir);
    this.kc = kc;
    // Getting credentials is bounded too: client-node runs the plugin before the request's own bound starts.
    const credentialBound = Math.min(requestTimeoutMs, CREDENTIAL_TIMEOUT_MS);
    const credential = () => auth?.get(credentialBound);
    const counts = this.counts;
    const bytes = this.bytes;
    const trace = requestTrace();
    /** The client certificate of an exec plugin the shared agent was made with (a watch with a newer one gets its own). */
    let agentCert: string | undefined;
    const sharedAgent = (): Promise<https.Agent> | undefined => {
      if (!cluster.server.startsWith("https:") || cluster.proxyUrl) return undefined;
      this.agent ??= (async () => {
        const o: https.RequestOptions = {};
        await kc.applyToHTTPSOptions(o);
        const c = await credential();
        agentCert = c?.cert;
        return bytes.attach(new https.Agent({
          ca: o.ca, cert: c?.cert ?? o.cert, key: c?.key ?? o.key, pfx: o.pfx, passphrase: o.passphrase,
          rejectUnauthorized: cluster.skipTLSVerify ? false : undefined,
          servername: cluster.tlsServerName,
          keepAlive: true,
          // No cap on sockets (Node's default): with a cap, requests queue for a busy keep-alive socket, and node-fetch
          // 2.x (client-node's fetch) then reports a complete chunked response on that socket as "Premature close"
          // (node-fetch/node-fetch#1767); 50 parallel node upgrades on 1,000 nodes failed that way with 32 sockets.
          maxSockets: Infinity,
        }));
      })();
      return this.agent;
    };
    const middleware: k8s.Middleware = {
      async pre(ctx) {
        counts.requests++;
        const m = ctx.getHttpMethod().toString();
        counts.byMethod[m] = (counts.byMethod[m] ?? 0) + 1;
        trace?.(m, ctx.getUrl());
        const agent = sharedAgent();
        if (agent) ctx.setAgent(await agent);
        else {
          // A proxy or plain HTTP: client-node's own agent for this request, counted all the same.
          const own = ctx.getAgent();
          if (own) bytes.attach(own as http.Agent);
        }
        if (!ctx.getSignal()) ctx.setSignal(AbortSignal.timeout(requestTimeoutMs));
        return ctx;
      },
      async post(rsp) {
        if (rsp.httpStatusCode === 401) auth?.unauthorized(); // client-go: a 401 renews the credentials
        return rsp;
      },
    };
    const authMethod: k8s.SecurityAuthentication = {
      getName: () => "talos-gate",
      applySecurityAuthentication: async (ctx) => {
        await kc.applySecurityAuthentication(ctx);
        const c = await credential();
        if (c?.authorization) ctx.setHeaderParam("Authorization", c.authorization);
      },
    };
    const config = k8s.createConfiguration({
      baseServer: new k8s.ServerConfiguration(cluster.server, {}),
      authMethods: { default: authMethod },
      promiseMiddleware: [middleware],
    });
    this.core = new k8s.CoreV1Api(config);
    this.batch = new k8s.BatchV1Api(config);
    this.policy = new k8s.PolicyV1Api(config);
    this.coordination = new k8s.CoordinationV1Api(config);
    this.objects = new ObjectApi(config);
    // client-node's Watch builds a new agent for each watch from the config's fetch options, so each watch was a new
    // TLS connection (~8 % of the provider's CPU in a rollout's profile): it goes out on the shared keep-alive agent
    // instead (a free socket, else a new one resuming the agent's TLS session), unless a proxy is in the way or an exec
    // plugin has handed out another client certificate since the agent was made.
    const watchConfig: Pick<k8s.KubeConfig, "getCurrentCluster" | "applyToFetchOptions"> = {
      getCurrentCluster: () => kc.getCurrentCluster(),
      applyToFetchOptions: async (o) => {
        const init = await kc.applyToFetchOptions(o);
        const c = await credential();
        if (c?.authorization) (init.headers as unknown as Headers).set("Authorization", c.authorization);
        const shared = sharedAgent();
        const agent = shared && (await shared);
        if (agent && (!c?.cert || c.cert === agentCert)) init.agent = agent;
        else if (c?.cert && init.agent instanceof https.Agent) init.agent = new https.Agent({ ...init.agent.options, cert: c.cert, key: c.key });
        if (init.agent && typeof init.agent === "object") bytes.attach(init.agent as http.Agent);
        return init;
      },
    };
    this.watcher = new k8s.Watch(watchConfig as k8s.KubeConfig);
  }

  /** Starts a watch (counted); see k8s.Watch.watch. */
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    // client-node's Watch callback type: the event's object is untyped there
    onEvent: (type: string, obj: any) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    this.counts.requests++;
    this.counts.watches++;
    this.counts.byMethod.WATCH = (this.counts.byMethod.WATCH ?? 0) + 1;
    requestTrace()?.("WATCH", path);
    return this.watcher.watch(path, query, onEvent, onDone);
  }

  stats(): KubeStats {
    return {
      requests: this.counts.requests, watches: this.counts.watches, byMethod: { ...this.counts.byMethod }, bytesRead: this.bytes.bytesRead,
      connections: this.bytes.connections,
    };
  }

  close(): void {
    void this.agent?.then((a) => a.destroy());
  }
}
