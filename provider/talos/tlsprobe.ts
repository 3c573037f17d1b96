// When grpc-js cannot connect it often reports only "Failed to connect": a node rebooting and an endpoint that
// rejects our client certificate look the same. This probe opens one TLS connection with the same credentials and
// tells them apart, so a wrong CA/cert is reported as a permanent certificate error instead of a long wait.
import * as net from "node:net";
import * as tls from "node:tls";
import type { Endpoint } from "./talosconfig";
import { msg } from "./messages";

export type ProbeResult =
  | { kind: "ok" }
  | { kind: "unreachable"; detail: string }
  | { kind: "certificate"; detail: string };

const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"]);
// HTTP/2 client connection preface + an empty SETTINGS frame: a server that accepted us answers with SETTINGS.
const PREFACE = Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);

export function probeTls(
  ep: Endpoint,
  creds: { ca: Buffer; cert: Buffer; key: Buffer; serverName?: string },
  timeoutMs = 3000,
): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false, secure = false;
    const finish = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(r);
    };
    const servername = creds.serverName ?? (net.isIP(ep.host) ? undefined : ep.host);
    const socket = tls.connect({
      host: ep.host, port: ep.port, ca: creds.ca, cert: creds.cert, key: creds.key, ALPNProtocols: ["h2"],
      ...(servername ? { servername } : {}),
      ...(creds.serverName ? { checkServerIdentity: (_h: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(creds.serverName!, cert) } : {}),
    });
    const timer = setTimeout(() => finish({ kind: secure ? "ok" : "unreachable", detail: msg.probeTimedOut() } as ProbeResult), timeoutMs);
    socket.on("secureConnect", () => {
      secure = true;
      socket.write(PREFACE);
    });
    socket.on("data", () => finish({ kind: "ok" }));
    socket.on("error", (e: NodeJS.ErrnoException) => {
      if (!secure && e.code && UNREACHABLE.has(e.code)) return finish({ kind: "unreachable", detail: e.message });
      if (secure && e.code && UNREACHABLE.has(e.code)) {
        return finish({ kind: "certificate", detail: msg.probeReset() });
      }
      finish({ kind: "certificate", detail: e.message });
    });
    socket.on("close", () =>
      finish(secure
        ? { kind: "certificate", detail: msg.probeClosed() }
        : { kind: "unreachable", detail: msg.probeClosedInHandshake() }));
  });
}
