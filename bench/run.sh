#!/usr/bin/env bash
# `make bench`: each recipe command against the nearest built-in, the same
# recipe as a Lua script and the client-side recipe, on each server, in one
# run, side by side as ratios. Rounds are interleaved and the median is kept,
# so a burst of load on a shared machine hits all rows alike.
# IDGEN and ARTICLE rows come from redis-benchmark; LOCK and RWLOCK rows and the
# CACHE.HSET transaction row from examples/bench_driver.rs
# (acquire/release pairs and 16-client contention need a driver).
# FAMILIES="article lock" make bench runs only those families' rows.
# AUTOCOMPLETE rows come from bench/autocomplete.py (its own servers, under
# callgrind too; AC_SERVERS=redis7,valkey picks servers, see its docstring).
# Each __rand_int__ is drawn on its own, so a slug with two of them does not
# repeat within a run (redis-benchmark stops at the first error reply).
set -euo pipefail
cd "$(dirname "$0")/.."

module=${RECIPES_MODULE:-$PWD/target/release/librecipes.so}
requests=${REQUESTS:-500000}
clients=${CLIENTS:-50}
pipeline=${PIPELINE:-16}
rounds=${ROUNDS:-5}
idgen_results=bench/results/idgen.md
article_results=bench/results/article.md
cache_results=bench/results/cache.md
idpool_results=bench/results/idpool.md
lock_results=bench/results/lock.md
rwlock_results=bench/results/rwlock.md
hot_results=bench/results/hot.md
rate_results=bench/results/rate.md
queue_results=bench/results/queue.md
uqueue_results=bench/results/uqueue.md
pool_results=bench/results/pool.md
waiting_results=bench/results/waiting.md
dropin_results=bench/results/dropin.md
pyrate_results=bench/results/dropin-pyrate.md
nearby_results=bench/results/nearby.md
driver=$PWD/target/release/examples/bench_driver
cargo build --release --quiet --example bench_driver

# The Lua recipe of IDGEN.NEXT key COUNT n: take n IDs, return the first.
next_lua='local last = redis.call("INCRBY", KEYS[1], ARGV[1]) return last - ARGV[1] + 1'

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

rps() { # port, command words… → requests per second
  local port=$1; shift
  redis-benchmark -p "$port" -c "$clients" -P "$pipeline" -n "$requests" -r 1000000000 --csv "$@" 2>/dev/null |
    awk -F, 'NR == 2 { v = $(NF - 6); gsub(/"/, "", v); printf "%d\n", v }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

start_server() { # binary [config…] → sets port, pid and dir
  local binary=$1
  shift
  port=$(free_port)
  dir=$(mktemp -d)
  "$binary" --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no --enable-module-command local \
    --loadmodule "$module" --logfile "$dir/log" "$@" &
  pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
}

stop_server() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; rm -rf "$dir"; }

# What users run in production: the primary writes an AOF (fsync every
# second; no automatic rewrite, whose fork would land in random rounds) and
# streams to one replica, also with the module. Sets port, pid, dir and
# replica_pid, replica_dir.
start_replicated() { # binary
  local binary=$1 primary_port
  start_server "$binary"
  replica_pid=$pid replica_dir=$dir
  local replica_port=$port
  start_server "$binary" --appendonly yes --appendfsync everysec --auto-aof-rewrite-percentage 0
  redis-cli -p "$replica_port" replicaof 127.0.0.1 "$port" >/dev/null
  for _ in $(seq 300); do
    redis-cli -p "$replica_port" info replication | grep -q 'master_link_status:up' && break
    sleep 0.1
  done
}

stop_replicated() {
  stop_server
  kill "$replica_pid" 2>/dev/null; wait "$replica_pid" 2>/dev/null || true; rm -rf "$replica_dir"
}

server_label() { # name, port
  echo "$1 $(redis-cli -p "$2" info server | awk -F: '/^(valkey|redis)_version/ { v = $2 } END { print v }' | tr -d '\r')"
}

# port, setup (a redis-cli command run after FLUSHALL before each measurement,
# or ""), commands… → best[i], the median requests/s of command i
medians() {
  local port=$1 setup=$2
  shift 2
  local -a commands=("$@")
  local -A samples=()
  for _ in $(seq "$rounds"); do
    for i in "${!commands[@]}"; do
      redis-cli -p "$port" flushall >/dev/null
      # shellcheck disable=SC2086
      [ -z "$setup" ] || redis-cli -p "$port" $setup >/dev/null
      # shellcheck disable=SC2086
      samples[$i]+="$(rps "$port" ${commands[$i]}) "
    done
  done
  best=() rounds_of=()
  for i in "${!commands[@]}"; do
    best[$i]=$(tr ' ' '\n' <<<"${samples[$i]}" | grep . | median)
    rounds_of[$i]=${samples[$i]}
  done
}

# Two commands' per-round samples (from the same interleaved rounds) → the
# median of the per-round ratios, with their range: "0.93× (0.88–0.97)".
ratio_spread() { # i, j → ratio of command i to command j
  awk -v a="${rounds_of[$1]}" -v b="${rounds_of[$2]}" 'BEGIN {
    n = split(a, x, " "); split(b, y, " ")
    for (k = 1; k <= n; k++) {
      v = x[k] / y[k]
      for (m = k - 1; m >= 1 && r[m] > v; m--) r[m + 1] = r[m]
      r[m + 1] = v
    }
    printf "%.2f× (%.2f–%.2f)", r[int((n + 1) / 2)], r[1], r[n]
  }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

idgen_rows() { # label, port
  local label=$1 port=$2 sha
  sha=$(redis-cli -p "$port" script load "$next_lua")
  medians "$port" "" \
    "INCR gen:incr" \
    "IDGEN.NEXT gen:idgen" \
    "EVALSHA $sha 1 gen:lua 1" \
    "HINCRBY ids by-hincrby 1" \
    "IDGEN.NEXT ids FIELD by-idgen"
  echo "| $label | \`INCR gen\` | ${best[0]} | |"
  echo "| | \`IDGEN.NEXT gen\` | ${best[1]} | **$(ratio "${best[1]}" "${best[0]}")× INCR** (target ≥ 0.9) |"
  echo "| | \`EVALSHA <next.lua> 1 gen 1\` | ${best[2]} | IDGEN.NEXT is **$(ratio "${best[1]}" "${best[2]}")× EVALSHA** (target ≥ 1.5) |"
  echo "| | \`HINCRBY ids f 1\` | ${best[3]} | |"
  echo "| | \`IDGEN.NEXT ids FIELD f\` | ${best[4]} | **$(ratio "${best[4]}" "${best[3]}")× HINCRBY** |"
}

# The Lua recipe of ARTICLE.CREATE with a slug: create only if absent, claim
# the slug with HSETNX, stamp the server's time.
create_lua='if redis.call("EXISTS", KEYS[1]) == 1 then return 0 end
if redis.call("HSETNX", KEYS[2], ARGV[4], KEYS[1]) == 0 then return redis.error_reply("SLUGTAKEN") end
local t = redis.call("TIME")
redis.call("HSET", KEYS[1], "title", ARGV[1], "content", ARGV[2], "author", ARGV[3],
  "created_at", t[1] * 1000 + math.floor(t[2] / 1000), "slug", ARGV[4])
return 1'

article_rows() { # label, port
  local label=$1 port=$2 sha fields="title hello content some-body-text author peter"
  sha=$(redis-cli -p "$port" script load "$create_lua")
  medians "$port" "ARTICLE.CREATE art:read hello some-body-text peter" \
    "HSET art:__rand_int__ $fields created_at 1700000000000" \
    "ARTICLE.CREATE art:__rand_int__ hello some-body-text peter" \
    "MSETNX art:__rand_int__:title hello art:__rand_int__:content some-body-text art:__rand_int__:author peter art:__rand_int__:created_at 1700000000000" \
    "ARTICLE.CREATE art:__rand_int__ hello some-body-text peter SLUG slugs post-__rand_int__-__rand_int__" \
    "EVALSHA $sha 2 art:__rand_int__ slugs hello some-body-text peter post-__rand_int__-__rand_int__" \
    "HGETALL art:read" \
    "ARTICLE.GET art:read" \
    "HINCRBY art:read views 1" \
    "ARTICLE.VIEW art:read"
  echo "| $label | \`HSET\` of the 4 fields | ${best[0]} | |"
  echo "| | \`ARTICLE.CREATE\` | ${best[1]} | **$(ratio "${best[1]}" "${best[0]}")× HSET** (target ≥ 0.8) |"
  echo "| | \`MSETNX\` of 4 string keys (the old recipe) | ${best[2]} | ARTICLE.CREATE is **$(ratio "${best[1]}" "${best[2]}")×** this |"
  echo "| | \`ARTICLE.CREATE … SLUG\` | ${best[3]} | **$(ratio "${best[3]}" "${best[0]}")× HSET** |"
  echo "| | \`EVALSHA\` create-with-slug script | ${best[4]} | ARTICLE.CREATE … SLUG is **$(ratio "${best[3]}" "${best[4]}")× EVALSHA** (target ≥ 1.5) |"
  echo "| | \`HGETALL\` | ${best[5]} | |"
  echo "| | \`ARTICLE.GET\` | ${best[6]} | **$(ratio "${best[6]}" "${best[5]}")× HGETALL** (target ≥ 0.8) |"
  echo "| | \`HINCRBY … views 1\` | ${best[7]} | |"
  echo "| | \`ARTICLE.VIEW\` | ${best[8]} | **$(ratio "${best[8]}" "${best[7]}")× HINCRBY** (target ≥ 0.8) |"
}

# A 1 KB JSON document without spaces (redis-benchmark splits words).
json_doc() {
  python3 -c 'import json; print(json.dumps({"id": 10086, "name": "Peter", "tags": ["t%d" % i for i in range(60)], "bio": "x" * 500}, separators=(",", ":")))'
}

cache_rows() { # label, port
  local label=$1 port=$2 doc
  doc=$(json_doc)
  medians "$port" "" \
    "SET page:__rand_int__ $doc EX 60" \
    "CACHE.SETJSON page:__rand_int__ $doc EX 60"
  echo "| $label | \`SET key <1 KB JSON> EX 60\` | ${best[0]} | |"
  echo "| | \`CACHE.SETJSON key <1 KB JSON> EX 60\` | ${best[1]} | **$(ratio "${best[1]}" "${best[0]}")× SET** (checks and minifies the JSON) |"
  "$driver" "$port" "" cache-hset
}

# IDPOOL: pools of 10,000,000 IDs, built once per server (the sorted-set
# recipe's O(max) start-up included), then measured by the driver in
# interleaved rounds: clients take IDs and give them back, so the
# 99.99%-leased pool stays 99.99% leased.
pool_size=${POOL_SIZE:-10000000}
pool_leased=$((pool_size - pool_size / 10000))

# Lua helpers that build the states: fill a pool by calling IDPOOL.NEXT, and
# add IDs first..last to a sorted set with one score, 1,000 per ZADD.
pool_fill_lua='for _ = 1, tonumber(ARGV[1]) do redis.call("IDPOOL.NEXT", KEYS[1]) end'
zset_fill_lua='local batch = {}
for id = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  batch[#batch + 1] = ARGV[3]; batch[#batch + 1] = id
  if #batch == 2000 then redis.call("ZADD", KEYS[1], unpack(batch)); batch = {} end
end
if #batch > 0 then redis.call("ZADD", KEYS[1], unpack(batch)) end'

# The client-side recipe as a script: every ID in a sorted set scored by the
# end of its lease (0: never leased); take the one whose lease ended first.
zset_next_lua='local t = redis.call("TIME")
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local free = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", now, "LIMIT", 0, 1)
if #free == 0 then return false end
redis.call("ZADD", KEYS[1], now + ARGV[1], free[1])
return tonumber(free[1])'

# The same sorted set, handing IDs out in cyclic order as IDPOOL.NEXT does:
# walk from the cursor, skipping live leases.
zset_cyclic_lua='local t = redis.call("TIME")
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local max = tonumber(ARGV[1])
local start = tonumber(redis.call("GET", KEYS[2]) or "1")
local id = start
repeat
  local ends = redis.call("ZSCORE", KEYS[1], id)
  if not ends or tonumber(ends) < now then
    redis.call("ZADD", KEYS[1], now + ARGV[2], id)
    redis.call("SET", KEYS[2], id % max + 1)
    return id
  end
  id = id % max + 1
until id == start
return false'

used_memory() { redis-cli -p "$1" info memory | awk -F: '/^used_memory:/ { print $2 + 0 }'; }

fill_pool() { # port, key, count
  local sha left=$3
  sha=$(redis-cli -p "$1" script load "$pool_fill_lua")
  while [ "$left" -gt 0 ]; do
    local batch=$((left > 1000000 ? 1000000 : left))
    redis-cli -p "$1" evalsha "$sha" 1 "$2" "$batch" >/dev/null
    left=$((left - batch))
  done
}

fill_zset() { # port, key, first, last, score
  local sha from=$3
  sha=$(redis-cli -p "$1" script load "$zset_fill_lua")
  while [ "$from" -le "$4" ]; do
    local to=$((from + 999999 < $4 ? from + 999999 : $4))
    redis-cli -p "$1" evalsha "$sha" 1 "$2" "$from" "$to" "$5" >/dev/null
    from=$((to + 1))
  done
}

idpool_rows() { # label, port
  local label=$1 port=$2 next_sha cyclic_sha far=9000000000000000
  redis-cli -p "$port" flushall >/dev/null
  next_sha=$(redis-cli -p "$port" script load "$zset_next_lua")
  cyclic_sha=$(redis-cli -p "$port" script load "$zset_cyclic_lua")
  redis-cli -p "$port" idpool.create pool:empty "$pool_size" >/dev/null
  redis-cli -p "$port" idpool.create pool:full "$pool_size" >/dev/null
  fill_pool "$port" pool:full "$pool_leased"
  fill_zset "$port" zset:empty 1 "$pool_size" 0
  fill_zset "$port" zset:full 1 "$pool_leased" "$far"
  fill_zset "$port" zset:full $((pool_leased + 1)) "$pool_size" 0
  "$driver" "$port" "$label" idpool "$next_sha" "$cyclic_sha" "$pool_size"
  # Memory: 10M IDs, 1% leased. A synchronous flush, so that no memory is
  # still being freed in the background while used_memory is read.
  redis-cli -p "$port" flushall sync >/dev/null
  local before pool_bytes pool_usage zset_bytes
  before=$(used_memory "$port")
  redis-cli -p "$port" idpool.create pool:mem "$pool_size" >/dev/null
  fill_pool "$port" pool:mem $((pool_size / 100))
  pool_bytes=$(($(used_memory "$port") - before))
  pool_usage=$(redis-cli -p "$port" memory usage pool:mem)
  before=$(used_memory "$port")
  fill_zset "$port" zset:mem 1 $((pool_size / 100)) "$far"
  fill_zset "$port" zset:mem $((pool_size / 100 + 1)) "$pool_size" 0
  zset_bytes=$(($(used_memory "$port") - before))
  memory_rows+=("| $label | $((pool_bytes / 1048576)) MiB (MEMORY USAGE $((pool_usage / 1048576)) MiB, $((pool_usage / (pool_size / 100))) B/lease) | $((zset_bytes / 1048576)) MiB | $(ratio "$zset_bytes" "$pool_bytes")× |")
  redis-cli -p "$port" flushall >/dev/null
}

# The hot command of every family against its built-in and the same recipe
# as a script (issue targets in the last column).
hot_field_lua='return redis.call("HINCRBY", KEYS[1], ARGV[1], 1)'
hot_view_lua='if redis.call("EXISTS", KEYS[1]) == 0 then return false end
return redis.call("HINCRBY", KEYS[1], "views", 1)'
hot_get_lua='return redis.call("HGETALL", KEYS[1])'
hot_create_lua='if redis.call("EXISTS", KEYS[1]) == 1 then return 0 end
local t = redis.call("TIME")
redis.call("HSET", KEYS[1], "title", ARGV[1], "content", ARGV[2], "author", ARGV[3],
  "created_at", t[1] * 1000 + math.floor(t[2] / 1000))
return 1'
hot_acquire_lua='local held = redis.call("GET", KEYS[1])
if held == false then redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2]) return 1 end
if held == ARGV[1] then redis.call("PEXPIRE", KEYS[1], ARGV[2]) return 1 end
return false'
hot_setjson_lua='if not pcall(cjson.decode, ARGV[1]) then return redis.error_reply("ERR invalid JSON") end
return redis.call("SET", KEYS[1], ARGV[1])'
# A pool of 1,000,000 IDs and the sorted set of the same IDs, all free.
hot_pool_lua='redis.call("IDPOOL.CREATE", KEYS[1], ARGV[1])
local batch = {}
for id = 1, tonumber(ARGV[1]) do
  batch[#batch + 1] = 0; batch[#batch + 1] = id
  if #batch == 2000 then redis.call("ZADD", KEYS[2], unpack(batch)); batch = {} end
end
if #batch > 0 then redis.call("ZADD", KEYS[2], unpack(batch)) end'
hot_requests=${HOT_REQUESTS:-300000}
hot_rounds=${HOT_ROUNDS:-5}

# A JSON document of about 200 bytes, without spaces.
json_doc_200() {
  python3 -c 'import json; print(json.dumps({"id": 10086, "name": "Peter", "tags": ["t%d" % i for i in range(12)], "bio": "x" * 90}, separators=(",", ":")))'
}

hot_rows() { # label, scenario, port
  local label=$1 scenario=$2 port=$3 doc requests=$requests rounds=$rounds
  local next field view get create acquire setjson pool zset_next
  requests=$hot_requests rounds=$hot_rounds
  doc=$(json_doc_200)
  load() { redis-cli -p "$port" script load "$1"; }
  next=$(load "$next_lua") field=$(load "$hot_field_lua") view=$(load "$hot_view_lua")
  get=$(load "$hot_get_lua") create=$(load "$hot_create_lua") acquire=$(load "$hot_acquire_lua")
  setjson=$(load "$hot_setjson_lua") pool=$(load "$hot_pool_lua") zset_next=$(load "$zset_next_lua")
  medians "$port" "ARTICLE.CREATE art:read hello some-body-text peter" \
    "INCR gen:a" "IDGEN.NEXT gen:b" "EVALSHA $next 1 gen:c 1" \
    "HINCRBY ids f 1" "IDGEN.NEXT ids2 FIELD f" "EVALSHA $field 1 ids3 f" \
    "HINCRBY art:read views 1" "ARTICLE.VIEW art:read" "EVALSHA $view 1 art:read" \
    "HGETALL art:read" "ARTICLE.GET art:read" "EVALSHA $get 1 art:read" \
    "HSET art:__rand_int__ title hello content some-body-text author peter created_at 1700000000000" \
    "ARTICLE.CREATE art:__rand_int__ hello some-body-text peter" \
    "EVALSHA $create 1 art:__rand_int__ hello some-body-text peter" \
    "SET lock:__rand_int__ tok NX PX 60000" "LOCK.ACQUIRE lock:__rand_int__ tok PX 60000" \
    "EVALSHA $acquire 1 lock:__rand_int__ tok 60000" \
    "SET page:__rand_int__ $doc" "CACHE.SETJSON page:__rand_int__ $doc" \
    "EVALSHA $setjson 1 page:__rand_int__ $doc" \
    "SET page:__rand_int__ $doc EX 60" "CACHE.SETJSON page:__rand_int__ $doc EX 60"
  local -a b=("${best[@]}")
  local -a r=("${rounds_of[@]}")
  row() { # command, i (ours), j (built-in), k (script), target
    rounds_of=("${r[@]}")
    local script=""
    [ -z "$4" ] || script="$(ratio_spread "$2" "$4")"
    echo "| $label | $scenario | \`$1\` | ${b[$2]} | ${b[$3]} | $(ratio_spread "$2" "$3") | $script | $5 |"
  }
  row "IDGEN.NEXT gen" 1 0 2 "≥ 0.9× INCR"
  row "IDGEN.NEXT ids FIELD f" 4 3 5 "≥ 0.9× HINCRBY"
  row "ARTICLE.VIEW" 7 6 8 "≥ 0.9× HINCRBY"
  row "ARTICLE.GET" 10 9 11 "≥ 0.9× HGETALL"
  row "ARTICLE.CREATE" 13 12 14 "≥ 0.8× HSET of the fields"
  row "LOCK.ACQUIRE … PX" 16 15 17 "≥ 0.8× SET NX PX"
  row "CACHE.SETJSON <200 B>" 19 18 20 "≥ 0.6× SET"
  row "CACHE.SETJSON <200 B> EX 60" 22 21 "" "(against SET … EX 60)"
  medians "$port" "EVALSHA $pool 2 pool:hot zset:hot 1000000" \
    "INCR gen:a" "IDPOOL.NEXT pool:hot TTL 60000" "EVALSHA $zset_next 1 zset:hot 60000"
  b=("${best[@]}") r=("${rounds_of[@]}")
  row "IDPOOL.NEXT … TTL 60000" 1 0 2 "≥ 0.6× INCR (script: the sorted-set recipe)"
}

# RATE: a GCRA limit of one action per ms with a burst of 1,000,000, never
# reached in a run (every call writes; data flushed before each run), one
# hot key each.
# The script is the usual GCRA recipe (redis-gcra, go-redis's redis_rate):
# read the TAT, decide by the server's TIME, write it back with a TTL.
gcra_lua='local max, period = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call("TIME")
local now = t[1] * 1000 + t[2] / 1000
local interval = period / max
local tolerance = interval * max
local tat = math.max(tonumber(redis.call("GET", KEYS[1]) or now), now)
local new_tat = tat + interval
if new_tat - tolerance > now then
  return {1, max, math.floor((tolerance - (tat - now)) / interval), math.ceil(new_tat - tolerance - now), math.ceil(tat - now)}
end
redis.call("SET", KEYS[1], string.format("%.3f", new_tat), "PX", math.ceil(new_tat - now))
return {0, max, math.floor((tolerance - (new_tat - now)) / interval), -1, math.ceil(new_tat - now)}'
# 100,000 limiters, one action each: memory per key.
rate_fill_lua='for i = 1, tonumber(ARGV[1]) do redis.call(ARGV[2], "m:" .. i, unpack(ARGV, 3)) end'
rate_keys=100000

rate_rows() { # label, port
  local label=$1 port=$2 gcra fill cell=0 before ours theirs
  gcra=$(redis-cli -p "$port" script load "$gcra_lua")
  fill=$(redis-cli -p "$port" script load "$rate_fill_lua")
  if [ -n "${cell_module:-}" ] && redis-cli -p "$port" module load "$cell_module" 2>&1 | grep -q OK; then cell=1; fi
  local -a commands=("INCR rl:incr" "RATE.LIMIT rl:ours 1000000 1000000" "EVALSHA $gcra 1 rl:lua 1000000 1000000")
  [ "$cell" = 0 ] || commands+=("CL.THROTTLE rl:cell 999999 1000000 1000 1")
  medians "$port" "" "${commands[@]}"
  echo "| $label | \`INCR\` | ${best[0]} | |"
  echo "| | \`RATE.LIMIT key 1000000 1000000\` | ${best[1]} | **$(ratio_spread 1 0) INCR** (target ≥ 0.6) |"
  echo "| | GCRA script by \`EVALSHA\` | ${best[2]} | RATE.LIMIT is **$(ratio_spread 1 2)** the script (target ≥ 1.5) |"
  if [ "$cell" = 1 ]; then
    echo "| | \`CL.THROTTLE key 999999 1000000 1000 1\` (redis-cell 0.2.2) | ${best[3]} | RATE.LIMIT is **$(ratio_spread 1 3)** CL.THROTTLE (target ≥ 2) |"
  else
    echo "| | \`CL.THROTTLE\` | — | redis-cell 0.2.2 does not load on this server |"
  fi
  "$driver" "$port" "$label" rate-book
  redis-cli -p "$port" flushall sync >/dev/null
  before=$(used_memory "$port")
  redis-cli -p "$port" evalsha "$fill" 0 "$rate_keys" RATE.LIMIT 10 60000 >/dev/null
  ours=$(( ($(used_memory "$port") - before) / rate_keys ))
  local cell_memory="—"
  if [ "$cell" = 1 ]; then
    redis-cli -p "$port" flushall sync >/dev/null
    before=$(used_memory "$port")
    redis-cli -p "$port" evalsha "$fill" 0 "$rate_keys" CL.THROTTLE 9 10 60 1 >/dev/null
    theirs=$(( ($(used_memory "$port") - before) / rate_keys ))
    cell_memory="$theirs B"
  fi
  rate_memory_rows+=("| $label | $ours B | $cell_memory |")
  redis-cli -p "$port" flushall >/dev/null
}

machine() {
  local cpu
  cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
  echo "Machine: $(nproc) cores ($cpu), $(free -g | awk '/Mem:/ { print $2 }') GiB RAM, $(uname -sr)."
  echo "The load generator and the server share the machine. $(date -u +%Y-%m-%d)."
}

servers=("Redis:$(command -v redis-server)")
if [ -n "${REDIS8_SERVER:-}" ] && [ -x "$REDIS8_SERVER" ]; then
  servers+=("Redis:$REDIS8_SERVER")
fi
if [ -n "${VALKEY_SERVER:-}" ] && [ -x "$VALKEY_SERVER" ]; then
  servers+=("Valkey:$VALKEY_SERVER")
fi

families=" ${FAMILIES:-hot idgen article lock rwlock cache idpool rate queue uqueue pool waiting dropin nearby node autocomplete cost} "
wants() { [[ $families == *" $1 "* ]]; }

idgen_table=() article_table=() release_table=() contention_table=() cache_table=()
idpool_table=() memory_rows=() hot_table=() hot_release_table=() rate_table=() rate_memory_rows=()
pool_table=() queue_table=() uqueue_table=() uqueue_memory_rows=() waiting_table=() dropin_sections=() pyrate_sections=() rwlock_table=() rwlock_waits_table=()
nearby_sections=()
if wants rate; then cell_module=${REDIS_CELL_MODULE:-$(bash bench/redis-cell.sh)}; fi
load_before=$(cut -d' ' -f1 /proc/loadavg)
for server in "${servers[@]}"; do
  start_server "${server#*:}"
  label=$(server_label "${server%%:*}" "$port")
  if wants idgen; then idgen_table+=("$(idgen_rows "$label" "$port")"); fi
  if wants article; then article_table+=("$(article_rows "$label" "$port")"); fi
  if wants cache; then cache_table+=("$(cache_rows "$label" "$port")"); fi
  if wants idpool; then
    idpool_rows "$label" "$port" >"$dir/idpool_rows"
    idpool_table+=("$(cat "$dir/idpool_rows")")
  fi
  if wants rate; then
    rate_rows "$label" "$port" >"$dir/rate_rows"
    rate_table+=("$(cat "$dir/rate_rows")")
  fi
  if wants queue; then queue_table+=("$("$driver" "$port" "$label" queue)"); fi
  if wants uqueue; then
    "$driver" "$port" "$label" uqueue >"$dir/uqueue_rows"
    uqueue_table+=("$(grep -v '^memory|' "$dir/uqueue_rows")")
    uqueue_memory_rows+=("$(sed -n 's/^memory|//p' "$dir/uqueue_rows")")
  fi
  if wants pool; then pool_table+=("$("$driver" "$port" "$label" pool)"); fi
  if wants dropin; then
    dropin_sections+=("$(python3 bench/dropin_lock.py "$port" "$label")")
    dropin_sections+=("$(python3 bench/dropin_redis_lock.py "$port" "$label")")
    dropin_sections+=("$(python3 bench/dropin_limits.py "$port" "$label")")
    pyrate_sections+=("$(python3 bench/dropin_pyrate.py "$port" "$label")")
  fi
  if wants nearby; then nearby_sections+=("$(python3 bench/nearby.py "$port" "$label")"); fi
  if wants lock; then
    release_table+=("$("$driver" "$port" "$label" release)")
    contention_table+=("$("$driver" "$port" "$label" contention)")
  fi
  if wants rwlock; then
    "$driver" "$port" "$label" rwlock "$rounds" >"$dir/rwlock_rows"
    rwlock_table+=("$(grep -v '^waits|' "$dir/rwlock_rows")")
    rwlock_waits_table+=("$(sed -n 's/^waits|//p' "$dir/rwlock_rows")")
  fi
  if wants hot; then
    hot_table+=("$(hot_rows "$label" standalone "$port")")
    hot_release_table+=("$("$driver" "$port" "$label, standalone" release)")
  fi
  stop_server
  if wants waiting; then
    # 15,000 waiting clients need more than the default 10,000 (and as
    # many descriptors in the driver).
    ulimit -n 65536 2>/dev/null || true
    start_server "${server#*:}" --maxclients 20000
    waiting_table+=("$("$driver" "$port" "$label" disconnect)")
    stop_server
  fi
  if wants hot; then
    start_replicated "${server#*:}"
    hot_table+=("$(hot_rows "$label" "replica + AOF" "$port")")
    hot_release_table+=("$("$driver" "$port" "$label, replica + AOF" release)")
    stop_replicated
  fi
done

wants hot && {
  echo "# Hot commands against the built-ins"
  echo
  machine
  echo "redis-benchmark: $clients clients, pipeline $pipeline, $hot_requests requests per run, $hot_rounds"
  echo "interleaved rounds (every command of a group once per round, data flushed before each run)."
  echo "Requests/s are medians; a ratio is the median of the per-round ratios, with their range."
  echo "*standalone*: no replica, no AOF. *replica + AOF*: the primary has \`appendonly yes\`,"
  echo "\`appendfsync everysec\` and one replica attached (both with the module); every write then pays"
  echo "propagation. Scripts are the same recipe as \`EVALSHA\` (bench/run.sh)."
  echo
  echo "| server | scenario | command | requests/s | built-in req/s | × built-in | × EVALSHA | target |"
  echo "|---|---|---|---:|---:|---|---|---|"
  printf '%s\n' "${hot_table[@]}"
  echo
  echo "## LOCK.RELEASEIF"
  echo
  echo "examples/bench_driver.rs: 8 clients, 64 locks each; a round takes all 512 locks, then releases"
  echo "them; *releases/s* times the release phase. Median of 3 interleaved rounds of 2 s."
  echo
  echo "| server | acquire + release | cycles/s | releases/s | ratio |"
  echo "|---|---|---:|---:|---|"
  printf '%s\n' "${hot_release_table[@]}"
} | tee "$hot_results.tmp"
wants hot && mv "$hot_results.tmp" "$hot_results"

wants idgen && {
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
wants idgen && mv "$idgen_results.tmp" "$idgen_results"

wants article && {
  echo "# ARTICLE benchmark"
  echo
  machine
  echo "redis-benchmark: $clients clients, pipeline $pipeline, $requests requests per run,"
  echo "median of $rounds interleaved rounds; keys and slugs are random ('__rand_int__') so every create"
  echo "makes a new article; the data is flushed before each run."
  echo
  echo "| server | command | requests/s | ratio |"
  echo "|---|---|---:|---|"
  printf '%s\n' "${article_table[@]}"
} | tee "$article_results.tmp"
wants article && mv "$article_results.tmp" "$article_results"

wants cache && {
  echo "# CACHE benchmark"
  echo
  machine
  echo "\`SET\`/\`CACHE.SETJSON\`: redis-benchmark, $clients clients, pipeline $pipeline, $requests requests per"
  echo "run, random keys, median of $rounds interleaved rounds. The 4-field hash with a TTL: 8 clients"
  echo "pipelining 64 writes each over a bare RESP connection (examples/bench_driver.rs), median of 3"
  echo "rounds of 2 s; the transaction is MULTI, HSET, EXPIRE, EXEC."
  echo
  echo "| server | command | requests/s | ratio |"
  echo "|---|---|---:|---|"
  printf '%s\n' "${cache_table[@]}"
} | tee "$cache_results.tmp"
wants cache && mv "$cache_results.tmp" "$cache_results"

wants lock && {
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
wants lock && mv "$lock_results.tmp" "$lock_results"

wants rwlock && {
  echo "# RWLOCK benchmark"
  echo
  machine
  echo "1-minute load average before the run: $load_before, after it: $(cut -d' ' -f1 /proc/loadavg) (2 cores,"
  echo "shared with whatever else ran on the machine)."
  echo
  echo "examples/bench_driver.rs, $rounds interleaved rounds (RWLOCK and LOCK in turn, the side that goes"
  echo "first alternating), data flushed before each run. Rates are medians with the range of the rounds;"
  echo "a ratio is the median of the per-round ratios, with their range."
  echo
  echo "*Read-mostly*: 16 clients share one lock for 5 s. Each loops: draw READ (probability 0.9) or WRITE,"
  echo "\`RWLOCK.ACQUIRE rw READ|WRITE <token> PX 10000 WAIT 5000\`, hold 1 ms, \`RWLOCK.RELEASE rw <token>\`,"
  echo "ask again at once. LOCK runs the same draws with every section exclusive: \`LOCK.ACQUIRE lk <token>"
  echo "PX 10000 WAIT 5000\` + \`LOCK.RELEASEIF lk <token>\`. A section is counted when it is released."
  echo "*Uncontended*: 8 clients pipelining 64 pairs each over a bare RESP connection, every pair on a lock"
  echo "of its own: \`RWLOCK.ACQUIRE rw:<n> READ tok PX 60000\` + \`RWLOCK.RELEASE rw:<n> tok\` against"
  echo "\`LOCK.ACQUIRE lk:<n> tok PX 60000\` + \`LOCK.RELEASEIF lk:<n> tok\`; rounds of 2 s."
  echo
  echo "| server | workload | RWLOCK | LOCK | RWLOCK ÷ LOCK | target |"
  echo "|---|---|---:|---:|---|---|"
  printf '%s\n' "${rwlock_table[@]}"
  echo
  echo "## The read-mostly runs"
  echo
  echo "Waits from asking to holding, in ms (p50 / p99 / max over every section of every round), split by"
  echo "the mode drawn (under LOCK both are exclusive). *Holders at once*: the time clients spent holding"
  echo "(from the grant's reply to the release's reply) over the run's time, median of the rounds with their"
  echo "range: under LOCK it stays near 1 (a little above: a release's reply and the next grant overlap)."
  echo "*Fewest*: the sections of the least served client in its worst round, and its share of the mean."
  echo "*Timed out*: acquisitions that gave up after WAIT 5000, all rounds."
  echo
  echo "| server | lock | READ waits ms | WRITE waits ms | holders at once | fewest | timed out |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rwlock_waits_table[@]}"
} | tee "$rwlock_results.tmp"
wants rwlock && mv "$rwlock_results.tmp" "$rwlock_results"
wants idpool && {
  echo "# IDPOOL benchmark"
  echo
  machine
  echo
  echo "## IDPOOL.NEXT"
  echo
  echo "Pools of 10,000,000 IDs, empty and 99.99% leased (9,999,000 IDs leased forever, the 1,000"
  echo "others free). 8 clients each take 64 IDs in one pipeline (the timed phase: IDs taken per"
  echo "second), then give them back, so the fill level holds; median of 3 interleaved rounds of"
  echo "2 s (examples/bench_driver.rs, a bare RESP client). The sorted-set recipe keeps every ID in"
  echo "a sorted set scored by the end of its lease and takes the lowest score (ZRANGEBYSCORE …"
  echo "LIMIT 0 1 and ZADD in one script); it is not cyclic. Handing IDs out in cyclic order from"
  echo "that set means walking from the cursor past every live lease: the last row times 3 such"
  echo "calls right after a wrap."
  echo
  echo "| server | command | requests/s | ratio |"
  echo "|---|---|---:|---|"
  printf '%s\n' "${idpool_table[@]}"
  echo
  echo "## Memory of a pool of 10,000,000 IDs, 1% leased"
  echo
  echo "Growth of \`used_memory\` while the pool is built (100,000 leases taken with IDPOOL.NEXT),"
  echo "against the sorted set of every ID that the recipe needs."
  echo
  echo "| server | IDPOOL | sorted-set recipe | sorted set / IDPOOL |"
  echo "|---|---:|---:|---:|"
  printf '%s\n' "${memory_rows[@]}"
} | tee "$idpool_results.tmp"
wants idpool && mv "$idpool_results.tmp" "$idpool_results"
echo "results written under bench/results/"

wants rate && {
  echo "# RATE benchmark"
  echo
  machine
  echo "redis-benchmark: $clients clients, pipeline $pipeline, $requests requests per run, $rounds"
  echo "interleaved rounds, one key per command, on a limit never reached (every call writes its new"
  echo "state). Requests/s are medians; a ratio is the median of the per-round ratios, with their range."
  echo "The book's recipe: 8 clients pipelining 64 MULTI/INCR/EXPIRE NX/EXEC transactions each over a"
  echo "bare RESP connection, against RATE.LIMIT sent the same way (examples/bench_driver.rs), median of"
  echo "3 rounds of 2 s. The GCRA script is in bench/run.sh; redis-cell 0.2.2 is built from crates.io by"
  echo "bench/redis-cell.sh."
  echo
  echo "| server | command | requests/s | ratio |"
  echo "|---|---|---:|---|"
  printf '%s\n' "${rate_table[@]}"
  echo
  echo "## Memory per limiter key"
  echo
  echo "Growth of \`used_memory\` over $rate_keys keys, each after one action (\`RATE.LIMIT m:<i> 10 60000\`,"
  echo "\`CL.THROTTLE m:<i> 9 10 60 1\`), divided by the number of keys: key, value and expiry together."
  echo
  echo "| server | RATE.LIMIT | CL.THROTTLE |"
  echo "|---|---:|---:|"
  printf '%s\n' "${rate_memory_rows[@]}"
} | tee "$rate_results.tmp"
wants rate && mv "$rate_results.tmp" "$rate_results"

# The servers again, for the callgrind scripts (bench/queue_cost.py,
# bench/uqueue_cost.py), which start their own.
cost_servers=()
for server in "${servers[@]}"; do cost_servers+=("${server#*:}"); done

wants queue && {
  echo "# QUEUE benchmark"
  echo
  machine
  echo "1-minute load average before the run: $load_before, after it: $(cut -d' ' -f1 /proc/loadavg) (2 cores,"
  echo "shared with whatever else ran on the machine)."
  echo
  echo "Pushes per second onto full lists of 1,000 items, 1 and 10 items a push: \`QUEUE.RPUSH key 1000"
  echo "EVICT\` against the book's FadedQueue (MULTI/RPUSH/LTRIM key -1000 -1/EXEC) and a plain \`RPUSH\`"
  echo "(no bound: its lists grow). redis-benchmark sends no transaction, so the three are sent alike by"
  echo "examples/bench_driver.rs: 8 clients pipelining 64 pushes each over a bare RESP connection, on 512"
  echo "lists refilled to 1,000 items before each 2 s run, 5 rounds with the order turned each round."
  echo "Pushes/s are medians; a ratio is the median of the per-round ratios, with their range."
  echo
  echo "| server | command | pushes/s | ratio |"
  echo "|---|---|---:|---|"
  printf '%s\n' "${queue_table[@]}"
  echo
  echo "## Instructions per call (callgrind)"
  echo
  echo "bench/queue_cost.py: each server under \`valgrind --tool=callgrind\` with the module, counters zeroed,"
  echo "12,800 calls sent 64 a batch on one connection (the script's reply parsing not counted), dumped;"
  echo "a list of 1,000 items \`fill-NNNN\` (RPUSH's grows), items \`item-NNNN\`. Everything the server ran,"
  echo "divided by the calls, split as in results/cost.md (module code, module API, dispatch)."
  echo "\`UQUEUE.LEN\` and \`LLEN\` of a missing key: a module command that opens a key and answers an"
  echo "integer, and the built-in that does the same."
  echo
  RECIPES_MODULE=$module python3 bench/queue_cost.py "${cost_servers[@]}"
} | tee "$queue_results.tmp"
wants queue && mv "$queue_results.tmp" "$queue_results"

wants uqueue && {
  echo "# UQUEUE benchmark"
  echo
  machine
  echo "1-minute load average before the run: $load_before, after it: $(cut -d' ' -f1 /proc/loadavg) (2 cores,"
  echo "shared with whatever else ran on the machine)."
  echo
  echo "Round-robin queues of 10,000 items (\`item-00000\`…), one per client: \`UQUEUE.INSERT\` of 1 and of 10"
  echo "queued items (each moved to the tail; the items of a call distinct) against the book's unique"
  echo "circular queue on a list (MULTI, one \`LREM key 0 item\` per item, \`RPUSH key items…\`, EXEC), and"
  echo "\`UQUEUE.ROTATE key\` against \`LMOVE key key LEFT RIGHT\`. examples/bench_driver.rs: 8 clients"
  echo "pipelining 64 calls each over a bare RESP connection, queues refilled before each 2 s run, 5 rounds"
  echo "with the side that goes first alternating. Calls/s are medians; a ratio is the median of the"
  echo "per-round ratios, with their range."
  echo
  echo "| server | call | calls/s | ratio |"
  echo "|---|---|---:|---|"
  printf '%s\n' "${uqueue_table[@]}"
  echo
  echo "## Memory per item"
  echo
  echo "8 queues of 10,000 items of 10 bytes, both ways: growth of \`used_memory\` while they are filled"
  echo "(\`UQUEUE.INSERT\` or \`RPUSH\`, 1,000 items a call) over the 80,000 items, and in brackets the sum of"
  echo "\`MEMORY USAGE key SAMPLES 0\` over them."
  echo
  echo "| server | UQUEUE B/item | list B/item | UQUEUE ÷ list |"
  echo "|---|---:|---:|---:|"
  printf '%s\n' "${uqueue_memory_rows[@]}"
  echo
  echo "## Instructions per call (callgrind)"
  echo
  echo "bench/uqueue_cost.py: each server under \`valgrind --tool=callgrind\` with the module, one queue and"
  echo "one list of the same 10,000 items, counters zeroed, 6,400 calls (the book's: 640) sent 64 a batch"
  echo "on one connection (the script's reply parsing not counted), dumped. Everything the server ran,"
  echo "divided by the calls; in brackets the instructions run in the module's own code."
  echo
  RECIPES_MODULE=$module python3 bench/uqueue_cost.py --markdown "${cost_servers[@]}"
} | tee "$uqueue_results.tmp"
wants uqueue && mv "$uqueue_results.tmp" "$uqueue_results"

wants pool && {
  echo "# POOL benchmark"
  echo
  machine
  echo
  echo "16 clients share a pool of 4 resources; each loops: acquire (waiting), hold 1 ms, release, ask"
  echo "again at once, for 5 s (examples/bench_driver.rs). Waits are from asking to holding; *fewest* is"
  echo "how many times the least served client got a resource, and its share of the mean. The free-list"
  echo "recipe takes with \`BLMOVE free busy\` and gives back with MULTI/LREM/RPUSH/EXEC; the book's"
  echo "recipe runs WATCH/SRANDMEMBER/MULTI/SMOVE/EXEC, tries again at once when the transaction is"
  echo "aborted (a *spurious failure*: a resource was free) and after 1 ms when none is free, and gives"
  echo "back with SMOVE. The last row per server: uncontended acquire + release pairs per second, 8"
  echo "clients pipelining 64 pairs each on pools of their own, median of 3 interleaved rounds of 2 s."
  echo
  echo "| server | how | acquisitions/s | p50 wait ms | p99 wait ms | max wait ms | fewest | spurious failures | ratio |"
  echo "|---|---|---:|---:|---:|---:|---|---:|---|"
  printf '%s\n' "${pool_table[@]}"
} | tee "$pool_results.tmp"
wants pool && mv "$pool_results.tmp" "$pool_results"

wants waiting && {
  echo "# Waiting clients that go at once"
  echo
  machine
  echo
  echo "15,000 clients wait, each on a key of its own (\`LOCK.ACQUIRE k<i> w WAIT 86400000\` on held locks, or"
  echo "\`BLPOP k<i> 0\` on empty lists), then all go at once: by one \`CLIENT KILL TYPE normal\`, timed (the server"
  echo "runs nothing else meanwhile), or by every client closing its connection, timed as the longest \`PING\`"
  echo "round trip of a probe client meanwhile (examples/bench_driver.rs). Medians of 3 rounds, with their range."
  echo "After each LOCK round the module holds no queue (checked)."
  echo
  echo "| server | how they go | \`LOCK.ACQUIRE … WAIT\` waiters | \`BLPOP\` waiters (built-in) |"
  echo "|---|---|---:|---:|"
  printf '%s\n' "${waiting_table[@]}"
} | tee "$waiting_results.tmp"
wants waiting && mv "$waiting_results.tmp" "$waiting_results"

wants dropin && {
  echo "# The drop-ins against the libraries they replace"
  echo
  machine
  echo
  echo "redis-py's \`Lock\` against \`redis_recipes.drop_in.Lock\` (bench/dropin_lock.py), python-redis-lock against"
  echo "\`redis_recipes.drop_in.redis_lock\` (bench/dropin_redis_lock.py), and the \`limits\` package's"
  echo "moving window on its own Redis storage against \`recipes://\` (bench/dropin_limits.py), the same client,"
  echo "server and code otherwise."
  echo
  printf '%s\n\n' "${dropin_sections[@]}"
} | tee "$dropin_results.tmp"
wants dropin && mv "$dropin_results.tmp" "$dropin_results"

wants dropin && {
  echo "# pyrate-limiter's RedisBucket against its drop-in"
  echo
  machine
  echo
  echo "pyrate-limiter's \`RedisBucket\` against \`redis_recipes.drop_in.pyrate_limiter.RedisBucket\` under the library's"
  echo "own \`Limiter\` (bench/dropin_pyrate.py): the same code and server, only the import differs."
  echo
  printf '%s\n\n' "${pyrate_sections[@]}"
} | tee "$pyrate_results.tmp"
wants dropin && mv "$pyrate_results.tmp" "$pyrate_results"
wants nearby && {
  echo "# NEARBY.RANDOM against GEOSEARCH and a pick in the client"
  echo
  machine
  echo
  echo "bench/nearby.py: one client's calls per second, each a round trip (see its docstring for the layouts)."
  echo
  printf '%s\n\n' "${nearby_sections[@]}"
} | tee "$nearby_results.tmp"
wants nearby && mv "$nearby_results.tmp" "$nearby_results"

# The Node.js drop-ins against the libraries they replace (clients/node built by
# `make bench`): redlock under contention (bench/redlock.mjs: its tables replace
# everything from the "Machine:" line of bench/results/redlock.md on, the text
# above it stays), rate-limiter-flexible's consume() (bench/dropin_rlf.mjs), redis-semaphore's Mutex and
# Semaphore contended and alone (bench/redis-semaphore.mjs, into bench/results/redis-semaphore.md the same way).
if wants node; then
  export REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server)} RECIPES_MODULE=$module
  node bench/dropin_rlf.mjs bench/results/dropin-node-rates.md
  { sed '/^Machine:/,$d' bench/results/redlock.md; node bench/redlock.mjs; } > bench/results/redlock.md.tmp
  mv bench/results/redlock.md.tmp bench/results/redlock.md
  { sed '/^Machine:/,$d' bench/results/redis-semaphore.md; node bench/redis-semaphore.mjs; } > bench/results/redis-semaphore.md.tmp
  mv bench/results/redis-semaphore.md.tmp bench/results/redis-semaphore.md
  cat bench/results/dropin-node-rates.md bench/results/redlock.md bench/results/redis-semaphore.md
fi

# AUTOCOMPLETE against the book's prefix tables (one sorted set per prefix):
# hints, feeds, memory, instructions per call and how a hint's cost grows
# (bench/autocomplete.py starts its servers: Redis 7.0, REDIS8_SERVER,
# VALKEY_SERVER).
if wants autocomplete; then
  REDIS_SERVER=$(command -v redis-server) RECIPES_MODULE=$module python3 bench/autocomplete.py \
    bench/results/autocomplete.md >/dev/null
  cat bench/results/autocomplete.md
fi

# Instructions per call under callgrind, each hot command against its
# built-in: what a call costs without the machine's noise, split into the
# module's own code and the module API (bench/cost.py).
if wants cost; then
  REDIS_SERVER=$(command -v redis-server) python3 bench/cost.py bench/results/cost.md
  cat bench/results/cost.md
fi

exit 0
