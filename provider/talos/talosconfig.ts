// talosconfig parsing: context selection, endpoints (default port 50000), nodes, and the base64 PEM ca/crt/key,
// with the Ed25519 key-label fix (Talos writes PKCS#8 under "ED25519 PRIVATE KEY", which OpenSSL 3 rejects).
import * as crypto from "node:crypto";
import * as net from "node:net";
import { parse as parseYaml } from "yaml";
import { TalosError } from "./errors";
import { msg } from "./messages";

export const DEFAULT_PORT = 50000;

export interface Endpoint {
  host: string;
  port: number;
  /** grpc-js target, "host:port" ("[v6]:port" for IPv6). */
  target: string;
}

export interface TalosConfig {
  context: string;
  endpoints: Endpoint[];
  /** Default target nodes of the context (may be empty). */
  nodes: string[];
  /** PEM CA certificate(s). Key material is not enumerable and never printed. */
  readonly ca: Buffer;
  readonly crt: Buffer;
  /** PEM PKCS#8 private key, relabelled. */
  readonly key: Buffer;
}

/** Parses "host", "host:port", "[v6]:port", bare IPv6, or a URL; default port 50000. */
export function parseEndpoint(text: string): Endpoint | undefined {
  let s = text.trim();
  if (!s) return undefined;
  let host: string, port = DEFAULT_PORT;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) {
    try {
      const u = new URL(s);
      host = u.hostname.replace(/^\[|\]$/g, "");
      if (u.port) port = +u.port;
    } catch {
      return undefined;
    }
  } else if (net.isIPv6(s)) {
    host = s;
  } else {
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(s) ?? /^([^:\s/]+)(?::(\d+))?$/.exec(s);
    if (!m) return undefined;
    host = m[1];
    if (m[2]) port = +m[2];
  }
  if (!host || !(port > 0 && port < 65536)) return undefined;
  return { host, port, target: net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}` };
}

/**
 * Normalises a private key PEM for OpenSSL 3: relabels `ED25519 PRIVATE KEY` to `PRIVATE KEY`, and falls back to
 * decoding the body as PKCS#8 DER. Returns a PKCS#8 PEM; throws (without key material) if it is not a key.
 */
export function normalizeTalosKey(pem: string): string {
  const relabelled = pem.replace(/-----(BEGIN|END) ED25519 PRIVATE KEY-----/g, "-----$1 PRIVATE KEY-----");
  try {
    return crypto.createPrivateKey(relabelled).export({ type: "pkcs8", format: "pem" }).toString();
  } catch {
    const body = pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
    const key = crypto.createPrivateKey({ key: Buffer.from(body, "base64"), format: "der", type: "pkcs8" });
    return key.export({ type: "pkcs8", format: "pem" }).toString();
  }
}

function decodePem(ctx: string, field: string, value: unknown, label: RegExp, what: string): string {
  if (typeof value !== "string" || !value.trim()) throw new TalosError("CONFIG", msg.configMissingField(ctx, field));
  const text = Buffer.from(value.replace(/\s+/g, ""), "base64").toString("utf8");
  if (!label.test(text)) throw new TalosError("CONFIG", msg.configBadPem(ctx, field, what));
  return text;
}

/** A talosconfig context as the YAML gives it: every field unknown until checked below. */
interface RawContext {
  endpoints?: unknown;
  target?: unknown;
  nodes?: unknown;
  ca?: unknown;
  crt?: unknown;
  key?: unknown;
  auth?: { siderov1?: unknown } | null;
}

/** Parses a talosconfig (YAML text); `contextName` overrides the file's `context`. */
export function parseTalosconfig(text: string, contextName?: string): TalosConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new TalosError("CONFIG", msg.configNotYaml(String((err as Error).message).split("\n")[0]));
  }
  const top = doc && typeof doc === "object" ? (doc as { context?: unknown; contexts?: unknown }) : undefined;
  const contexts = top?.contexts && typeof top.contexts === "object" ? (top.contexts as Record<string, RawContext | null | undefined>) : {};
  const names = Object.keys(contexts);
  if (names.length === 0) throw new TalosError("CONFIG", msg.configNoContexts());
  // String(): a context named by a number or a boolean in the YAML is looked up (and named) as its text
  let name = String(contextName || top?.context || "");
  if (!name) {
    if (names.length !== 1) throw new TalosError("CONFIG", msg.configNoContext());
    name = names[0]!;
  }
  const c = contexts[name];
  if (!c || typeof c !== "object") throw new TalosError("CONFIG", msg.configUnknownContext(name, names));
  const rawEndpoints: unknown[] = [...(Array.isArray(c.endpoints) ? c.endpoints : []), ...(c.target ? [c.target] : [])];
  if (rawEndpoints.length === 0) throw new TalosError("CONFIG", msg.configNoEndpoints(name));
  const endpoints = rawEndpoints.map((e) => {
    const ep = parseEndpoint(String(e));
    if (!ep) throw new TalosError("CONFIG", msg.configBadEndpoint(name, String(e)));
    return ep;
  });
  if (c.auth?.siderov1 && !c.crt) throw new TalosError("CONFIG", msg.configOmniAuth(name));
  const ca = decodePem(name, "ca", c.ca, /-----BEGIN CERTIFICATE-----/, "certificate");
  const crt = decodePem(name, "crt", c.crt, /-----BEGIN CERTIFICATE-----/, "certificate");
  const rawKey = decodePem(name, "key", c.key, /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/, "private key");
  let key: string;
  try {
    key = normalizeTalosKey(rawKey);
  } catch {
    throw new TalosError("CONFIG", msg.configBadKey(name));
  }
  const nodes = Array.isArray(c.nodes) ? c.nodes.map(String) : [];
  const cfg = { context: name, endpoints, nodes } as TalosConfig;
  for (const [k, v] of [["ca", ca], ["crt", crt], ["key", key]] as const) {
    Object.defineProperty(cfg, k, { value: Buffer.from(v), enumerable: false });
  }
  return cfg;
}
