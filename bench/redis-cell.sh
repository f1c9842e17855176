#!/usr/bin/env bash
# Builds redis-cell 0.2.2 (CL.THROTTLE, the peer module `make bench` compares
# RATE.LIMIT with) from its crates.io release into .servers/ (ignored by
# git) once, and prints the module's path.
set -euo pipefail
version=0.2.2
root=$(cd "$(dirname "$0")/.." && pwd)/.servers
crate=$root/redis-cell-$version
module=$crate/target/release/libredis_cell.so
if [ ! -f "$module" ]; then
  mkdir -p "$root"
  curl -sfL "https://static.crates.io/crates/redis-cell/redis-cell-$version.crate" -o "$crate.crate"
  tar -xzf "$crate.crate" -C "$root"
  cargo build --release --quiet --manifest-path "$crate/Cargo.toml" 2>/dev/null >&2 ||
    cargo build --release --manifest-path "$crate/Cargo.toml" >&2
fi
echo "$module"
