#!/usr/bin/env bash
# Builds redis-server 8.6.3 from Debian's source package (experimental) into
# .servers/ (ignored by git) once, and prints the binary's path. Later runs
# reuse the build. apt reads a sources list of its own under .servers/: the
# machine's apt configuration is not touched.
#
#   bash tests/servers/redis8.sh            # prints .servers/redis-8.6.3/src/redis-server
#   REDIS8_SERVER=/path/to/redis-server make test   # any other build instead
set -euo pipefail

version=8.6.3
debian_version=5:8.6.3-1
root=$(cd "$(dirname "$0")/../.." && pwd)/.servers
binary=$root/redis-$version/src/redis-server

if [ -x "$binary" ] && "$binary" --version | grep -q "v=$version "; then
  echo "$binary"
  exit 0
fi

mkdir -p "$root/apt/lists/partial" "$root/apt/cache/archives/partial"
cd "$root"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian experimental main" \
  >apt/sources.list
apt_options=(-o "Dir::Etc::SourceList=$root/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
  -o "Dir::State::Lists=$root/apt/lists" -o "Dir::Cache=$root/apt/cache" -o APT::Sandbox::User=root -qq)
{
  apt-get "${apt_options[@]}" update
  apt-get "${apt_options[@]}" source --download-only "redis=$debian_version"
} >&2
rm -rf "redis-$version"
tar -xzf "redis_$version.orig.tar.gz"
# Upstream's own build: no TLS, no systemd, no bundled modules.
make -C "redis-$version" -j"$(nproc)" BUILD_TLS=no USE_SYSTEMD=no redis-server >"$root/build-$version.log" 2>&1 ||
  { tail -40 "$root/build-$version.log" >&2; exit 1; }
"$binary" --version >&2
echo "$binary"
