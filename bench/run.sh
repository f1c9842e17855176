#!/usr/bin/env bash
# `make bench`: each recipe command against the nearest built-in, the same
# recipe as a Lua script and the client-side recipe, on each server, in one
# run, side by side as ratios. Rounds are interleaved and the median is kept,
# so a burst of load on a shared machine hits all rows alike.
# IDGEN rows come from redis-benchmark; LOCK rows from examples/lock_bench.rs
# (acquire/release pairs and 16-client contention need a driver).
set -euo pipefail
cd "$(dirname "$0")/.."

module=${RECIPES_MODULE:-$PWD/target/release/librecipes.so}
requests=${REQUESTS:-500000}
clients=${CLIENTS:-50}
pipeline=${PIPELINE:-16}
rounds=${ROUNDS:-5}
idgen_results=bench/results/idgen.md
lock_results=bench/results/lock.md
driver=$PWD/target/release/examples/lock_bench
cargo build --release --quiet --example lock_bench

# The Lua recipe of IDGEN.NEXT key COUNT n: take n IDs, return the first.
next_lua='local last = redis.call("INCRBY", KEYS[1], ARGV[1]) return last - ARGV[1] + 1'

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

rps() { # port, command words… → requests per second
  local port=$1; shift
  redis-benchmark -p "$port" -c "$clients" -P "$pipeline" -n "$requests" --csv "$@" 2>/dev/null |
    awk -F'","' 'NR == 2 { printf "%d\n", $2 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

start_server() { # binary → sets port, pid and dir
  local binary=$1
  port=$(free_port)
  dir=$(mktemp -d)
  "$binary" --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
    --loadmodule "$module" --logfile "$dir/log" &
  pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
}

stop_server() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; rm -rf "$dir"; }

server_label() { # name, port
  echo "$1 $(redis-cli -p "$2" info server | awk -F: '/^(valkey|redis)_version/ { v = $2 } END { print v }' | tr -d '\r')"
}

idgen_rows() { # label, port
  local label=$1 port=$2 sha
  sha=$(redis-cli -p "$port" script load "$next_lua")

  local -a names=("INCR" "IDGEN.NEXT" "EVALSHA recipe" "HINCRBY" "IDGEN.NEXT FIELD")
  local -a commands=(
    "INCR gen:incr"
    "IDGEN.NEXT gen:idgen"
    "EVALSHA $sha 1 gen:lua 1"
    "HINCRBY ids by-hincrby 1"
    "IDGEN.NEXT ids FIELD by-idgen"
  )
  local -A samples=()
  for _ in $(seq "$rounds"); do
    for i in "${!commands[@]}"; do
      # shellcheck disable=SC2086
      samples[$i]+="$(rps "$port" ${commands[$i]}) "
    done
  done
  local -A best=()
  for i in "${!commands[@]}"; do
    best[$i]=$(tr ' ' '\n' <<<"${samples[$i]}" | grep . | median)
  done
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
  echo "| $label | \`${commands[0]}\` | ${best[0]} | |"
  echo "| | \`IDGEN.NEXT gen\` | ${best[1]} | **$(ratio "${best[1]}" "${best[0]}")× INCR** (target ≥ 0.9) |"
  echo "| | \`EVALSHA <next.lua> 1 gen 1\` | ${best[2]} | IDGEN.NEXT is **$(ratio "${best[1]}" "${best[2]}")× EVALSHA** (target ≥ 1.5) |"
  echo "| | \`HINCRBY ids f 1\` | ${best[3]} | |"
  echo "| | \`IDGEN.NEXT ids FIELD f\` | ${best[4]} | **$(ratio "${best[4]}" "${best[3]}")× HINCRBY** |"
}

machine() {
  local cpu
  cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
  echo "Machine: $(nproc) cores ($cpu), $(free -g | awk '/Mem:/ { print $2 }') GiB RAM, $(uname -sr)."
  echo "The load generator and the server share the machine. $(date -u +%Y-%m-%d)."
}

servers=("Redis:$(command -v redis-server)")
if [ -n "${VALKEY_SERVER:-}" ] && [ -x "$VALKEY_SERVER" ]; then
  servers+=("Valkey:$VALKEY_SERVER")
fi

idgen_table=() release_table=() contention_table=()
for server in "${servers[@]}"; do
  start_server "${server#*:}"
  label=$(server_label "${server%%:*}" "$port")
  idgen_table+=("$(idgen_rows "$label" "$port")")
  release_table+=("$("$driver" "$port" "$label" release)")
  contention_table+=("$("$driver" "$port" "$label" contention)")
  stop_server
done

{
  echo "# IDGEN benchmark"
  echo
  machine
  echo "redis-benchmark: $clients clients, pipeline $pipeline, $requests requests per run,"
  echo "median of $rounds interleaved rounds."
  echo
  echo "| server | command | requests/s | ratio |"
  echo "|---|---|---:|---|"
  printf '%s\n' "${idgen_table[@]}"
} | tee "$idgen_results.tmp"
mv "$idgen_results.tmp" "$idgen_results"

{
  echo "# LOCK benchmark"
  echo
  machine
  echo
  echo "## Acquire and release"
  echo
  echo "8 clients, 64 locks each, over a bare RESP connection (the driver parses little, so the"
  echo "server's cost shows). A round takes all 512 locks (pipelined), then releases them all; a"
  echo "*cycle* is one take plus one release, *releases/s* times the release phase alone. The"
  echo "WATCH recipe reads before it writes: two round trips per lock, no pipelining across"
  echo "locks. Median of 3 interleaved rounds of 2 s."
  echo
  echo "| server | acquire + release | cycles/s | releases/s | ratio |"
  echo "|---|---|---:|---:|---|"
  printf '%s\n' "${release_table[@]}"
  echo
  echo "## Contention: 16 clients, one lock, 1 ms hold"
  echo
  echo "Each client loops: take the lock, hold it 1 ms, release it, then ask again at once (back"
  echo "to back) or after 1 ms of other work. Waits are from asking to holding; *fewest* is how"
  echo "many times the least served client got the lock in 5 s."
  echo
  echo "| server | scenario | how | acquisitions/s | p50 wait ms | p99 wait ms | max wait ms | fewest | ratio |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---|"
  printf '%s\n' "${contention_table[@]}"
} | tee "$lock_results.tmp"
mv "$lock_results.tmp" "$lock_results"
echo "written to $idgen_results and $lock_results"
