#!/usr/bin/env bash
# Builds redis-server 8.6.3 from Debian's source package (experimental) into
# .servers/ (ignored by git) once, and prints the binary's path. Later runs
# reuse the build. apt reads a sources list of its own under .servers/, on
# the Debian mirror the machine's apt sources name: the machine's apt
# configuration is not touched.
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

# The Debian mirror this machine's apt already uses: the first source that
# serves the release it runs (deb822 .sources files, then one-line .list
# files), never a fixed host.
debian_mirror() {
  local codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || return 1
  {
    for file in /etc/apt/sources.list.d/*.sources; do
      [ -r "$file" ] || continue
      awk -v codename="$codename" '
        function flush() { if (deb && suite && uri != "") print uri; deb = suite = 0; uri = "" }
        /^[[:space:]]*$/ { flush(); next }
        /^#/ { next }
        tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
        tolower($1) == "uris:" { uri = $2 }
        tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == codename) suite = 1 }
        END { flush() }' "$file"
    done
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -r "$file" ] || continue
      # deb [options] uri suite components…
      sed -e 's/\[[^]]*\]//' "$file" | awk -v codename="$codename" '$1 == "deb" && $3 == codename { print $2 }'
    done
  } | head -1 | grep .
}

mirror=$(debian_mirror) || {
  echo "redis8.sh: no apt source serving this Debian release found in /etc/apt; set REDIS8_SERVER to a redis-server 8.6 build" >&2
  exit 1
}
mkdir -p "$root/apt/lists/partial" "$root/apt/cache/archives/partial"
cd "$root"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror experimental main" \
  >apt/sources.list
apt_options=(-o "Dir::Etc::SourceList=$root/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
  -o "Dir::State::Lists=$root/apt/lists" -o "Dir::Cache=$root/apt/cache" -o APT::Sandbox::User=root -qq)
{
  apt-get "${apt_options[@]}" update
  apt-get "${apt_options[@]}" source --download-only "redis=$debian_version"
} >&2
rm -rf "redis-$version" debian
tar -xzf "redis_$version.orig.tar.gz"
tar -xJf "redis_${debian_version#*:}.debian.tar.xz" debian/patches
# Linked with Debian's jemalloc (libjemalloc-dev), as Debian's package is: the
# package's patch that adds USE_SYSTEM_JEMALLOC, then upstream's makefile with
# it, no TLS, no systemd, no bundled modules. (Building the bundled jemalloc
# took about as long as the rest of the server.)
patch -d "redis-$version" -p1 --quiet <debian/patches/0004-Add-support-for-USE_SYSTEM_JEMALLOC-flag.patch
make -C "redis-$version" -j"$(nproc)" BUILD_TLS=no USE_SYSTEMD=no USE_SYSTEM_JEMALLOC=yes redis-server \
  >"$root/build-$version.log" 2>&1 || { tail -40 "$root/build-$version.log" >&2; exit 1; }
"$binary" --version >&2
echo "$binary"
