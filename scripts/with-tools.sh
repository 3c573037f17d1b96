#!/usr/bin/env bash
# Runs a command with the project's toolchain first on PATH: bootstraps .tools/bin (quietly when warm),
# optionally compiles the TypeScript incrementally (--build: scripts/build.ts), then execs the command.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=0
if [ "${1:-}" = "--build" ]; then build=1; shift; fi
TOOLCHAIN_QUIET="${TOOLCHAIN_QUIET:-}" bash "$ROOT/scripts/toolchain.sh"
# Programs run from this checkout (the root Pulumi.yaml, examples) require the shim's handlers as `talos-gate/...`,
# exactly as a user's project does from its node_modules: link the package to itself.
[ -e "$ROOT/node_modules/talos-gate" ] || ln -s .. "$ROOT/node_modules/talos-gate"
export PATH="$ROOT/.tools/bin:$ROOT/node_modules/.bin:$PATH"
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
if [ "$build" = 1 ]; then
  (cd "$ROOT" && node -r ts-node/register/transpile-only scripts/build.ts)
fi
cd "$ROOT"
exec "$@"
