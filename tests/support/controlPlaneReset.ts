// Putting a used control plane back to the state it started in, so the next sim of the test run can take it instead
// of starting one: a control plane costs ~5 CPU-seconds to start (most of it kube-apiserver), a reset after a small sim
// ~1.2 (this process, the API server, etcd and kcm; measured). The rule is generic, not a list of what tests create:
// every object of every listable kind that did not exist in the control plane's baseline (taken once, right after it
// started) is deleted, and the reset only counts when a last full look finds nothing but the baseline. It runs in the
// background while the next file starts, often beside the suite's heaviest work (package.test's npm installs): 20 s per
// request and 60 s in all, counted in seconds of this process's event loop (LoopSeconds), since a reset given up on
// costs a fresh control plane (~10 s, ~5 CPU-s) and, with 8 s / 30 s, group a gave up on one in every run; an API
// server that stopped answering still fails it within a minute. Controller-managed objects that every namespace gets
// (the `default` ServiceAccount, `kube-root-ca.crt`) are left to their controllers.
import * as https from "node:https";
import * as tls from "node:tls";
import * as k8s from "@kubernetes/client-node";
import { ControlPlane } from "../../sim/controlplane";

interface Kind {
  /** Path prefix of the kind's group version, e.g. /api/v1 or /apis/batch/v1. */
  prefix: string;
  name: string;
  namespaced: boolean;
}

interface Obj {
  kind: Kind;
  namespace?: string;
  name: string;
  uid: string;
  finalizers: string[];
  deleting: boolean;
}

export interface Baseline {
  uids: Set<string>;
  namespaces: Set<string>;
}

const REQUEST_TIMEOUT_S = 20;

/**
 * Seconds counted in ticks of this process's event loop, not on the wall clock. A reset runs in the background of the
 * next file, and a test that blocks the loop in a synchronous child (cli/sim.test's `talos-gate sim up`, ~20 s under
 * load) leaves no moment to read an answer that has come: a wall-clock timeout fired as the loop resumed, failed the
 * reset ("GET /api/v1: no answer within 20 s") and cost a fresh control plane once in most runs. A loop blocked for a
 * minute counts one second here.
 */
class LoopSeconds {
  private ticks = 0;
  private readonly timer = setInterval(() => this.ticks++, 1000);

  constructor() {
    this.timer.unref();
  }

  get elapsed(): number {
    return this.ticks;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Kinds that cannot be listed or deleted as objects, or go with their namespace or owner anyway. */
const SKIPPED = new Set(["namespaces", "events", "componentstatuses"]);

/**
 * The admin's requests of one reset, on a few kept-alive connections sharing one TLS context: a reset makes a few
 * hundred requests (a list of every kind per round), and a TLS handshake with a freshly parsed context for each was
 * most of a reset's CPU (~0.4 CPU-s of the test process per reset, profiled in harsh-talos.test).
 */
class Api {
  private constructor(private readonly server: string, private readonly agent: https.Agent) {}

  static async of(cp: ControlPlane): Promise<Api> {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(cp.kubeconfig);
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const secureContext = tls.createSecureContext({ ca: opts.ca, cert: opts.cert, key: opts.key });
    return new Api(cp.server, new https.Agent({ keepAlive: true, maxSockets: 8, secureContext }));
  }

  close(): void {
    this.agent.destroy();
  }

  /** The requests made, as "METHOD path": `resets` in controlPlanes.ts counts them. */
  readonly requests: string[] = [];

  request(method: string, path: string, body?: unknown, accept?: string): Promise<{ status: number; json: any }> {
    this.requests.push(`${method} ${path}`);
    const headers: Record<string, string> = accept ? { accept } : {};
    if (body !== undefined) headers["content-type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
    return new Promise((resolve, reject) => {
      const req = https.request(`${this.server}${path}`, { agent: this.agent, method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try { json = JSON.parse(text); } catch { json = text; }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on("error", reject);
      });
      let waited = 0; // seconds of this process's event loop (LoopSeconds)
      const bound = setInterval(() => {
        if (++waited >= REQUEST_TIMEOUT_S) req.destroy(new Error(`${method} ${path}: no answer within ${REQUEST_TIMEOUT_S} s`));
      }, 1000);
      req.on("close", () => clearInterval(bound));
      req.on("error", reject);
      if (body !== undefined) req.write(JSON.stringify(body));
      req.end();
    });
  }

  async get(path: string): Promise<any> {
    const r = await this.request("GET", path);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
    return r.json;
  }
}

async function kinds(api: Api): Promise<Kind[]> {
  const prefixes = ["/api/v1"];
  const groups = await api.get("/apis");
  for (const g of groups.groups ?? []) prefixes.push(`/apis/${g.preferredVersion.groupVersion}`);
  const out: Kind[] = [];
  for (const prefix of prefixes) {
    const list = await api.get(prefix);
    for (const r of list.resources ?? []) {
      if (r.name.includes("/") || SKIPPED.has(r.name)) continue;
      if (!r.verbs?.includes("list") || !r.verbs?.includes("delete")) continue;
      out.push({ prefix, name: r.name, namespaced: !!r.namespaced });
    }
  }
  return out;
}

/**
 * Lists answered with each object's metadata only (what `kubectl get` and the garbage collector ask for): the reset
 * needs uid, name, namespace, finalizers and deletion mark, and the API server then leaves out the rest of every
 * object (bootstrap RBAC's rules, Secrets' data) from each list of each round.
 */
const METADATA_ONLY = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json";

/** The objects of the kinds `ks`; `busy` names the kinds the API server could not list yet (ask again in the next round). */
async function objects(api: Api, ks: Kind[]): Promise<Obj[] & { busy: string[] }> {
  const out = Object.assign([] as Obj[], { busy: [] as string[] });
  await Promise.all(ks.map(async (kind) => {
    // A kind can go between discovery and its list (a CustomResourceDefinition being deleted): nothing left of it.
    const r = await api.request("GET", `${kind.prefix}/${kind.name}`, undefined, METADATA_ONLY);
    if (r.status === 404) return;
    // A custom resource's storage right after its CRD changed answers 429 "storage is (re)initializing" for a moment.
    if (r.status === 429) { out.busy.push(`${kind.prefix}/${kind.name}`); return; }
    if (r.status !== 200) throw new Error(`GET ${kind.prefix}/${kind.name}: ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
    const list = r.json;
    for (const o of list.items ?? []) {
      out.push({ kind, namespace: o.metadata.namespace, name: o.metadata.name, uid: o.metadata.uid, finalizers: o.metadata.finalizers ?? [], deleting: !!o.metadata.deletionTimestamp });
    }
  }));
  return out;
}

async function namespaces(api: Api): Promise<{ name: string; uid: string }[]> {
  const list = await api.get("/api/v1/namespaces");
  return (list.items ?? []).map((n: any) => ({ name: n.metadata.name, uid: n.metadata.uid }));
}

/** Every object a controller gives each namespace by itself: deleting it only makes the controller create it again. */
function controllerManaged(o: Obj): boolean {
  return (o.kind.name === "serviceaccounts" && o.name === "default") || (o.kind.name === "configmaps" && o.name === "kube-root-ca.crt");
}

function objectPath(o: Obj): string {
  return `${o.kind.prefix}/${o.namespace ? `namespaces/${o.namespace}/` : ""}${o.kind.name}/${o.name}`;
}

/** What the control plane holds right after it started, once kcm gave the built-in namespaces their defaults. */
export async function takeBaseline(cp: ControlPlane, timeoutMs = 30000): Promise<Baseline> {
  const api = await Api.of(cp);
  try {
    return await baselineOf(api, timeoutMs);
  } finally {
    api.close();
  }
}

async function baselineOf(api: Api, timeoutMs: number): Promise<Baseline> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await api.request("GET", "/api/v1/namespaces/default/serviceaccounts/default");
    if (r.status === 200) break;
    if (Date.now() > until) throw new Error("control plane baseline: the default ServiceAccount never appeared");
    await new Promise((res) => setTimeout(res, 100));
  }
  const ks = await kinds(api);
  const [objs, nss] = await Promise.all([objects(api, ks), namespaces(api)]);
  if (objs.busy.length) throw new Error(`control plane baseline: not listable yet: ${objs.busy.join(", ")}`);
  return { uids: new Set(objs.map((o) => o.uid)), namespaces: new Set(nss.map((n) => n.name)) };
}

/**
 * Deletes everything that is not in the baseline and waits until it is gone. Pods first and at once (no kubelet is
 * left to confirm a graceful deletion), finalizers removed (the Job controller's tracking finalizer would hold them).
 * Throws when the control plane cannot be brought back within timeoutMs: the caller stops it instead.
 */
export async function resetControlPlane(cp: ControlPlane, baseline: Baseline, timeoutMs = 60_000): Promise<{ requests: string[] }> {
  const api = await Api.of(cp);
  try {
    await reset(api, baseline, timeoutMs);
    return { requests: api.requests };
  } finally {
    api.close();
  }
}

async function reset(api: Api, baseline: Baseline, timeoutMs: number): Promise<void> {
  const clock = new LoopSeconds();
  try {
    await resetRounds(api, baseline, timeoutMs, clock);
  } finally {
    clock.stop();
  }
}

async function resetRounds(api: Api, baseline: Baseline, timeoutMs: number, clock: LoopSeconds): Promise<void> {
  const ready = await api.request("GET", "/readyz");
  if (ready.status !== 200) throw new Error(`control plane reset: the API server is not ready (${ready.status})`);
  const ks = await kinds(api);
  const extra = (objs: Obj[]) => objs.filter((o) => !baseline.uids.has(o.uid) && !controllerManaged(o));
  const remove = async (o: Obj) => {
    if (o.finalizers.length) await api.request("PATCH", objectPath(o), { metadata: { finalizers: null } });
    const r = await api.request("DELETE", `${objectPath(o)}?gracePeriodSeconds=0&propagationPolicy=Background`);
    if (r.status !== 200 && r.status !== 202 && r.status !== 404) throw new Error(`control plane reset: DELETE ${objectPath(o)}: ${r.status}`);
  };
  // Events are not in the objects (the control plane writes new ones all the time, so "gone" cannot be checked), but a
  // later file reads them (the rollout's Events on Nodes): every namespace's are deleted as a collection, once.
  await Promise.all([...baseline.namespaces].map(async (ns) => {
    const r = await api.request("DELETE", `/api/v1/namespaces/${ns}/events`);
    if (r.status !== 200 && r.status !== 404) throw new Error(`control plane reset: DELETE events in ${ns}: ${r.status}`);
  }));
  const firstSeen = new Set<string>();
  // The first and the last look list every kind; the rounds between list only the kinds that still held something
  // (a deleted namespace takes the namespace controller a few seconds, and listing all ~56 kinds every 200 ms while
  // it works was ~1,300 requests and ~2 CPU-s of the API server per reset).
  let look = ks;
  for (let round = 0; ; round++) {
    const all = await objects(api, look);
    const left = extra(all);
    if (round === 0) for (const o of left) firstSeen.add(o.uid);
    const nss = (await namespaces(api)).filter((n) => !baseline.namespaces.has(n.name));
    if (left.length === 0 && nss.length === 0 && all.busy.length === 0) {
      if (look === ks) return;
      look = ks;
      continue;
    }
    if (clock.elapsed * 1000 > timeoutMs) {
      // Why each is still there tells a leak (something recreates it) from a stuck deletion.
      const why = (o: Obj) => `${objectPath(o)}${firstSeen.has(o.uid) ? "" : " (recreated)"}${o.deleting ? " (being deleted)" : ""}${o.finalizers.length ? ` (finalizers ${o.finalizers.join(",")})` : ""}`;
      const names = [...left.map(why), ...nss.map((n) => `namespace ${n.name}`), ...all.busy.map((k) => `${k} (not listable: 429)`)].slice(0, 10);
      throw new Error(`control plane reset: still there after ${timeoutMs} ms: ${names.join(", ")}`);
    }
    const pods = left.filter((o) => o.kind.name === "pods");
    await Promise.all(pods.map(remove));
    await Promise.all(left.filter((o) => o.kind.name !== "pods").map(remove));
    await Promise.all(nss.map((n) => api.request("DELETE", `/api/v1/namespaces/${n.name}`)));
    const still = new Set([...left.map((o) => `${o.kind.prefix}/${o.kind.name}`), ...all.busy]);
    look = ks.filter((k) => still.has(`${k.prefix}/${k.name}`));
    if (round > 0) await new Promise((res) => setTimeout(res, 200));
  }
}
