#!/usr/bin/env bash
# The whole test suite: unit (pure), integration (real control plane + sim), e2e (real pulumi CLI).
# Pass globs to run a subset in one process, e.g.
#   bash scripts/with-tools.sh --build bash scripts/test.sh 'dist/tests/unit/**/*.test.js'
# or `--group a|b|c|d` for one group of the full run.
#
# The full run is four groups run at once, each a mocha process with its own control planes and sims, files in a
# fixed (sorted) order. On 2 cores the run is close to CPU-bound: less CPU per file is what makes it faster. Where the
# cgroup v1 cpuacct controller is writable, each group runs in a cgroup of its own and the table shows each file's CPU
# seconds (every process it started included), which stay comparable under other load. Each group's log is printed whole when it ends (live in
# $TALOS_GATE_TEST_LOGS, default a temp dir), then one table of every file's wall time and one closing line.
# Strict: `.only` and pending tests fail the run, as does a run without tests; the full run also fails when a test
# file listed in tests/expected-tests.txt was not compiled (or a test file is not listed there).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ $# -eq 0 ] || [ "$1" = "--group" ] || [ "$1" = "--half" ]; then
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

# The full run: TALOS_GATE_TEST_GROUPS workers at once (default 5; letters a, b, …), each a Node process
# (tests/support/worker.ts) that takes the next file from one queue, runs it and takes another, with its own control
# planes and sims. The queue is every file, longest first by its wall time in the last measured run
# (tests/timings.json; a new file counts as 20 s until the next `TALOS_GATE_TEST_UPDATE_TIMINGS=1 npm test` writes the
# table again): the long e2e files start at once and the short ones fill in at the end, so the workers end within
# about one short file of each other. Fixed groups (longest first onto the least loaded, files sorted within a group)
# ended up to ~110 s apart on a loaded machine, a core idle for the tail. On 2 cores the run is close to CPU-bound, so
# less CPU per file is what makes it faster; more workers fill the cores while others wait on reboots, Jobs and the
# Pulumi engine: a quiet clean-clone run at bd08836 with five workers took 533 s for 991 CPU-s, the cores 93 % busy
# (four fixed groups had left ~20 % idle). `--group X` runs one of the fixed groups (tests/support/groups.ts) in one worker.
GROUP_COUNT="${TALOS_GATE_TEST_GROUPS:-5}"
mapfile -t all_files < <(find dist/tests -name '*.test.js' | sort)
declare -A GROUP_FILES=()
while read -r g f; do GROUP_FILES[$g]+="$f "; done < <(node dist/tests/support/groups.js "$GROUP_COUNT" "${all_files[@]}")

mocha() {
  node node_modules/mocha/bin/mocha.js --require dist/tests/support/hooks.js --reporter dist/tests/support/reporter.js \
    --forbid-only --forbid-pending --fail-zero --timeout 120000 --exit "$@"
}

# Every Node process the suite starts (mocha, the Pulumi language host and programs, the provider, the CLI, the sim's
# daemons) shares Node's on-disk compile cache (Node >= 22.1): loading @pulumi/pulumi and the provider takes ~35 % less
# CPU from the second process on, and a run starts a few hundred of them. NODE_COMPILE_CACHE= (empty) turns it off.
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE-${TALOS_GATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/talos-gate}/node-compile-cache}"

# Every Go process the suite starts (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, the Pulumi CLI and
# language host) runs on one scheduler thread: a run keeps a control plane per worker and the CLI tests start more,
# mostly idle, and an idle one spends ~3.0 CPU-s a minute with GOMAXPROCS=2 (an idle apiserver's profile: ~40 % Go's
# scheduler finding no work) against ~2.3 with GOMAXPROCS=1 (side by side, 2 minutes each). Behaviour does not change:
# only how many threads run Go code at once, on 2 cores the suite keeps busy anyway. `npm run bench` keeps Go's default.
export GOMAXPROCS="${GOMAXPROCS-1}"

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
if [ $# -gt 0 ] && [ "$1" != "--group" ] && [ "$1" != "--half" ]; then
  rc=0; with_cpuacct one mocha "$@" || rc=$?
  echo "test time: $(( $(date +%s) - start ))s"
  exit $rc
fi

mapfile -t groups < <(printf '%s\n' "${!GROUP_FILES[@]}" | sort)
logs="${TALOS_GATE_TEST_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/talos-gate-test.XXXXXX")}"
mkdir -p "$logs"
rm -rf "$logs/queue" "$logs/queue.claims"
if [ "${1:-}" = "--group" ] || [ "${1:-}" = "--half" ]; then
  [ -n "${2:-}" ] && [ -n "${GROUP_FILES[$2]:-}" ] || { echo "test.sh: --group takes one of: ${groups[*]}" >&2; exit 2; }
  groups=("$2")
  printf '%s\n' ${GROUP_FILES[$2]} > "$logs/queue"
else
  node dist/tests/support/groups.js --queue "${all_files[@]}" > "$logs/queue"
fi
echo "test.sh: ${#groups[@]} worker(s) at once (${groups[*]}) on a queue of $(wc -l < "$logs/queue") files; live logs in $logs"
declare -A pids
for h in "${groups[@]}"; do
  rm -f "$logs/$h.json"
  TALOS_GATE_TEST_SUMMARY="$logs/$h.json" with_cpuacct "$h" node dist/tests/support/worker.js "$logs/queue" >"$logs/$h.log" 2>&1 &
  pids[$h]=$!
done
summaries=()
worker_failed=0
for h in "${groups[@]}"; do
  rc=0; wait "${pids[$h]}" || rc=$?
  [ $rc -eq 0 ] || worker_failed=1
  echo; echo "==================== worker $h (exit $rc) ===================="
  cat "$logs/$h.log"
  summaries+=("$h=$logs/$h.json")
done
echo; echo "==================== whole run ===================="
rc=0; node dist/tests/support/summary.js "${summaries[@]}" || rc=$?
[ $worker_failed -eq 0 ] || { [ $rc -ne 0 ] || echo "test.sh: FAILED: a worker exited non-zero (its log is above)"; rc=1; }
echo "test time: $(( $(date +%s) - start ))s"
exit $rc
