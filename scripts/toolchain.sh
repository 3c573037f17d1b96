#!/usr/bin/env bash
# The development toolchain of a clone, linked into .tools/bin (idempotent, cached). This script provides Node.js
# (nothing else runs without it); scripts/toolchain.ts, run from source, does the rest with the same code as the
# package's `talos-gate toolchain` (sim/tools): the kube tools the sim runs, the Pulumi CLI, the Node.js language host
# and the dynamic-provider plugin, each at its pinned version, printing each tool's version and where it came from.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/bin"
CACHE="${TALOS_GATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/talos-gate}"
NODE_VERSION="22.23.3"                 # fetched from npm when the system's Node.js is too old
NODE_MIN=$(sed -n 's/.*"node": *">= *\([0-9.]*\)".*/\1/p' "$ROOT/package.json")   # package.json "engines"
QUIET="${TOOLCHAIN_QUIET:-}"
mkdir -p "$BIN" "$CACHE/logs"

say() { [ -n "$QUIET" ] || echo "toolchain: $*"; }
die() { echo "toolchain: FAILED: $*" >&2; exit 1; }

# Whether node binary $1 is at least NODE_MIN.
node_ok() {
  local v; v=$("$1" -p 'process.versions.node' 2>/dev/null) || return 1
  [ "$(printf '%s\n%s\n' "$NODE_MIN" "$v" | sort -V | head -1)" = "$NODE_MIN" ]
}

# An executable named $1 on PATH outside .tools/bin, if any.
ambient() {
  PATH="$(echo "$PATH" | tr ':' '\n' | grep -vxF "$BIN" | paste -sd: -)" command -v "$1" 2>/dev/null
}

ensure_node() {
  local sys; sys=$(ambient node || true)
  if [ -n "$sys" ] && node_ok "$sys"; then
    ln -sfn "$sys" "$BIN/node"; NODE_SOURCE="PATH"; return
  fi
  local arch; case "$(uname -m)" in x86_64) arch=x64;; aarch64|arm64) arch=arm64;; *) die "no Node.js $NODE_VERSION package for $(uname -m)";; esac
  local dir="$CACHE/node-$NODE_VERSION" exe
  exe="$dir/node_modules/node-linux-$arch/bin/node"
  if [ ! -x "$exe" ]; then
    say "node: ${sys:-no node} on PATH is older than $NODE_MIN; installing node-linux-$arch@$NODE_VERSION from npm"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund "node-linux-$arch@$NODE_VERSION" \
      >"$CACHE/logs/node.log" 2>&1 || { tail -n 30 "$CACHE/logs/node.log" >&2; die "npm install node-linux-$arch@$NODE_VERSION"; }
  fi
  ln -sfn "$exe" "$BIN/node"; NODE_SOURCE="npm package node-linux-$arch@$NODE_VERSION"
}

[ -n "$NODE_MIN" ] || die "package.json has no \"engines\": { \"node\": \">=X.Y.Z\" }"
ensure_node
[ -f "$ROOT/node_modules/ts-node/register/transpile-only.js" ] || die "node_modules is missing: run 'npm ci' first"
TALOS_GATE_NODE_SOURCE="$NODE_SOURCE" TS_NODE_PROJECT="$ROOT/tsconfig.json" \
  exec "$BIN/node" -r "$ROOT/node_modules/ts-node/register/transpile-only" "$ROOT/scripts/toolchain.ts"
