// The tool versions this release runs with, read from the Go wrapper modules that build them: scripts/go/kube/go.mod
// pins Kubernetes and etcd (and the Go version needed to build them) and ships in the package; scripts/go/pulumi/go.mod
// pins the Pulumi CLI for development. One place for each pin: the module the binaries are built from.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { packageRoot } from "../../provider/package";
import { toolMsg } from "./messages";

export interface GoMod {
  /** The `go` directive: the lowest Go version that builds the module. */
  go: string;
  /** Required module path → version ("v1.36.3"). */
  requires: Map<string, string>;
}

/** Parses the `go` directive and the `require` lines of a go.mod (single-line and block form). */
export function parseGoMod(text: string): GoMod {
  let go = "";
  const requires = new Map<string, string>();
  let inRequire = false;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\/\/.*$/, "").trim();
    if (inRequire) {
      if (line === ")") inRequire = false;
      else if (line) addRequire(requires, line);
      continue;
    }
    if (/^go\s+\S+$/.test(line)) go = line.split(/\s+/)[1];
    else if (/^require\s*\($/.test(line)) inRequire = true;
    else if (line.startsWith("require ")) addRequire(requires, line.slice("require ".length).trim());
  }
  return { go, requires };
}

function addRequire(into: Map<string, string>, line: string): void {
  const [mod, version] = line.split(/\s+/);
  if (mod && version) into.set(mod, version);
}

/** A Go wrapper module of this package: where it is, what it pins, and the hash that names its build cache dir. */
export interface WrapperModule {
  dir: string;
  goMod: GoMod;
  /** First 16 hex digits of sha256(go.mod + go.sum): the cache directory suffix (as scripts/toolchain.sh used). */
  hash: string;
}

export function wrapperModule(name: "kube" | "pulumi", root = packageRoot): WrapperModule {
  const dir = path.join(root, "scripts", "go", name);
  let mod: Buffer, sum: Buffer;
  try {
    mod = fs.readFileSync(path.join(dir, "go.mod"));
    sum = fs.readFileSync(path.join(dir, "go.sum"));
  } catch (err) {
    throw new Error(toolMsg.goModUnreadable(dir, (err as Error).message));
  }
  const hash = createHash("sha256").update(mod).update(sum).digest("hex").slice(0, 16);
  return { dir, goMod: parseGoMod(mod.toString("utf8")), hash };
}

export interface KubePins {
  /** "v1.36.3": kube-apiserver, kube-controller-manager, kube-scheduler and kubectl at exactly this version. */
  kubernetes: string;
  /** "v3.6.8": what the toolchain builds; any etcd v3.6.x is accepted. */
  etcd: string;
  /** "1.26.0": the lowest Go that builds them. */
  go: string;
  module: WrapperModule;
}

function required(m: WrapperModule, mod: string): string {
  const v = m.goMod.requires.get(mod);
  if (!v) throw new Error(toolMsg.goModUnreadable(m.dir, `no requirement on ${mod}`));
  return v;
}

export function kubePins(root = packageRoot): KubePins {
  const module = wrapperModule("kube", root);
  return {
    kubernetes: required(module, "k8s.io/kubernetes"),
    etcd: required(module, "go.etcd.io/etcd/server/v3"),
    go: module.goMod.go,
    module,
  };
}

export interface PulumiPins {
  /** "v3.274.1": the Pulumi CLI the repository's tests run. */
  pulumi: string;
  go: string;
  module: WrapperModule;
}

/** Development only: scripts/go/pulumi is not shipped (users bring their own Pulumi CLI). */
export function pulumiPins(root = packageRoot): PulumiPins {
  const module = wrapperModule("pulumi", root);
  return { pulumi: required(module, "github.com/pulumi/pulumi/pkg/v3"), go: module.goMod.go, module };
}
