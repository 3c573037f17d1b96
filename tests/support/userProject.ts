// A user's infra repository as the README sets it up: a fresh Pulumi TypeScript project in a temp dir with its own
// package.json, tsconfig.json and Pulumi.yaml, talos-gate installed from a packed tarball, @pulumi/pulumi and the
// TypeScript tooling from the npm registry (offline-first: the npm cache this checkout's `npm ci` filled), and a
// program written like the README's. Nothing in the project points into this repository.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { LocalWorkspace, Stack } from "@pulumi/pulumi/automation";
import { packageJson, packageRoot } from "../../provider/package";
import { PulumiEnv, withEventResults } from "./pulumi";

export const PROJECT = "infra";

/** The program: a Cluster from two config secrets, a Healthcheck any cluster passes, a TalosUpgrade to `version`. */
export const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as gate from "talos-gate";

const cfg = new pulumi.Config();

const cluster = new gate.Cluster("prod", {
  kubeconfig: cfg.requireSecret("kubeconfig"),      // contents; stored only as a secret
  talosconfig: cfg.requireSecret("talosconfig"),
  manifests: [{
    name: "healthchecks",
    inline: [{ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "healthcheck", namespace: "default" } }],
  }],
});

// The API server answers /readyz (allowed to every authenticated client by Kubernetes' default RBAC).
const apiserver = new gate.Healthcheck("apiserver-ready", {
  cluster, name: "apiserver-ready", interval: "1m",
  job: \`
apiVersion: batch/v1
kind: Job
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      serviceAccountName: healthcheck
      containers:
        - name: check
          image: registry.k8s.io/kubectl:v1.36.3
          command: ["kubectl", "get", "--raw", "/readyz"]
\`,
});

const upgrade = new gate.TalosUpgrade("talos", {
  cluster, version: cfg.require("version"), healthchecks: [apiserver],
  holdTimeout: "10m", nodeTimeout: "5m",
});
export const status = upgrade.status;
export const plan = upgrade.plan;
`;

/**
 * How the e2e test and scripts/compat-fixture.ts drive the project: a sim of one control plane and one worker on
 * `from`, the stack upgraded to `to`. A compat fixture is the state this leaves, so the e2e test can preview it.
 */
export const COMPAT_SIM = {
  from: "v1.13.0",
  to: "v1.13.2",
  stack: "compat",
  args: ["--control-planes", "1", "--workers", "1", "--version", "v1.13.0", "--boot-seconds", "0.5", "--workload-pods", "0"],
};

/** What a compat fixture holds instead of the sim's credentials. */
export const SECRET_PLACEHOLDERS = { kubeconfig: "<sim kubeconfig>", talosconfig: "<sim talosconfig>" };

/** Pulumi's marker of a secret value in an exported deployment. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/**
 * Maps the plaintext of every secret in an exported deployment (`pulumi stack export --show-secrets`); `map` returns
 * the replacement or undefined for a secret it does not know (an error: a fixture holds only known secrets).
 */
export function mapSecrets(value: unknown, map: (plain: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => mapSecrets(v, map));
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (o[SECRET_SIG] !== undefined) {
      const plain = JSON.parse(String(o.plaintext));
      const replaced = map(plain);
      if (replaced === undefined) throw new Error(`an unexpected secret is in the state: ${String(o.plaintext).slice(0, 40)}...`);
      return { [SECRET_SIG]: o[SECRET_SIG], plaintext: JSON.stringify(replaced) };
    }
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, mapSecrets(v, map)]));
  }
  return value;
}

export interface RunResult {
  code: number | null;
  out: string;
  err: string;
}

/** The environment of a command a user runs in their project: ours, without npm's per-script variables. */
export function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== "INIT_CWD"));
  return { ...env, ...extra };
}

export function run(cmd: string, args: string[], cwd: string, timeoutMs = 300_000, env: NodeJS.ProcessEnv = userEnv()): RunResult {
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, out: r.stdout ?? "", err: `${r.stderr ?? ""}${r.error ? `\n${r.error.message}` : ""}` };
}

export function mustRun(cmd: string, args: string[], cwd: string, timeoutMs?: number): string {
  const r = run(cmd, args, cwd, timeoutMs);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) exited ${r.code}:\n${r.out}\n${r.err}`);
  return r.out;
}

export interface Packed {
  tarball: string;
  /** Bytes of the .tgz. */
  size: number;
  unpackedSize: number;
  files: string[];
}

/** `npm pack` of the package at `root` into `dest`. */
export function npmPack(dest: string, root = packageRoot): Packed {
  const [p] = JSON.parse(mustRun("npm", ["pack", "--json", "--pack-destination", dest], root)) as
    { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
  return { tarball: path.join(dest, p.filename), size: p.size, unpackedSize: p.unpackedSize, files: p.files.map((f) => f.path).sort() };
}

/** The versions this checkout uses (so the npm cache has them); the project itself names only registry packages. */
function pinned(name: string): string {
  const all = { ...(packageJson as any).dependencies, ...(packageJson as any).devDependencies } as Record<string, string>;
  if (!all[name]) throw new Error(`${name} is not a dependency of talos-gate`);
  return all[name];
}

/** Writes the project into `dir` and installs its dependencies and the tarball, the way a user would. */
export function createUserProject(dir: string, tarball: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const write = (file: string, text: string) => fs.writeFileSync(path.join(dir, file), text);
  write("package.json", JSON.stringify({
    name: PROJECT, private: true, main: "index.ts",
    dependencies: { "@pulumi/pulumi": pinned("@pulumi/pulumi") },
    devDependencies: { "@types/node": pinned("@types/node"), "ts-node": pinned("ts-node"), typescript: pinned("typescript") },
  }, null, 2) + "\n");
  write("tsconfig.json", JSON.stringify({
    compilerOptions: { strict: true, target: "ES2022", module: "commonjs", moduleResolution: "node", esModuleInterop: true, outDir: "bin" },
    files: ["index.ts"],
  }, null, 2) + "\n");
  write("Pulumi.yaml", `name: ${PROJECT}\nruntime: nodejs\ndescription: Talos upgrades gated by healthchecks\n`);
  write("index.ts", PROGRAM);
  write(".gitignore", "node_modules/\n.sim/\n");
  installInProject(dir, tarball);
}

/** `npm install <spec>` in the project at `dir`, from the npm cache where it can. */
export function installInProject(dir: string, spec: string): void {
  mustRun("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", spec], dir, 600_000);
}

/** A stack of the project at `dir`, run by the real CLI with the test backend (file://, passphrase, no plugin download). */
export async function userStack(env: PulumiEnv, dir: string, stackName: string): Promise<Stack> {
  return withEventResults(await LocalWorkspace.createOrSelectStack({ stackName, workDir: dir }, { pulumiCommand: env.command, envVars: env.envVars }));
}

/** Sets the program's config: the two credentials as secrets, the target version. */
export async function configure(stack: Stack, sim: { kubeconfig: string; talosconfig: string }, version: string): Promise<void> {
  await stack.setAllConfig({
    kubeconfig: { value: fs.readFileSync(sim.kubeconfig, "utf8"), secret: true },
    talosconfig: { value: fs.readFileSync(sim.talosconfig, "utf8"), secret: true },
    version: { value: version },
  });
}
