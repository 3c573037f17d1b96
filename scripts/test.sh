#!/usr/bin/env bash
# The whole test suite: unit (pure), integration (real control plane + sim), e2e (real pulumi CLI).
# Pass a glob to run a subset, e.g. `bash scripts/with-tools.sh --build bash scripts/test.sh 'dist/tests/unit/**/*.test.js'`.
# Strict: `.only` and pending tests fail the run, as does a run without tests; the full run also fails when a test
# file listed in tests/expected-tests.txt was not compiled (or a test file is not listed there).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ $# -eq 0 ]; then
  expected="tests/expected-tests.txt"
  missing=()
  while IFS= read -r f; do
    case "$f" in ''|'#'*) continue;; esac
    [ -f "dist/${f%.ts}.js" ] || missing+=("$f")
  done < "$expected"
  unlisted=()
  while IFS= read -r f; do
    grep -qxF "$f" "$expected" || unlisted+=("$f")
  done < <(find tests -name '*.test.ts' | sort)
  if [ ${#missing[@]} -gt 0 ] || [ ${#unlisted[@]} -gt 0 ]; then
    for f in "${missing[@]}"; do echo "test.sh: expected test file $f has no compiled dist/${f%.ts}.js (deleted, or excluded from the build?)" >&2; done
    for f in "${unlisted[@]}"; do echo "test.sh: test file $f is not listed in $expected; add it there" >&2; done
    echo "test.sh: FAILED: the suite does not match $expected (${#missing[@]} missing, ${#unlisted[@]} unlisted)" >&2
    exit 1
  fi
  set -- 'dist/tests/unit/**/*.test.js' 'dist/tests/integration/**/*.test.js' 'dist/tests/e2e/**/*.test.js'
fi
start=$(date +%s)
node node_modules/mocha/bin/mocha.js --require dist/tests/support/hooks.js --reporter dist/tests/support/reporter.js \
  --forbid-only --forbid-pending --fail-zero --timeout 120000 --exit "$@"
echo "test time: $(( $(date +%s) - start ))s"
