#!/usr/bin/env bash
# The whole test suite: unit (pure), integration (real control plane + sim), e2e (real pulumi CLI).
# Pass globs to run a subset in one process, e.g.
#   bash scripts/with-tools.sh --build bash scripts/test.sh 'dist/tests/unit/**/*.test.js'
# or `--half a` / `--half b` for one half of the full run.
#
# The full run is two halves run at once, each a mocha process with its own control planes and sims, files in a fixed
# (sorted) order. On 2 cores the run is CPU-bound (both cores ~95 % busy): more halves would not finish sooner, less
# CPU per file does; where the cgroup v1 cpuacct controller is writable, each half runs in a cgroup of its own and the
# table shows each file's CPU seconds (every process it started included), which stay comparable under other load. Each half's log is printed whole when it ends (live in
# $TALOS_GATE_TEST_LOGS, default a temp dir), then one table of every file's wall time and one closing line.
# Strict: `.only` and pending tests fail the run, as does a run without tests; the full run also fails when a test
# file listed in tests/expected-tests.txt was not compiled (or a test file is not listed there).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ $# -eq 0 ] || [ "$1" = "--half" ]; then
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
fi

# The halves of the full run, balanced by their wall time in the per-file table: half "a" is the Pulumi e2e files and
# two rollout files; half "b" is every other test file (a new file lands there unless it is listed here).
HALF_a=(dist/tests/e2e/*.test.js dist/tests/integration/rollout/gates.test.js dist/tests/integration/rollout/safety.test.js)
HALF_b=()
while IFS= read -r f; do
  case " ${HALF_a[*]} " in *" $f "*) ;; *) HALF_b+=("$f");; esac
done < <(find dist/tests -name '*.test.js' | sort)

mocha() {
  node node_modules/mocha/bin/mocha.js --require dist/tests/support/hooks.js --reporter dist/tests/support/reporter.js \
    --forbid-only --forbid-pending --fail-zero --timeout 120000 --exit "$@"
}

# Runs "$@" in a fresh cpuacct cgroup named $1 when the machine allows it (TALOS_GATE_TEST_CPUACCT tells the reporter
# where to read); otherwise just runs it.
with_cpuacct() {
  local name="$1"; shift
  local root=/sys/fs/cgroup/cpuacct cg
  cg="$root/talos-gate-test-$name-$$"
  if [ -w "$root" ] && mkdir "$cg" 2>/dev/null; then
    local rc=0
    ( echo "$BASHPID" > "$cg/cgroup.procs" && TALOS_GATE_TEST_CPUACCT="$cg/cpuacct.usage" "$@" ) || rc=$?
    rmdir "$cg" 2>/dev/null || true
    return $rc
  fi
  "$@"
}

start=$(date +%s)
if [ $# -gt 0 ] && [ "$1" != "--half" ]; then
  rc=0; with_cpuacct one mocha "$@" || rc=$?
  echo "test time: $(( $(date +%s) - start ))s"
  exit $rc
fi

halves=(a b)
if [ "${1:-}" = "--half" ]; then
  [ -n "${2:-}" ] && declare -p "HALF_$2" >/dev/null 2>&1 || { echo "test.sh: --half takes one of: ${halves[*]}" >&2; exit 2; }
  halves=("$2")
fi
logs="${TALOS_GATE_TEST_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/talos-gate-test.XXXXXX")}"
mkdir -p "$logs"
echo "test.sh: running ${#halves[@]} half/halves at once (${halves[*]}); live logs in $logs"
declare -A pids
for h in "${halves[@]}"; do
  globs="HALF_$h[@]"
  rm -f "$logs/$h.json"
  TALOS_GATE_TEST_SUMMARY="$logs/$h.json" with_cpuacct "$h" mocha --sort "${!globs}" >"$logs/$h.log" 2>&1 &
  pids[$h]=$!
done
summaries=()
for h in "${halves[@]}"; do
  rc=0; wait "${pids[$h]}" || rc=$?
  echo; echo "==================== $h half (exit $rc) ===================="
  cat "$logs/$h.log"
  summaries+=("$h=$logs/$h.json")
done
echo; echo "==================== whole run ===================="
rc=0; node dist/tests/support/summary.js "${summaries[@]}" || rc=$?
echo "test time: $(( $(date +%s) - start ))s"
exit $rc
