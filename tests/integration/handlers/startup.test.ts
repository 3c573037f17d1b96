// What a provider process loads before its first call: the engine starts one for every preview and update, and most of
// their calls (checks, diffs, a Healthcheck's or a Cluster's create) never reach Kubernetes or Talos. The clients
// are loaded on first use (provider/kube/k8s.ts, provider/talos/): a Kubernetes client costs ~0.3 CPU-s to load, grpc-js
// ~0.1, paid otherwise by every `pulumi preview` of every user.
import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { packageRoot } from "../../../provider/package";

describe("handlers: what a provider start loads", () => {
  it("the handlers' entry loads neither a Kubernetes client nor grpc-js", () => {
    const entry = path.join(packageRoot, "dist", "provider", "handlers", "index.js");
    const script = `require(${JSON.stringify(entry)}); process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
    const loaded = JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" })) as string[];
    assert.ok(loaded.some((f) => f.endsWith(path.join("provider", "handlers", "registry.js"))), "the handlers were loaded");
    const heavy = loaded.filter((f) => /vendor[\\/]client-node\.js$|@kubernetes[\\/]client-node|@grpc[\\/]grpc-js[\\/]build[\\/]src[\\/]index\.js$/.test(f));
    assert.deepEqual(heavy.map((f) => path.relative(packageRoot, f)), []);
  });
});
