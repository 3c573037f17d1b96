#!/usr/bin/env bash
# Runs a command with the project's toolchain first on PATH: bootstraps .tools/bin (quietly when warm),
# optionally compiles the TypeScript (--build), then execs the command.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=0
if [ "${1:-}" = "--build" ]; then build=1; shift; fi
bash "$ROOT/scripts/toolchain.sh"
export PATH="$ROOT/.tools/bin:$ROOT/node_modules/.bin:$PATH"
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
if [ "$build" = 1 ]; then
  (cd "$ROOT" && rm -rf dist && node node_modules/typescript/bin/tsc -p tsconfig.json)
fi
cd "$ROOT"
exec "$@"
