#!/usr/bin/env bash
# `make stress`: the long runs of the attack suite (tests/hardening.rs), then
# the integration tests against valkey-server under valgrind memcheck, and a
# report of every figure: bench/results/stress.md.
#   FUZZ_CALLS (default 200000): generated calls per server.
#   HOSTILE_CALLS (default 200000): valid calls with hostile text, per server.
#   MEMCHECK_TESTS (default: every suite in tests/ but those in
#   MEMCHECK_SKIP): the suites whose valkey-server tests run under valgrind. A
#   new suite is in it without an edit here.
#   MEMCHECK_CALLS (default 2000): calls of each fuzzer under valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."

results=bench/results/stress.md
work=$(mktemp -d)
fuzz_calls=${FUZZ_CALLS:-200000}
hostile_calls=${HOSTILE_CALLS:-200000}
# Left out: settings.rs (its Valkey case crashes the server on purpose,
# valkey-io/valkey#4630) and missing_servers.rs (it starts no server).
memcheck_skip=" settings missing_servers "
every_suite=$(for file in tests/*.rs; do
  suite=$(basename "$file" .rs)
  [ "$suite" = suites ] && continue # the binary that holds them
  case "$memcheck_skip" in *" $suite "*) ;; *) printf '%s ' "$suite" ;; esac
done)
memcheck_tests=${MEMCHECK_TESTS:-$every_suite}
memcheck_calls=${MEMCHECK_CALLS:-2000}
export RECIPES_MODULE=${RECIPES_MODULE:-$PWD/target/release/librecipes.so}
: "${VALKEY_SERVER:?VALKEY_SERVER must name valkey-server}"

echo "== attack suite, $fuzz_calls fuzzed and $hostile_calls hostile-text calls per server"
FUZZ_CALLS=$fuzz_calls HOSTILE_CALLS=$hostile_calls cargo test --release --test suites -- hardening:: --nocapture --test-threads=2 2>&1 |
  tee "$work/hardening.out" | grep -E '^test |STRESS|panicked|test result'
grep -q '^test result: ok' "$work/hardening.out"

echo "== valkey-server under valgrind memcheck: $memcheck_tests"
mkdir -p "$work/valgrind"
cat >"$work/valkey-server" <<WRAPPER
#!/bin/sh
exec valgrind --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
  --suppressions=$PWD/bench/valgrind.supp --num-callers=30 --log-file=$work/valgrind/memcheck-%p.log "$VALKEY_SERVER" "\$@"
WRAPPER
chmod +x "$work/valkey-server"
# Only the valkey-server half of each suite's tests; timing-sensitive waits get
# the slack valgrind needs from the harness's own timeouts.
suites=$(echo $memcheck_tests | tr ' ' '|')
mapfile -t tests < <(cargo test --release --test suites -- --list --format terse 2>/dev/null |
  sed -n 's/: test$//p' | grep -E "^($suites)::.*::valkey$")
memcheck_status=0
RECIPES_UNDER_VALGRIND=1 FUZZ_CALLS=$memcheck_calls HOSTILE_CALLS=$memcheck_calls VALKEY_SERVER="$work/valkey-server" REDIS_SERVER=/nonexistent REDIS8_SERVER=/nonexistent \
  cargo test --release --no-fail-fast --test suites -- --exact "${tests[@]}" --test-threads=2 >"$work/memcheck.out" 2>&1 || memcheck_status=$?
grep -E '^test result|FAILED|panicked' "$work/memcheck.out" || true

logs=("$work"/valgrind/memcheck-*.log)
servers=${#logs[@]}
# Errors of any kind (invalid reads/writes, uninitialised values, bad frees),
# and definite leaks whose stack passes through the module.
errors=$(cat "${logs[@]}" | awk '/ERROR SUMMARY:/ { n += $4 } END { print n + 0 }')
invalid=$(cat "${logs[@]}" | grep -cE 'Invalid (read|write|free)|uninitialised|Mismatched free' || true)
module_leaks=$(cat "${logs[@]}" | awk '/definitely lost in/ { block = 1; hit = 0 } block && /recipes/ { hit = 1 }
  block && /^==[0-9]+== $/ { if (hit) n++; block = 0 } END { print n + 0 }')

figure() { # name, flavor
  awk -v f="$1" -v s="$2" '$1 == "STRESS" && $2 == f && $3 == s { print $4 }' "$work/hardening.out"
}

{
  echo "# Stress report"
  echo
  echo "Machine: $(nproc) cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(free -g | awk '/Mem:/ { print $2 }') GiB RAM, $(uname -sr); $(date -u +%Y-%m-%d)."
  echo "\`make stress\`: tests/hardening.rs with $fuzz_calls generated calls and $hostile_calls hostile-text calls per server, then the"
  echo "valkey-server half of the integration suites ($memcheck_tests) with the server under valgrind memcheck"
  echo "(each fuzzer $memcheck_calls calls there)."
  echo
  echo "| figure | redis-server (7.0) | redis-server-8.6 | valkey-server |"
  echo "|---|---:|---:|---:|"
  for name in calls_fuzzed calls_failed calls_blocked crashes hostile_calls hostile_calls_failed hostile_crashes hostile_calls_blocked hostile_slug_taken edge_calls edge_calls_accepted edge_round_trips edge_reloads acknowledged_writes acknowledged_writes_lost ids_repeated_after_failover keys_differing_after_resharding; do
    echo "| $name | $(figure "$name" redis-server) | $(figure "$name" redis-server-8.6) | $(figure "$name" valkey-server) |"
  done
  echo
  echo "| valgrind memcheck (valkey-server) | |"
  echo "|---|---:|"
  echo "| servers run under valgrind | $servers |"
  echo "| valgrind errors (ERROR SUMMARY, definite leaks included) | $errors |"
  echo "| invalid reads, writes, frees, uninitialised values | $invalid |"
  echo "| definite leaks through the module's frames | $module_leaks |"
  echo "| integration tests under valgrind | $(grep -E '^test result' "$work/memcheck.out" | awk '{ p += $4; f += $6 } END { printf "%d passed, %d failed", p, f }') |"
} | tee "$results.tmp"
mv "$results.tmp" "$results"
echo "report written to $results; valgrind logs in $work/valgrind"
[ "$errors" -eq 0 ] && [ "$invalid" -eq 0 ] && [ "$module_leaks" -eq 0 ] && [ "$memcheck_status" -eq 0 ]
