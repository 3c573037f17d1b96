// What a provider process loads before its first call: the engine starts one for every preview and update, and most of
// their calls (checks, diffs, a Healthcheck's or a Cluster's create) never reach Kubernetes or Talos. The clients
// are loaded on first use (provider/kube/k8s.ts, provider/talos/): a Kubernetes client costs ~0.3 CPU-s to load, grpc-js
// ~0.1, paid otherwise by every `pulumi preview` of every user.
import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { packageRoot } from "../../../provider/package";
import { bundledNames } from "../../../scripts/bundle";

describe("handlers: what a provider start loads", () => {
  it("the handlers' entry loads neither a Kubernetes client nor grpc-js", () => {
    const entry = path.join(packageRoot, "dist", "provider", "handlers", "index.js");
    const script = `require(${JSON.stringify(entry)}); process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
    const loaded = JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" })) as string[];
    assert.ok(loaded.some((f) => f.endsWith(path.join("provider", "handlers", "registry.js"))), "the handlers were loaded");
    const heavy = loaded.filter((f) => /vendor[\\/]client-node\.js$|@kubernetes[\\/]client-node|@grpc[\\/]grpc-js[\\/]build[\\/]src[\\/]index\.js$/.test(f));
    assert.deepEqual(heavy.map((f) => path.relative(packageRoot, f)), []);
  });

  it("a TalosUpgrade without conditions or maintenance windows loads neither the CEL library nor luxon and cron-parser; one with them does", () => {
    // Each costs a provider process ~50-60 ms at its start, paid by every preview and up of a program that uses neither.
    const entry = path.join(packageRoot, "dist", "provider", "handlers", "index.js");
    const model = path.join(packageRoot, "dist", "provider", "resources", "talosUpgrade.js");
    const loadedAfter = (extra: Record<string, unknown>) => {
      const props = {
        kind: "TalosUpgrade", clusterName: "prod", kubeconfig: "kubeconfig-text", talosconfig: "talosconfig-text", owner: "p/s/talos",
        version: "v1.13.2", machineNames: ["w-1"], healthchecks: [], ...extra,
      };
      const script = `require(${JSON.stringify(entry)}); const spec = require(${JSON.stringify(model)}).parseTalosUpgrade(${JSON.stringify(props)});
        process.stdout.write(JSON.stringify({ conditions: spec.gates.conditions.length, windows: spec.gates.schedule.key, loaded: Object.keys(require.cache) }));`;
      const out = JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" })) as { conditions: number; windows: string[]; loaded: string[] };
      const libs = ["@marcbachmann/cel-js", "luxon", "cron-parser"].filter((lib) => out.loaded.some((f) => f.includes(`${path.sep}node_modules${path.sep}${lib}${path.sep}`)));
      return { ...out, libs };
    };
    const plain = loadedAfter({});
    assert.deepEqual([plain.conditions, plain.windows, plain.libs], [0, [], []]);
    const gated = loadedAfter({
      conditions: [{ id: "ceph", target: { apiVersion: "v1", kind: "ConfigMap", namespace: "rook-ceph", name: "health" }, expression: "object.data.status == 'HEALTH_OK'" }],
      maintenanceWindows: ["Sat 02:00-06:00 Europe/Berlin"],
    });
    assert.deepEqual([gated.conditions, gated.windows.length, gated.libs], [1, 1, ["@marcbachmann/cel-js", "luxon", "cron-parser"]]);
  });

  it("the client-node bundle exports exactly what provider/kube/k8s.ts takes from it: every value defined, no other API group", () => {
    const k8s = path.join(packageRoot, "dist", "provider", "kube", "k8s.js");
    const bundle = path.join(packageRoot, "dist", "vendor", "client-node.js");
    const script = `const k = require(${JSON.stringify(k8s)}); const b = require(${JSON.stringify(bundle)});
      process.stdout.write(JSON.stringify({ undefinedInK8s: Object.keys(k).filter((n) => k[n] === undefined), bundle: Object.keys(b).sort() }));`;
    const { undefinedInK8s, bundle: exported } = JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" })) as { undefinedInK8s: string[]; bundle: string[] };
    assert.deepEqual(undefinedInK8s, [], "every value k8s.ts exports comes from the bundle");
    assert.deepEqual(exported, bundledNames(), "the bundle's exports are k8s.ts's lib.<name> uses");
    assert.ok(!exported.includes("AppsV1Api") && exported.includes("CoreV1Api"));
  });
});
