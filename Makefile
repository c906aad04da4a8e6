# hermes-tools: build, examples and every test suite.
#   make setup        install what a fresh Debian machine lacks (scripts/setup.sh)
#   make quickstart   build the library and run the C quickstart
#   make test         run every test (Rust, C/C++ contracts, bindings, install,
#                     the stress suite); runs `scripts/setup.sh --check` first
#   make fuzz-json    a million fuzzed inputs per JSON entry point
#   make conformance  the JSON Schema Test Suite (drafts 2020-12, 07), fetched
#                     at run time; skipped with a message when offline
#   make lint         rustfmt, clippy, module import circles
#   make install PREFIX=/usr/local   the release build (see mk/install.mk)

CARGO   ?= cargo
CC      ?= cc
PREFIX  ?= /usr/local
LIBDIR  := target/debug
BUILD_DIR := build
# Output folder used by the mk/ fragments (a variable only: `build` is the cargo target).
BUILD   := $(BUILD_DIR)

.PHONY: bench-threads all build release quickstart example-c example-approval example-plugin setup setup-check test test-rust stress fuzz-json conformance lint bench install clean

all: build

# One debug build for everything: the library, the CLI and every test
# binary, with the features unified across the workspace. A plain `cargo
# build` of the root package alone resolves other features and compiled
# every crate of ours a second time in `make test`.
BUILD_ALL := $(CARGO) build --workspace --all-targets

build:
	$(BUILD_ALL)

# One release build serves the library, the CLI and the bindings: both
# packages in one invocation, so dependency features are unified and nothing
# is built twice (two invocations rebuilt tokio, hyper, rmcp and every crate
# of ours for the CLI). bindings/python/setup.py runs the same command.
#
# FEATURES chooses the library's Cargo features (README "Size"), e.g.
#   make install FEATURES=--no-default-features          (no MCP, no HTTP, no PTY)
#   make install FEATURES="--no-default-features --features mcp-client,pty"
# The CLI always has every feature, so a non-default set is built in a
# second invocation (one invocation would unify the CLI's features into it).
# CARGO_PROFILE=dist is the size-first profile (Cargo.toml: fat LTO,
# optimised for size); target/$(CARGO_PROFILE) holds what is installed.
FEATURES ?=
CARGO_PROFILE ?= release
release:
ifeq ($(strip $(FEATURES)),)
	$(CARGO) build --profile $(CARGO_PROFILE) -p hermes-tools -p hermes-tools-cli
else
	$(CARGO) build --profile $(CARGO_PROFILE) -p hermes-tools-cli
	$(CARGO) build --profile $(CARGO_PROFILE) -p hermes-tools $(FEATURES)
endif

quickstart: build
	mkdir -p $(BUILD_DIR)
	$(CC) -std=c11 -Wall -Wextra -Werror -Iinclude examples/c/quickstart.c -o $(BUILD_DIR)/quickstart \
	  -L$(LIBDIR) -Wl,-rpath,$(CURDIR)/$(LIBDIR) -lhermes_tools
	./$(BUILD_DIR)/quickstart

example-c: quickstart example-approval example-plugin

# The example plugin (examples/c/plugin): a shared library that links against
# nothing; list build/plugins/libhello_plugin.so in a config's "plugins".
example-plugin:
	mkdir -p $(BUILD_DIR)/plugins
	$(CC) -std=c11 -Wall -Wextra -Werror -fPIC -shared -Iinclude examples/c/plugin/hello_plugin.c \
	  -o $(BUILD_DIR)/plugins/libhello_plugin.so

# The approval round trip in C: the host's handler approves one command and denies another.
example-approval: build
	mkdir -p $(BUILD_DIR)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread -Iinclude examples/c/approval.c \
	  -o $(BUILD_DIR)/approval -L$(LIBDIR) -Wl,-rpath,$(CURDIR)/$(LIBDIR) -lhermes_tools
	./$(BUILD_DIR)/approval

# Everything a fresh machine lacks: system packages (apt, as root or through
# sudo), build/venv with pytest, the Node binding's npm packages.
setup:
	scripts/setup.sh

# What the tests run first: a quick no-op when all is there; installs as root;
# as another user it stops with one line naming the command to run.
setup-check:
	@scripts/setup.sh --check

# The built library plus the output folder: what the mk/ fragments depend on.
.PHONY: ht-lib
ht-lib: build | setup-check
	mkdir -p $(BUILD_DIR)

# Binding and packaging fragments add their targets to BINDING_TESTS.
BINDING_TESTS :=
-include mk/*.mk

test: setup-check test-rust $(BINDING_TESTS) conformance stress

# The official JSON-Schema-Test-Suite's required tests for drafts 2020-12
# and 07 through the argument validator, remote references left out: a
# pinned commit fetched into build/ (or HT_JSON_SCHEMA_SUITE=<a copy>); a
# second or two, and a one-line skip without network.
conformance:
	CARGO="$(CARGO)" scripts/json-schema-suite.sh

# The stress suite (tests/stress.rs): soak, races under a watchdog, host
# faults, hostile sizes, process containment; HT_STRESS_SECS per scenario.
stress: | setup-check
	HT_STRESS_SECS=$${HT_STRESS_SECS:-5} $(CARGO) test --workspace --test stress -- --ignored --nocapture --test-threads=1

# Dispatch throughput through the C ABI from 1, 2, 4 and 8 host threads (issue 36).
BENCH_N ?= 300000
bench-threads:
	$(CARGO) build --release -p hermes-tools
	@# The release library records its SONAME: a link of that name beside it.
	mkdir -p $(BUILD_DIR)/bench-lib
	soname=$$(readelf -d target/release/libhermes_tools.so | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p'); \
	  ln -sfn $(CURDIR)/target/release/libhermes_tools.so $(BUILD_DIR)/bench-lib/$${soname:-libhermes_tools.so}
	$(CC) -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Iinclude benches/c/dispatch_threads.c -o $(BUILD_DIR)/dispatch_threads \
	  -Ltarget/release -l:libhermes_tools.so -Wl,-rpath,$(CURDIR)/$(BUILD_DIR)/bench-lib -pthread
	./$(BUILD_DIR)/dispatch_threads $(BENCH_N)

# The JSON entry points' fuzzer, a million runs per target (not part of `make test`).
fuzz-json:
	$(CARGO) run --release -p hermes-runtime --example fuzz_json -- 1000000

test-rust: | setup-check
	python3 scripts/check-cycles.py
	$(BUILD_ALL)
	$(CARGO) test --workspace -- --test-threads=2 --skip backend_swarm
	@# The swarm's tests count services over the whole swarm and time a
	@# killed host's cleanup: alone, after the rest.
	$(CARGO) test -p hermes-runtime --test integration backend_swarm -- --test-threads=1

# Import circles inside a crate: scripts/check-cycles.py (its own tests first).
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	python3 scripts/test_check_cycles.py
	python3 scripts/check-cycles.py

# Speed figures in one run, with the original Python runtime as the reference point.
bench:
	$(CARGO) bench --bench core
	$(CARGO) bench --bench approval
	$(CARGO) bench --bench terminal
	@test -x $(BUILD_DIR)/href/bin/python || (python3 -m venv $(BUILD_DIR)/href && \
	  $(BUILD_DIR)/href/bin/pip install -q hermes-agent==0.19.0)
	$(BUILD_DIR)/href/bin/python benches/reference/hermes_original.py
	HT_ORIGINAL_PYTHON=$(CURDIR)/$(BUILD_DIR)/href/bin/python $(CARGO) bench -p hermes-runtime --bench files
	HT_ORIGINAL_PYTHON=$(CURDIR)/$(BUILD_DIR)/href/bin/python HT_BENCH_PATH=/usr/bin:/bin $(CARGO) bench -p hermes-runtime --bench code_execution

clean:
	$(CARGO) clean
	rm -rf $(BUILD_DIR)
