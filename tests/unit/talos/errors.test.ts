import * as assert from "node:assert/strict";
import { status } from "@grpc/grpc-js";
import { classify, isTransientRefusal, redact, TalosError } from "../../../provider/talos";
import { refusalPauseMs } from "../../../provider/talos/upgrade";
import { portErrorKind } from "../../../provider/rollout/ports";
import { SimPki } from "../../../sim/talos/certs";

const grpcErr = (code: number, details: string) => Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details });

describe("talos: error classification", () => {
  const cases: [number, string, string, boolean][] = [
    [status.UNAVAILABLE, 'connection error: desc = "transport: Error while dialing: dial tcp 10.5.0.3:50000: connect: connection refused"', "UNAVAILABLE", true],
    [status.UNAVAILABLE, "Connection dropped", "UNAVAILABLE", true],
    [status.CANCELLED, "Call cancelled", "CANCELLED", true],
    [status.DEADLINE_EXCEEDED, "Deadline exceeded after 5.001s", "DEADLINE_EXCEEDED", true],
    [status.INTERNAL, "Received RST_STREAM with code 2", "UNAVAILABLE", true],
    [status.UNKNOWN, "failed to acquire upgrade mutex: error trying to lock etcd upgrade mutex: mutex: Locked by another session", "MUTEX_BUSY", true],
    [status.UNAVAILABLE, "No connection established. Last error: self-signed certificate in certificate chain", "CERTIFICATE", false],
    [status.UNAVAILABLE, "No connection established. Last error: Hostname/IP does not match certificate's altnames: ERR_TLS_CERT_ALTNAME_INVALID", "CERTIFICATE", false],
    [status.UNAVAILABLE, "tlsv13 alert certificate required", "CERTIFICATE", false],
    [status.PERMISSION_DENIED, "not authorized", "PERMISSION_DENIED", false],
    [status.FAILED_PRECONDITION, "another installation/upgrade is already in progress", "IN_PROGRESS", true],
    [status.FAILED_PRECONDITION, "machine is not installed", "FAILED_PRECONDITION", false],
    [status.UNKNOWN, "error validating etcd for upgrade: etcd member count(2) is insufficient to maintain quorum if upgrade commences", "ETCD_QUORUM", false],
    [status.UNKNOWN, "error validating etcd for upgrade: only 1 etcd member found; assuming this is not an HA setup and refusing to upgrade; if this is a single-node cluster, use --preserve to upgrade", "ETCD_QUORUM", false],
    [status.UNKNOWN, "error validating etcd for upgrade: etcd member 8e26fb3a50f1e1b5 is not healthy; all members must be healthy to perform an upgrade: context deadline exceeded", "ETCD_UNHEALTHY", true],
    [status.UNKNOWN, "error validating etcd for upgrade: etcd member 8e26fb3a50f1e1b5 is not started, all members must be running to perform an upgrade", "ETCD_UNHEALTHY", true],
    [status.UNAVAILABLE, "etcdserver: no leader", "ETCD_UNHEALTHY", true],
    [status.RESOURCE_EXHAUSTED, "Bandwidth exhausted or memory limit exceeded", "UNAVAILABLE", true],
    [status.NOT_FOUND, "error pulling image: not found", "NOT_FOUND", false],
    [status.UNKNOWN, 'error validating installer image "x:v1": failed to pull', "NOT_FOUND", false],
    [status.UNIMPLEMENTED, "unknown service machine.ImageService", "UNIMPLEMENTED", false],
    [status.INTERNAL, "upgrade failed: installer image not found in containerd store", "INTERNAL", false],
    [status.UNKNOWN, "something else", "UNKNOWN", false],
  ];
  for (const [code, details, want, retryable] of cases) {
    it(`${status[code]} "${details.slice(0, 60)}" → ${want}${retryable ? " (retryable)" : ""}`, () => {
      const e = classify(grpcErr(code, details), "10.5.0.3", "upgrade");
      assert.ok(e instanceof TalosError);
      assert.equal(e.code, want);
      assert.equal(e.retryable, retryable);
      assert.equal(e.node, "10.5.0.3");
      assert.equal(e.grpcCode, code);
      assert.match(e.message, /^talos: node 10\.5\.0\.3: upgrade/);
      assert.doesNotMatch(e.message, /\d+ [A-Z_]+: /, "grpc-js' status prefix is stripped");
    });
  }

  it("every message says what to do", () => {
    for (const [code, details] of cases) {
      const m = classify(grpcErr(code, details), "n1", "op").message;
      if (code !== status.UNKNOWN && code !== status.INTERNAL) {
        assert.match(m, /retry|use |check|fix|wait|upgrade the node|regenerate|talosconfig/i, m);
      }
    }
  });

  it("transient refusals (retried within nodeTimeout) are told from permanent ones", () => {
    const refusal = (code: number, details: string) => isTransientRefusal(classify(grpcErr(code, details), "n", "upgrade"));
    assert.equal(refusal(status.UNKNOWN, "failed to acquire upgrade mutex: error trying to lock etcd upgrade mutex: mutex: Locked by another session"), true);
    assert.equal(refusal(status.FAILED_PRECONDITION, "another installation/upgrade is already in progress"), true);
    assert.equal(refusal(status.UNKNOWN, "error validating etcd for upgrade: etcd member 1 is not healthy; all members must be healthy to perform an upgrade: x"), true);
    assert.equal(refusal(status.UNKNOWN, "error validating etcd for upgrade: etcd member count(2) is insufficient to maintain quorum if upgrade commences"), false);
    assert.equal(refusal(status.UNAVAILABLE, "Connection dropped"), false, "a lost connection is not a refusal");
    assert.equal(refusal(status.FAILED_PRECONDITION, "method is not supported in container mode"), false);
  });

  it("RESOURCE_EXHAUSTED other than grpc-js' GOAWAY mapping stays a permanent failure", () => {
    const e = classify(grpcErr(status.RESOURCE_EXHAUSTED, "grpc: received message larger than max (40000000 vs. 33554432)"), "n", "read");
    assert.equal(e.code, "UNKNOWN");
    assert.equal(e.retryable, false);
  });

  it("issue 18 point 7: a TLS handshake broken off by a node mid-reboot is UNAVAILABLE (retryable), a certificate problem stays CERTIFICATE", () => {
    const code = (d: string) => classify(grpcErr(status.UNAVAILABLE, d), "n", "probe").code;
    assert.equal(code('connection error: desc = "transport: authentication handshake failed: EOF"'), "UNAVAILABLE");
    assert.equal(code('connection error: desc = "transport: authentication handshake failed: read tcp 10.5.0.2:4242->10.5.0.3:50000: read: connection reset by peer"'), "UNAVAILABLE");
    assert.equal(code("write EPROTO: tls alert internal error"), "UNAVAILABLE");
    assert.equal(code('connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"'), "CERTIFICATE");
    assert.equal(code("remote error: tls: bad certificate"), "CERTIFICATE");
    assert.equal(code("sslv3 alert handshake failure: unknown ca"), "CERTIFICATE");
  });

  it("issue 18 point 7: apid's proxy that could not dial or handshake with the node proves the request never reached it (unsent)", () => {
    const unsent = (d: string) => classify(grpcErr(status.UNAVAILABLE, d), "n", "reboot").unsent;
    assert.equal(unsent('connection error: desc = "transport: Error while dialing: dial tcp 10.5.0.3:50000: connect: connection refused"'), true);
    assert.equal(unsent('connection error: desc = "transport: authentication handshake failed: EOF"'), true);
    assert.equal(unsent("error reading from server: EOF"), false, "the proxy lost the answer: the node may have acted");
  });

  it("issue 18 point 7: 'etcdserver: request timed out' (and its variants) is a transient etcd refusal, whatever the gRPC code", () => {
    for (const [c, d] of [[status.UNKNOWN, "error validating etcd for upgrade: etcdserver: request timed out"], [status.UNKNOWN, "etcdserver: request timed out"],
      [status.UNAVAILABLE, "etcdserver: request timed out, possibly due to previous leader failure"]] as const) {
      const e = classify(grpcErr(c, d), "n", "upgrade");
      assert.equal(e.code, "ETCD_UNHEALTHY", d);
      assert.equal(isTransientRefusal(e), true, d);
    }
  });

  it("issue 18 point 7: refusals are retried with doubling pauses up to a cap (5 s → 60 s for a Talos leaking an etcd client per refusal)", () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map((a) => refusalPauseMs(a, 250, 10_000)), [250, 500, 1000, 2000, 4000, 8000, 10_000]);
    assert.deepEqual([0, 1, 2, 3, 4, 5].map((a) => refusalPauseMs(a, 5_000, 60_000)), [5000, 10_000, 20_000, 40_000, 60_000, 60_000]);
    assert.equal(refusalPauseMs(1000, 5_000, 60_000), 60_000);
  });

  it("the detail and the delivery of a call travel with the error", () => {
    const e = classify(grpcErr(status.UNAVAILABLE, "error reading from server: EOF"), "n", "reboot");
    assert.equal(e.detail, "error reading from server: EOF");
    assert.equal(e.maybeProcessed, false);
    assert.equal(e.unsent, false);
    assert.equal(e.with({ maybeProcessed: true }).maybeProcessed, true);
    assert.equal(e.with({ maybeProcessed: true, unsent: true }).unsent, false, "possibly processed is never unsent");
    assert.equal(e.with({ unsent: true }).message, e.message);
  });

  it("a TalosError passes through; non-gRPC errors are UNKNOWN, OpenSSL ones CERTIFICATE", () => {
    const t = new TalosError("LOCKED", "x", "n");
    assert.equal(classify(t, "n", "op"), t);
    assert.equal(classify(new Error("boom"), "n", "op").code, "UNKNOWN");
    assert.equal(classify(Object.assign(new Error("unsupported"), { code: "ERR_OSSL_UNSUPPORTED" }), "n", "op").code, "CERTIFICATE");
  });

  it("never leaks key material: PEM blocks and long base64 runs are redacted", () => {
    const { key, crt } = new SimPki().clientCert();
    const e = classify(grpcErr(status.UNKNOWN, `bad input ${key} and ${crt} and ${Buffer.from(key).toString("base64")}`), "n", "op");
    assert.doesNotMatch(e.message, /PRIVATE KEY|CERTIFICATE-----|[A-Za-z0-9+/]{100,}/);
    assert.match(e.message, /\[redacted PEM\]/);
    assert.equal(redact("plain text"), "plain text");
    assert.doesNotMatch(new TalosError("CONFIG", `x ${key}`).message, /PRIVATE KEY/);
  });
});

describe("talos: the ports' error contract (issue 21)", () => {
  it("a TalosError says its kind for the rollout, next to retryable", () => {
    const kinds = (["PERMISSION_DENIED", "NOT_FOUND", "UNAVAILABLE", "MUTEX_BUSY", "LOCKED", "INVALID_ARGUMENT", "SEQUENCE_FAILED"] as const)
      .map((c) => [c, portErrorKind(new TalosError(c, "m")), new TalosError(c, "m").retryable]);
    assert.deepEqual(kinds, [
      ["PERMISSION_DENIED", "forbidden", false], ["NOT_FOUND", "not-found", false], ["UNAVAILABLE", "unavailable", true],
      ["MUTEX_BUSY", "conflict", true], ["LOCKED", "conflict", false], ["INVALID_ARGUMENT", "refused", false], ["SEQUENCE_FAILED", "refused", false],
    ]);
  });
});
