#!/usr/bin/env bash
# `make bench`: each recipe command against the nearest built-in and the same
# recipe as a Lua script, on each server, in one run, side by side as ratios.
# Rounds are interleaved and the median is kept, so a burst of load on a shared
# machine hits all rows alike.
set -euo pipefail
cd "$(dirname "$0")/.."

module=${RECIPES_MODULE:-$PWD/target/release/librecipes.so}
requests=${REQUESTS:-500000}
clients=${CLIENTS:-50}
pipeline=${PIPELINE:-16}
rounds=${ROUNDS:-5}
results=bench/results/idgen.md

# The Lua recipe of IDGEN.NEXT key COUNT n: take n IDs, return the first.
next_lua='local last = redis.call("INCRBY", KEYS[1], ARGV[1]) return last - ARGV[1] + 1'

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

rps() { # port, command words… → requests per second
  local port=$1; shift
  redis-benchmark -p "$port" -c "$clients" -P "$pipeline" -n "$requests" --csv "$@" 2>/dev/null |
    awk -F'","' 'NR == 2 { printf "%d\n", $2 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

bench_server() { # label, binary
  local label=$1 binary=$2 port dir pid
  port=$(free_port)
  dir=$(mktemp -d)
  "$binary" --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
    --loadmodule "$module" --logfile "$dir/log" &
  pid=$!
  trap 'kill $pid 2>/dev/null; rm -rf "$dir"' RETURN
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  local version sha
  version=$(redis-cli -p "$port" info server | awk -F: '/^(valkey|redis)_version/ { v = $2 } END { print v }' | tr -d '\r')
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
  echo "| $label $version | \`${commands[0]}\` | ${best[0]} | |"
  echo "| | \`IDGEN.NEXT gen\` | ${best[1]} | **$(ratio "${best[1]}" "${best[0]}")× INCR** (target ≥ 0.9) |"
  echo "| | \`EVALSHA <next.lua> 1 gen 1\` | ${best[2]} | IDGEN.NEXT is **$(ratio "${best[1]}" "${best[2]}")× EVALSHA** (target ≥ 1.5) |"
  echo "| | \`HINCRBY ids f 1\` | ${best[3]} | |"
  echo "| | \`IDGEN.NEXT ids FIELD f\` | ${best[4]} | **$(ratio "${best[4]}" "${best[3]}")× HINCRBY** |"
}

machine() {
  local cpu
  cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
  echo "Machine: $(nproc) cores ($cpu), $(free -g | awk '/Mem:/ { print $2 }') GiB RAM, $(uname -sr)."
  echo "redis-benchmark and the server share the machine; $clients clients, pipeline $pipeline,"
  echo "$requests requests per run, median of $rounds interleaved rounds. $(date -u +%Y-%m-%d)."
}

{
  echo "# IDGEN benchmark"
  echo
  machine
  echo
  echo "| server | command | requests/s | ratio |"
  echo "|---|---|---:|---|"
  bench_server "Redis" "$(command -v redis-server)"
  if [ -n "${VALKEY_SERVER:-}" ] && [ -x "$VALKEY_SERVER" ]; then
    bench_server "Valkey" "$VALKEY_SERVER"
  fi
} | tee "$results.tmp"
mv "$results.tmp" "$results"
echo "written to $results"
