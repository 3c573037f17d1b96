// Stand-in binaries for the tool tests: shell scripts that answer `--version` (or `version --client`) like the real
// ones, and a `go` that "builds" such scripts, so resolution and builds are tested without 15-minute Go builds.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { onFileEnd } from "../../support/fixtures";

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `talos-gate-${prefix}-`));
  onFileEnd(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** What each tool prints for its version query, in the real tools' wording. */
export function versionOutput(tool: string, version: string): string {
  if (tool === "etcd") return `etcd Version: ${version.replace(/^v/, "")}\nGit SHA: GitNotFound\nGo Version: go1.26.8\nGo OS/Arch: linux/amd64`;
  if (tool === "kubectl") return `Client Version: ${version}\nKustomize Version: v5.7.1`;
  if (tool === "pulumi") return version;
  return `Kubernetes ${version}`;
}

/** Writes an executable `dir/tool` that prints its version (shell built-ins only: it runs with any PATH). */
export function fakeTool(dir: string, tool: string, version: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, tool);
  const lines = versionOutput(tool, version).split("\n").map((l) => `'${l}'`).join(" ");
  fs.writeFileSync(file, `#!/bin/sh\nprintf '%s\\n' ${lines}\n`, { mode: 0o755 });
  return file;
}

export const PINNED = { "kube-apiserver": "v1.36.3", etcd: "v3.6.8", kubectl: "v1.36.3", "kube-controller-manager": "v1.36.3", "kube-scheduler": "v1.36.3" } as const;

/** Every kube tool at the pinned version (or `version` for all of them). */
export function fakeKubeTools(dir: string, version?: string): string {
  for (const [tool, v] of Object.entries(PINNED)) fakeTool(dir, tool, version ?? v);
  return dir;
}

/**
 * A `go` on PATH that answers `go env GOVERSION GOPROXY` and "builds" a binary answering its version query (from the
 * -ldflags gitVersion, or etcd's module version). It logs each invocation to $FAKE_GO_CALLS; FAKE_GO_FAIL=<pkg suffix>
 * makes that build fail after 40 lines of output; FAKE_GO_SLEEP=<s> slows each build.
 */
export function fakeGo(dir: string, opts: { version?: string; proxy?: string } = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  const script = `#!/bin/sh
[ -n "$FAKE_GO_CALLS" ] && echo "$*" >> "$FAKE_GO_CALLS"
if [ "$1" = env ]; then echo "${opts.version ?? "go1.26.8"}"; echo "${opts.proxy ?? "https://proxy.golang.org,direct"}"; exit 0; fi
out=""; pkg=""; ver=""
for a in "$@"; do
  case "$prev" in -o) out="$a";; esac
  case "$a" in -ldflags=*) ver=$(echo "$a" | sed -n 's/.*component-base\\/version.gitVersion=\\([^ ]*\\).*/\\1/p');; esac
  prev="$a"; pkg="$a"
done
[ -n "$FAKE_GO_SLEEP" ] && sleep "$FAKE_GO_SLEEP"
case "$pkg" in *"$FAKE_GO_FAIL") if [ -n "$FAKE_GO_FAIL" ]; then i=1; while [ $i -le 40 ]; do echo "compile error line $i"; i=$((i+1)); done; exit 2; fi;; esac
echo "building $pkg"
tool=$(basename "$pkg")
case "$pkg" in go.etcd.io/*) printf '#!/bin/sh\\necho "etcd Version: 3.6.8"\\n' > "$out";;
  *kubectl) printf '#!/bin/sh\\necho "Client Version: %s"\\n' "$ver" > "$out";;
  *) printf '#!/bin/sh\\necho "Kubernetes %s"\\n' "$ver" > "$out";;
esac
chmod +x "$out"
`;
  fs.writeFileSync(path.join(dir, "go"), script, { mode: 0o755 });
  return dir;
}
