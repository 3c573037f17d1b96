#!/usr/bin/env bash
# Installs the real tools the project runs and tests against into .tools/bin (idempotent, cached):
#   node >= 22, pulumi + pulumi-language-nodejs + pulumi-resource-pulumi-nodejs, kube-apiserver + etcd + kubectl.
# Go-built binaries are cached per wrapper-module hash under ~/.cache/talos-gate/bin, so a fresh clone on the same
# machine only links them; the Go module and build caches stay in their usual places.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"; BIN="$TOOLS/bin"
CACHE="${TALOS_GATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/talos-gate}"
NODE_VERSION="22.23.3"
QUIET="${TOOLCHAIN_QUIET:-}"
mkdir -p "$BIN" "$CACHE/bin" "$TOOLS/logs"
T0=$(date +%s)

say() { [ -n "$QUIET" ] || echo "toolchain: $*"; }
die() { echo "toolchain: FAILED: $*" >&2; exit 1; }

# Run a build step; on failure show the command and the last lines of its output.
run_logged() {
  local name="$1"; shift
  local log="$TOOLS/logs/$name.log"
  local t=$(date +%s)
  if ! "$@" >"$log" 2>&1; then
    echo "toolchain: FAILED: $*" >&2
    echo "--- last lines of $log ---" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  say "$name took $(( $(date +%s) - t ))s"
}

# An executable named $1 on PATH that is not ours, if any.
ambient() {
  local p
  p=$(PATH="$(echo "$PATH" | tr ':' '\n' | grep -vxF "$BIN" | paste -sd: -)" command -v "$1" 2>/dev/null) || return 1
  echo "$p"
}

link() { ln -sfn "$1" "$BIN/$2"; }

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# --- node >= 22 -------------------------------------------------------------------------------------------------
ensure_node() {
  if [ -x "$BIN/node" ] && [ "$(node_major "$BIN/node")" -ge 22 ]; then return; fi
  local sys; sys=$(ambient node || true)
  if [ -n "$sys" ] && [ "$(node_major "$sys")" -ge 22 ]; then link "$sys" node; say "node: using $sys"; return; fi
  local arch; case "$(uname -m)" in x86_64) arch=x64;; aarch64|arm64) arch=arm64;; *) die "no Node 22 package for $(uname -m)";; esac
  local dir="$CACHE/node-$NODE_VERSION"
  if [ ! -x "$dir/node_modules/node-linux-$arch/bin/node" ]; then
    say "node: installing node-linux-$arch@$NODE_VERSION from npm"
    mkdir -p "$dir"
    run_logged node npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund "node-linux-$arch@$NODE_VERSION"
  fi
  link "$dir/node_modules/node-linux-$arch/bin/node" node
}

KUBE_BINS="kube-apiserver etcd kubectl kube-controller-manager kube-scheduler"

# --- Go-built binaries ------------------------------------------------------------------------------------------
go_env() { export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly; }
module_hash() { cat "$ROOT/scripts/go/$1/go.mod" "$ROOT/scripts/go/$1/go.sum" | sha256sum | cut -c1-16; }

ensure_pulumi() {
  local p
  if p=$(ambient pulumi); then link "$p" pulumi; say "pulumi: using $p"; return; fi
  local out="$CACHE/bin/pulumi-$(module_hash pulumi)"
  if [ ! -x "$out/pulumi" ]; then
    command -v go >/dev/null || die "pulumi is not on PATH and Go is not installed to build it (install Go >= 1.25)"
    say "pulumi: building github.com/pulumi/pulumi/pkg/v3 (cold build takes 10-25 minutes)"
    go_env; mkdir -p "$out.tmp"
    local ver; ver=$(cd "$ROOT/scripts/go/pulumi" && go list -m -f '{{.Version}}' github.com/pulumi/pulumi/pkg/v3)
    (cd "$ROOT/scripts/go/pulumi" && run_logged pulumi go build -trimpath -tags osusergo,grpcnotrace \
      -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$ver" \
      -o "$out.tmp/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)
    rm -rf "$out"; mv "$out.tmp" "$out"
  fi
  # A hard link (or copy), not a symlink: the CLI looks for its bundled plugins beside its own resolved path.
  if [ -L "$BIN/pulumi" ] || [ ! "$out/pulumi" -ef "$BIN/pulumi" ]; then
    rm -f "$BIN/pulumi"; ln "$out/pulumi" "$BIN/pulumi" 2>/dev/null || cp "$out/pulumi" "$BIN/pulumi"
  fi
}

ensure_pulumi_plugins() {
  local p
  # The Node.js language host: an ambient one if present, else ours (scripts/langhost), because the Go module of the
  # upstream host is not served by the module proxy this project builds from.
  if p=$(ambient pulumi-language-nodejs); then link "$p" pulumi-language-nodejs
  else link "$ROOT/scripts/langhost/pulumi-language-nodejs" pulumi-language-nodejs; fi
  local dyn="$ROOT/node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs"
  [ -f "$dyn" ] || die "node_modules/@pulumi/pulumi is missing: run 'npm ci' first"
  link "$dyn" pulumi-resource-pulumi-nodejs
}

ensure_kube() {
  local have=1 b
  for b in $KUBE_BINS; do
    if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/$b" ]; then link "$KUBEBUILDER_ASSETS/$b" "$b"
    elif p=$(ambient "$b"); then link "$p" "$b"
    else have=0; fi
  done
  [ "$have" = 1 ] && { say "kube: using KUBEBUILDER_ASSETS/PATH binaries"; return; }
  local out="$CACHE/bin/kube-$(module_hash kube)"
  local missing=0
  for b in $KUBE_BINS; do [ -x "$out/$b" ] || missing=1; done
  if [ "$missing" = 1 ]; then
    command -v go >/dev/null || die "kube-apiserver is not on PATH and Go is not installed to build it (install Go >= 1.26)"
    go_env; mkdir -p "$out.tmp"
    local kver; kver=$(cd "$ROOT/scripts/go/kube" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
    local minor="${kver#v1.}"; minor="${minor%%.*}"
    local ld="-s -w" pkg
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ld="$ld -X $pkg.gitVersion=$kver -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
    done
    say "kube: building kube-apiserver $kver, etcd, kubectl (cold build takes 10-25 minutes)"
    (cd "$ROOT/scripts/go/kube" && run_logged kube-apiserver go build -trimpath -tags=notest -ldflags="$ld" -o "$out.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
    (cd "$ROOT/scripts/go/kube" && run_logged etcd go build -trimpath -ldflags="-s -w" -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3)
    (cd "$ROOT/scripts/go/kube" && run_logged kubectl go build -trimpath -ldflags="$ld" -o "$out.tmp/kubectl" k8s.io/kubernetes/cmd/kubectl)
    (cd "$ROOT/scripts/go/kube" && run_logged kube-controller-manager go build -trimpath -tags=notest -ldflags="$ld" -o "$out.tmp/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager)
    (cd "$ROOT/scripts/go/kube" && run_logged kube-scheduler go build -trimpath -tags=notest -ldflags="$ld" -o "$out.tmp/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler)
    rm -rf "$out"; mv "$out.tmp" "$out"
  fi
  for b in $KUBE_BINS; do link "$out/$b" "$b"; done
}

ensure_node
ensure_pulumi
ensure_pulumi_plugins
ensure_kube

if [ -z "$QUIET" ]; then
  echo "toolchain: node $("$BIN/node" --version), pulumi $("$BIN/pulumi" version 2>/dev/null), $("$BIN/kube-apiserver" --version 2>/dev/null), etcd $("$BIN/etcd" --version 2>/dev/null | head -1 | awk '{print $3}')"
  echo "toolchain: kube-controller-manager $("$BIN/kube-controller-manager" --version 2>/dev/null | awk '{print $2}'), kube-scheduler $("$BIN/kube-scheduler" --version 2>/dev/null | awk '{print $2}')"
fi
say "ready in $(( $(date +%s) - T0 ))s (.tools/bin)"
