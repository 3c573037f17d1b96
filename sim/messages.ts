// User-visible messages of the simulated cluster's control endpoint (`talos-gate sim fault|recover|status`).

export const FAULT_NAMES = ["never-comes-back", "rollback", "slow-boot=<duration>", "etcd-unhealthy", "pull-failure", "clear"] as const;

export const simMsg = {
  unknownFault: (text: string) =>
    `unknown fault ${JSON.stringify(text)}; faults: ${FAULT_NAMES.join(", ")} (e.g. slow-boot=30s)`,
  badSlowBoot: (text: string) =>
    `slow-boot needs a positive Go duration, e.g. slow-boot=30s; got ${JSON.stringify(text)}`,
  unknownNode: (node: string, known: string[]) =>
    `no simulated node ${JSON.stringify(node)}; nodes: ${known.join(", ")}`,
  etcdOnWorker: (node: string) =>
    `node ${node} is a worker and runs no etcd member; etcd-unhealthy applies to control planes`,
  notDown: (node: string) =>
    `node ${node} is not down, so there is nothing to recover; 'sim recover' brings back a node left down by never-comes-back`,
  badRequest: (detail: string) => `bad request to the sim's control endpoint: ${detail}`,
  unauthorized: () => "the sim's control endpoint needs the token from its state.json",
  notFound: (path: string) => `the sim's control endpoint has no ${path}`,
  noAnswer: (url: string, detail: string) =>
    `the sim's control endpoint ${url} did not answer (${detail}); check that the sim daemon runs ('talos-gate sim status') and its sim.log`,
  faultSet: (node: string, faults: string[]) =>
    faults.length ? `node ${node}: faults now ${faults.join(", ")}` : `node ${node}: no faults`,
  recovered: (node: string) => `node ${node} is booting again; never-comes-back is cleared, its other faults stay`,
};
