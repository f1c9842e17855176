#!/usr/bin/env bash
# Runs the test parts of `make test` (full) or `make check` (check) once the
# Makefile has built and installed what they need.
#
# The parts mostly wait (servers starting, leases and timers running out,
# replicas syncing), so they run side by side: the Rust suites (every test of
# every binary in one cargo-nextest pool), the Python package on the newest
# and on the oldest redis-py (pytest-xdist workers), the Node package, and the
# documentation site (built, its links checked, every page opened in Chromium),
# and the release's artifacts, installed as a user installs them.
# Then apart from them the tests whose timing bounds do not hold beside other
# work: the Python tests marked `alone` (newest, then oldest redis-py), then
# the peer libraries' own suites (limits, redis-py's lock tests,
# python-redis-lock, pyrate-limiter), side by side but apart from the rest:
# their timing checks are not ours. Every part writes its output to target/test-reports/<part>.log,
# shown when the part fails, and a JUnit report beside it; tests/timings.py
# summarises the reports at the end.
#
# Every server a test starts runs in a directory of its own under this run's
# TMPDIR (Python, Node) or under target/tmp (the Rust suites): a server there
# still running at the end fails the run (and is stopped).
#
# Environment: RECIPES_MODULE, REDIS_SERVER, REDIS8_SERVER, VALKEY_SERVER
# (the Makefile sets them), OLDEST_PYTHON (the oldest redis-py's interpreter).
set -uo pipefail
cd "$(dirname "$0")/.."

mode=${1:-full}
case $mode in full | check) ;; *) echo "usage: $0 full|check" >&2; exit 2 ;; esac

reports=target/test-reports
rm -rf "$reports"
mkdir -p "$reports"
reports=$(cd "$reports" && pwd)
TMPDIR=$reports/tmp
mkdir -p "$TMPDIR"
export TMPDIR
rust_dirs=$(pwd)/target/tmp

# A server of this run: one whose working directory (its --dir) is under this
# run's TMPDIR or the Rust suites' directory. (Not its environment: the
# servers write their process title over it.)
servers_of_this_run() {
  local pid cwd
  for pid in $(pgrep -x redis-server; pgrep -x valkey-server); do
    cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || continue
    case $cwd in "$TMPDIR"/* | "$rust_dirs"/*) echo "$pid" ;; esac
  done
}

pids=()
names=()
begun=()
started=$(date +%s)

# cpu_times: the machine's busy and total CPU time so far (/proc/stat, in ticks).
cpu_times() {
  awk '/^cpu / { total = 0; for (i = 2; i <= 9; i++) total += $i; print total - $5 - $6, total }' /proc/stat
}
phase_cpu=
phase_started=

# start NAME COMMAND…: runs a part in the background, its output in its log.
start() {
  local name=$1
  shift
  if [ ${#pids[@]} -eq 0 ]; then
    phase_cpu=$(cpu_times)
    phase_started=$(date +%s)
  fi
  echo "started: $name"
  ( "$@"; status=$?; date +%s >"$reports/$name.end"; exit $status ) >"$reports/$name.log" 2>&1 &
  pids+=("$!")
  names+=("$name")
  begun+=("$(date +%s)")
}

# took NAME BEGUN: the seconds the part took (its end written when it ended).
took() {
  local end
  end=$(cat "$reports/$1.end" 2>/dev/null) || end=$(date +%s)
  echo $(( end - $2 ))
}

# finish: waits for every part started, says how each ended; returns 1 when one failed.
finish() {
  local status=0 at
  for at in "${!pids[@]}"; do
    if wait "${pids[$at]}"; then
      echo "passed: ${names[$at]} in $(took "${names[$at]}" "${begun[$at]}") s" \
        "($(tail -1 "$reports/${names[$at]}.log" | cut -c1-150))"
    else
      echo "FAILED: ${names[$at]} after $(took "${names[$at]}" "${begun[$at]}") s; its output:"
      sed 's/^/  | /' "$reports/${names[$at]}.log" | tail -200
      status=1
    fi
  done
  local busy total
  read -r busy total <<<"$(cpu_times)"
  set -- $phase_cpu
  echo "  (these parts: $(( $(date +%s) - phase_started )) s wall, the CPUs $(( 100 * (busy - $1) / (total - $2 + 1) ))% busy)"
  pids=()
  names=()
  begun=()
  return $status
}

# kill_tree PID: the process and every process under it, the deepest first
# (a part is a subshell whose children, cargo-nextest, pytest or npm, have
# children of their own).
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill -- "$1" 2>/dev/null
}

stop_everything() {
  local pid
  for pid in "${pids[@]}"; do kill_tree "$pid"; done
  for pid in $(servers_of_this_run); do kill -9 "$pid" 2>/dev/null; done
}
trap 'stop_everything; exit 130' INT TERM

# Rust: the unit tests and every integration suite (--tests: the test targets
# only, not the benchmarks' driver, which `make lint` checks). `make check`: on
# Valkey only.
rust() {
  local filter=()
  [ "$mode" = check ] && filter=(-E 'not (test(/::redis$/) | test(/::redis8$/))')
  cargo nextest run --release --tests --no-fail-fast "${filter[@]}"
  local status=$?
  cp target/nextest/default/junit.xml "$reports/rust.xml" 2>/dev/null
  return $status
}

# Python: $1 the interpreter, $2 the report's name, $3 which tests (a -m
# expression: the tests marked `alone` run apart); the peer suites apart.
python_tests() {
  local python=$1 name=$2 which=$3
  shift 3
  "$python" -m pytest clients/python/tests -q -p no:cacheprovider -rfEs -n 4 -m "$which" \
    --junitxml="$reports/$name.xml" --ignore-glob='*_suite.py' "$@"
}

# The peer libraries' own suites (clients/python/tests/test_drop_in_*_suite.py):
# $1 the report's name, then the files, one pytest worker each.
peer_suites() {
  local report=$1
  shift
  python3 -m pytest -q -p no:cacheprovider -rfEs -n $# --dist loadfile --junitxml="$reports/$report.xml" "$@"
}

# Node: $1 the client set (clients/node/test/clients.mjs: current, ioredis 5 and node-redis 5; next, ioredis 6
# and node-redis 6 on RESP3; others, the rest of the peer ranges), $2 the report's name, $3 the servers when not
# every one (RECIPES_FLAVORS). The files that say "Either client set" use none of the set's clients: they run with
# the current set only.
node_tests() {
  local files=
  [ "$1" = current ] || files=$(cd clients/node && grep -L '^// Either client set:' test/*.test.mjs | tr '\n' ' ')
  (cd clients/node && RECIPES_FLAVORS=${3:-${RECIPES_FLAVORS:-}} RECIPES_NODE_CLIENTS=$1 RECIPES_NODE_TEST_FILES=$files RECIPES_NODE_TEST_OPTIONS="--test-reporter=spec \
    --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=$reports/$2.xml" npm test)
}

node_tests_both() {
  local status=0
  node_tests current node || status=1
  node_tests next node-next || status=1
  # The other client versions on Redis 7.0 alone: what they change is how the client reads replies, not the server.
  node_tests others node-others redis || status=1
  return $status
}

# The documentation site (tests/docs): built from docs/ by the pinned mdBook
# (`make docs` installs it), its links checked, each page opened in headless
# Chromium. A few seconds of work: beside the first group.
docs_tests() {
  python3 -m pytest tests/docs -q -p no:cacheprovider -p no:asyncio -rfEs --junitxml="$reports/docs.xml"
}

# The release's artifacts (tests/dist): `make dist`'s files in dist/ installed as a user installs them, the Debian
# package with dpkg on this machine (then removed), the wheel and the npm tarball in a fresh virtualenv and npm
# project, each running the README's first example on Debian's redis-server. About 15 s, mostly dpkg, pip and npm
# at work: beside the first group. Not in `make check`, which builds no artifact.
dist_tests() {
  python3 -m pytest tests/dist -q -p no:cacheprovider -p no:asyncio -rfEs --junitxml="$reports/dist.xml"
}

status=0
if [ "$mode" = check ]; then
  # In this shell, not a subshell: a subshell's parts are out of the trap's reach.
  export RECIPES_FLAVORS=valkey
  start rust rust
  start python python_tests python3 python 'not alone'
  start node node_tests current node
  start docs docs_tests
  if finish; then
    start python-alone python_tests python3 python-alone alone
    finish || status=1
  else
    status=1
  fi
else
  start rust rust
  start python python_tests python3 python 'not alone'
  # The oldest redis-py tests the client: every server, less what needs the
  # newest (the package's mypy check, which `make lint` and the newest run make).
  oldest=(--deselect tests/test_typing.py::test_the_package_passes_mypy_strict)
  start python-oldest python_tests "${OLDEST_PYTHON:?}" python-oldest 'not alone' "${oldest[@]}"
  # The client sets one after the other: side by side, with the rest of the run, some files' servers did not
  # start in time.
  start node node_tests_both
  start docs docs_tests
  start dist dist_tests
  finish || status=1
  # Apart from the rest, one after the other: our tests whose timing bounds
  # need a machine that runs nothing else of the run (on the newest redis-py,
  # then on the oldest; side by side, with both cores busy, a grant came
  # 8.6 s after a 7 s hold, past its 8.5 s bound), then the peer libraries'
  # own suites, whose timing checks assume a quiet machine.
  start python-alone python_tests python3 python-alone alone
  finish || status=1
  start python-oldest-alone python_tests "${OLDEST_PYTHON:?}" python-oldest-alone alone "${oldest[@]}"
  finish || status=1
  # The suites side by side, a pytest worker each: they mostly wait (on their
  # windows, leases and servers; the four took 392 s one after the other, the
  # CPUs 30% busy). Beside the first group, python-redis-lock's own fixture
  # gave up on servers that took over 2 s to start.
  start peer-suites peer_suites peer-suites clients/python/tests/test_drop_in_*_suite.py
  finish || status=1
fi

leftover=$(servers_of_this_run)
if [ -n "$leftover" ]; then
  echo "FAILED: servers started by this run are still running; stopping them:"
  for pid in $leftover; do
    echo "  | pid $pid in $(readlink "/proc/$pid/cwd"): $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
    kill -9 "$pid" 2>/dev/null
  done
  status=1
fi

python3 tests/timings.py "$reports" | tee "$reports/timings.md"
echo "tests: $(( $(date +%s) - started )) s wall time; reports in $reports"
exit $status
