import * as assert from "node:assert/strict";
import * as crypto from "node:crypto";
import { stringify } from "yaml";
import { normalizeTalosKey, parseEndpoint, parseTalosconfig, TalosError } from "../../../provider/talos";
import { SimPki } from "../../../sim/talos/certs";

const pki = new SimPki();
const { crt, key } = pki.clientCert();
const b64 = (s: string) => Buffer.from(s).toString("base64");
const ctx = (extra: Record<string, unknown> = {}) => ({ endpoints: ["10.5.0.2"], ca: b64(pki.ca.certPem), crt: b64(crt), key: b64(key), ...extra });
const config = (doc: Record<string, unknown>) => stringify(doc);

function throwsConfig(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof TalosError);
    assert.equal(e.code, "CONFIG");
    assert.match(e.message, re);
    assert.doesNotMatch(e.message, /PRIVATE KEY|BEGIN CERTIFICATE|[A-Za-z0-9+/]{100,}/);
    return true;
  });
}

describe("talos: talosconfig parsing", () => {
  it("selects the file's context and reads endpoints (default port 50000), nodes and the PEM credentials", () => {
    const cfg = parseTalosconfig(config({
      context: "prod",
      contexts: { dev: ctx({ endpoints: ["1.1.1.1"] }), prod: ctx({ endpoints: ["10.5.0.2", "cp.example.com:6443"], nodes: ["10.5.0.3", "10.5.0.4"] }) },
    }));
    assert.equal(cfg.context, "prod");
    assert.deepEqual(cfg.endpoints.map((e) => e.target), ["10.5.0.2:50000", "cp.example.com:6443"]);
    assert.deepEqual(cfg.nodes, ["10.5.0.3", "10.5.0.4"]);
    assert.match(cfg.ca.toString(), /^-----BEGIN CERTIFICATE-----/);
    assert.match(cfg.crt.toString(), /^-----BEGIN CERTIFICATE-----/);
  });

  it("an explicit context overrides `context:`; a single context needs no selection", () => {
    const two = config({ context: "a", contexts: { a: ctx(), b: ctx({ endpoints: ["2.2.2.2:1"] }) } });
    assert.equal(parseTalosconfig(two, "b").endpoints[0].target, "2.2.2.2:1");
    assert.equal(parseTalosconfig(config({ contexts: { only: ctx() } })).context, "only");
    throwsConfig(() => parseTalosconfig(config({ contexts: { a: ctx(), b: ctx() } })), /no context selected/);
    throwsConfig(() => parseTalosconfig(two, "zzz"), /context "zzz" not found \(contexts: a, b\)/);
  });

  it("relabels the Talos `ED25519 PRIVATE KEY` so OpenSSL 3 can load it", () => {
    assert.match(key, /^-----BEGIN ED25519 PRIVATE KEY-----/);
    assert.throws(() => crypto.createPrivateKey(key)); // what OpenSSL 3 does with the Talos label
    const fixed = normalizeTalosKey(key);
    assert.match(fixed, /^-----BEGIN PRIVATE KEY-----/);
    assert.equal(crypto.createPrivateKey(fixed).asymmetricKeyType, "ed25519");
    assert.match(parseTalosconfig(config({ contexts: { a: ctx() } })).key.toString(), /^-----BEGIN PRIVATE KEY-----/);
  });

  it("falls back to decoding the DER body when the label is something else", () => {
    const odd = key.replace(/ED25519 PRIVATE KEY/g, "TALOS KEY");
    assert.equal(crypto.createPrivateKey(normalizeTalosKey(odd)).asymmetricKeyType, "ed25519");
  });

  it("never exposes key material: credentials are not enumerable, JSON and inspect show none", () => {
    const cfg = parseTalosconfig(config({ contexts: { a: ctx() } }));
    const shown = JSON.stringify(cfg) + require("node:util").inspect(cfg);
    assert.doesNotMatch(shown, /PRIVATE KEY|CERTIFICATE/);
    assert.deepEqual(Object.keys(cfg).sort(), ["context", "endpoints", "nodes"]);
  });

  it("folds the deprecated `target` into the endpoints", () => {
    const cfg = parseTalosconfig(config({ contexts: { a: { ...ctx(), endpoints: undefined, target: "10.0.0.9" } } }));
    assert.deepEqual(cfg.endpoints.map((e) => e.target), ["10.0.0.9:50000"]);
  });

  it("explains what is wrong, without echoing secrets", () => {
    throwsConfig(() => parseTalosconfig("contexts: [unclosed"), /not valid YAML/);
    throwsConfig(() => parseTalosconfig(config({ context: "a" })), /no contexts/);
    throwsConfig(() => parseTalosconfig(config({ contexts: { a: ctx({ endpoints: [] }) } })), /context "a" has no endpoints/);
    throwsConfig(() => parseTalosconfig(config({ contexts: { a: ctx({ endpoints: ["http://"] }) } })), /endpoint "http:\/\/"/);
    throwsConfig(() => parseTalosconfig(config({ contexts: { a: ctx({ crt: undefined }) } })), /context "a" has no `crt`/);
    throwsConfig(() => parseTalosconfig(config({ contexts: { a: { endpoints: ["x"], ca: b64(pki.ca.certPem), auth: { siderov1: { identity: "me@example.com" } } } } })),
      /uses Omni \(auth\.siderov1\)/);
    throwsConfig(() => parseTalosconfig(config({ contexts: { a: ctx({ ca: b64("garbage") }) } })), /`ca` is not base64 of a PEM certificate/);
    const broken = "-----BEGIN ED25519 PRIVATE KEY-----\n" + Buffer.alloc(48, 7).toString("base64") + "\n-----END ED25519 PRIVATE KEY-----\n";
    throwsConfig(() => parseTalosconfig(config({ contexts: { a: ctx({ key: b64(broken) }) } })), /`key` is not a usable private key/);
  });
});

describe("talos: endpoints", () => {
  const t = (s: string) => parseEndpoint(s)?.target;
  it("accepts host, host:port, IPv6 (bare and bracketed) and URLs; default port 50000", () => {
    assert.equal(t("10.5.0.2"), "10.5.0.2:50000");
    assert.equal(t("10.5.0.2:50001"), "10.5.0.2:50001");
    assert.equal(t("cp.example.com"), "cp.example.com:50000");
    assert.equal(t("fd00::2"), "[fd00::2]:50000");
    assert.equal(t("[fd00::2]:443"), "[fd00::2]:443");
    assert.equal(t("https://cp.example.com:8443"), "cp.example.com:8443");
    assert.equal(t("tcp://[fd00::3]"), "[fd00::3]:50000");
  });
  it("rejects nonsense", () => {
    for (const bad of ["", "a b", "host:99999", "host:", "http://"]) assert.equal(parseEndpoint(bad), undefined, bad);
  });
});
