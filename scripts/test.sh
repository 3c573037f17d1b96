#!/usr/bin/env bash
# The whole test suite: unit (pure), integration (real kube-apiserver + sim), e2e (real pulumi CLI).
# Pass a glob to run a subset, e.g. `bash scripts/with-tools.sh --build bash scripts/test.sh 'dist/tests/unit/**/*.test.js'`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ $# -eq 0 ]; then
  set -- 'dist/tests/unit/**/*.test.js' 'dist/tests/integration/**/*.test.js' 'dist/tests/e2e/**/*.test.js'
fi
start=$(date +%s)
node node_modules/mocha/bin/mocha.js --require dist/tests/support/hooks.js --reporter dist/tests/support/reporter.js \
  --timeout 120000 --exit "$@"
echo "test time: $(( $(date +%s) - start ))s"
