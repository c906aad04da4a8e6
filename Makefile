# hermes-tools: build, examples and every test suite.
#   make quickstart   build the library and run the C quickstart
#   make test         run every test (Rust, C/C++ contracts, bindings)
#   make install PREFIX=/usr/local

CARGO   ?= cargo
CC      ?= cc
PREFIX  ?= /usr/local
LIBDIR  := target/debug
BUILD_DIR := build
# Output folder used by the mk/ fragments (a variable only: `build` is the cargo target).
BUILD   := $(BUILD_DIR)

.PHONY: all build release quickstart example-c example-approval test test-rust lint bench install clean

all: build

build:
	$(CARGO) build

release:
	$(CARGO) build --release

quickstart: build
	mkdir -p $(BUILD_DIR)
	$(CC) -std=c11 -Wall -Wextra -Werror -Iinclude examples/c/quickstart.c -o $(BUILD_DIR)/quickstart \
	  -L$(LIBDIR) -Wl,-rpath,$(CURDIR)/$(LIBDIR) -lhermes_tools
	./$(BUILD_DIR)/quickstart

example-c: quickstart example-approval

# The approval round trip in C: the host's handler approves one command and denies another.
example-approval: build
	mkdir -p $(BUILD_DIR)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread -Iinclude examples/c/approval.c \
	  -o $(BUILD_DIR)/approval -L$(LIBDIR) -Wl,-rpath,$(CURDIR)/$(LIBDIR) -lhermes_tools
	./$(BUILD_DIR)/approval

# The built library plus the output folder: what the mk/ fragments depend on.
.PHONY: ht-lib
ht-lib: build
	mkdir -p $(BUILD_DIR)

# Binding and packaging fragments add their targets to BINDING_TESTS.
BINDING_TESTS :=
-include mk/*.mk

test: test-rust $(BINDING_TESTS)

test-rust:
	$(CARGO) build
	$(CARGO) test --workspace -- --test-threads=2

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

# Speed figures in one run, with the original Python runtime as the reference point.
bench:
	$(CARGO) bench --bench core
	$(CARGO) bench --bench approval
	$(CARGO) bench --bench terminal
	@test -x $(BUILD_DIR)/href/bin/python || (python3 -m venv $(BUILD_DIR)/href && \
	  $(BUILD_DIR)/href/bin/pip install -q hermes-agent==0.19.0)
	$(BUILD_DIR)/href/bin/python benches/reference/hermes_original.py

clean:
	$(CARGO) clean
	rm -rf $(BUILD_DIR)
