// The running sim's control endpoint: a small HTTP server on loopback through which `talos-gate sim fault`,
// `sim recover` and `sim status` reach the `sim up` daemon. Every request carries the random token the daemon wrote
// into its state.json (mode 0600), so only whoever can read the sim dir can change the sim.
import * as crypto from "node:crypto";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { applyFault, FaultError, faultsOf, parseFault, recoverNode } from "./faults";
import { simMsg } from "./messages";
import type { TalosNodeSim } from "./talos";

export interface ControlAddress {
  /** http://127.0.0.1:<port> */
  url: string;
  token: string;
}

export interface ControlServer extends ControlAddress {
  close(): Promise<void>;
}

const FaultRequest = z.object({ node: z.string().min(1), fault: z.string().min(1) });
const RecoverRequest = z.object({ node: z.string().min(1) });
/** Node name → its faults, and the answer to a change. */
const FaultsAnswer = z.object({ nodes: z.record(z.string(), z.array(z.string())) });
const ChangeAnswer = z.object({ node: z.string(), faults: z.array(z.string()) });
/** Each upgrade a node went through: its first upgrade call (epoch ms) and how long until it booted again. */
const NodeTimesAnswer = z.object({
  spans: z.array(z.object({ node: z.string(), at: z.number(), ms: z.number(), ownMs: z.number(), reportedMs: z.number().optional() })),
});
export type NodeSpan = z.infer<typeof NodeTimesAnswer>["spans"][number];
const ErrorAnswer = z.object({ error: z.string() });

/** Bodies above this are refused: the requests are a node name and a fault. */
const MAX_BODY = 4096;
/** Longest a CLI call waits for the daemon. */
const CALL_TIMEOUT_MS = 10_000;

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function readBody(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      text += c;
      if (text.length > MAX_BODY) reject(new HttpError(413, simMsg.badRequest("body too large")));
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(text || "{}"));
      } catch {
        reject(new HttpError(400, simMsg.badRequest("the body is not JSON")));
      }
    });
    req.on("error", reject);
  });
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (!r.success) throw new HttpError(400, simMsg.badRequest(r.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")));
  return r.data;
}

/** Starts the control endpoint on 127.0.0.1 (any free port) for `sim`. */
export async function startControlServer(sim: TalosNodeSim): Promise<ControlServer> {
  const token = crypto.randomBytes(24).toString("hex");
  const expected = Buffer.from(`Bearer ${token}`);
  const handle = async (req: http.IncomingMessage): Promise<unknown> => {
    const auth = Buffer.from(req.headers.authorization ?? "");
    if (auth.length !== expected.length || !crypto.timingSafeEqual(auth, expected)) throw new HttpError(401, simMsg.unauthorized());
    const route = `${req.method} ${req.url}`;
    if (route === "GET /faults") return { nodes: Object.fromEntries(sim.nodes().map((n) => [n.name, faultsOf(sim, n.name)])) };
    if (route === "POST /fault") {
      const r = parse(FaultRequest, await readBody(req));
      return applyFault(sim, r.node, parseFault(r.fault));
    }
    if (route === "POST /recover") return recoverNode(sim, parse(RecoverRequest, await readBody(req)).node);
    if (route === "GET /node-times") return { spans: sim.nodes().flatMap((n) => n.upgradeTimes.map((t) => ({ node: n.name, ...t }))) };
    throw new HttpError(404, simMsg.notFound(route));
  };
  const server = http.createServer((req, res) => {
    handle(req).then(
      (body) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body)),
      (err: unknown) => {
        const status = err instanceof HttpError ? err.status : err instanceof FaultError ? 400 : 500;
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: (err as Error).message }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** The control endpoint refused or failed a request; the message is the daemon's. */
export class ControlError extends Error {
  readonly userFacing = true;
}

async function call<T>(at: ControlAddress, method: "GET" | "POST", path: string, schema: z.ZodType<T>, body?: object): Promise<T> {
  let res: Response;
  let json: unknown;
  try {
    res = await fetch(`${at.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${at.token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    json = await res.json();
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    throw new ControlError(simMsg.noAnswer(at.url, e.cause?.code ?? e.message));
  }
  if (!res.ok) throw new ControlError(ErrorAnswer.safeParse(json).data?.error ?? `HTTP ${res.status}`);
  return schema.parse(json);
}

/** The client side, used by the CLI. */
export const control = {
  faults: (at: ControlAddress) => call(at, "GET", "/faults", FaultsAnswer).then((r) => r.nodes),
  setFault: (at: ControlAddress, node: string, fault: string) => call(at, "POST", "/fault", ChangeAnswer, { node, fault }),
  recover: (at: ControlAddress, node: string) => call(at, "POST", "/recover", ChangeAnswer, { node }),
  /** Every node's own time per upgrade so far (first upgrade call → booted again), in ms (the rollout bench). */
  nodeTimes: (at: ControlAddress) => call(at, "GET", "/node-times", NodeTimesAnswer).then((r) => r.spans.map((s) => s.ms)),
  /** The same with each span's node and start (epoch ms): the rollout bench groups them into the rollout's waves. */
  nodeSpans: (at: ControlAddress) => call(at, "GET", "/node-times", NodeTimesAnswer).then((r) => r.spans),
};
