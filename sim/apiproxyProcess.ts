// The API proxy's forwarding, in a process of its own (sim/apiproxy.ts starts it). It used to run in the sim's
// process, whose one event loop also serves every simulated node's apid and the kubelet emulator: at 1,000 nodes each
// request through it waited for that loop (a GET of one Node: 104 ms p50 through the proxy, 26 ms straight to
// kube-apiserver, measured during a rollout bench, issue 23). A real cluster's path to its API server is a network, not
// the machines' own work; here it is a loop that does nothing else.
// argv: <upstream host> <upstream port> <listen port>. Messages from the parent: "down" (stop listening, reset every
// connection, as a machine that went down does), "up" (listen again), "close" (stop and exit). Sent to the parent:
// "listening" (each time it listens).
import * as net from "node:net";

export type ProxyCommand = "down" | "up" | "close";
export type ProxyReport = "listening";

function main(): void {
  const [host, upstreamPort, listenPort] = process.argv.slice(2);
  if (!host || !upstreamPort || !listenPort || !process.send) {
    process.stderr.write("usage: apiproxyProcess <upstream host> <upstream port> <listen port> (forked with IPC)\n");
    process.exit(2);
  }
  const report = (r: ProxyReport) => process.send?.(r);
  const sockets = new Set<net.Socket>();
  let listening = false;
  /** A listen is under way (its "listening" or "error" still to come): never a second one beside it. */
  let starting = false;
  let wanted = true;
  const server = net.createServer((client) => {
    const api = net.connect(Number(upstreamPort), host);
    for (const s of [client, api]) {
      s.setNoDelay(true);
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined); // either side's error ends both (below)
    }
    client.on("close", () => api.destroy());
    api.on("close", () => client.destroy());
    client.pipe(api);
    api.pipe(client);
  });
  const listen = () => {
    if (listening || starting || !wanted) return;
    starting = true;
    const retry = () => {
      starting = false;
      server.off("listening", done);
      // A port taken meanwhile would leave the API away for good: tried again shortly (the sim's ports are loopback).
      setTimeout(listen, 100);
    };
    const done = () => {
      starting = false;
      server.off("error", retry);
      listening = true;
      if (!wanted) return stop(() => undefined); // the node went down again while this listen was under way
      report("listening");
    };
    server.once("error", retry);
    server.once("listening", done);
    server.listen(Number(listenPort), "127.0.0.1");
  };
  function stop(then: () => void): void {
    wanted = false;
    if (!listening) return then();
    listening = false;
    server.close(() => then());
    for (const s of sockets) s.resetAndDestroy();
  }
  process.on("message", (m: ProxyCommand) => {
    if (m === "down") stop(() => undefined);
    if (m === "up") {
      wanted = true;
      listen();
    }
    if (m === "close") stop(() => process.exit(0));
  });
  // The sim's process is gone (or closed the channel): so is its API address.
  process.on("disconnect", () => stop(() => process.exit(0)));
  listen();
}

if (require.main === module) main();
