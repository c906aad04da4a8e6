# hermes-tools: build, examples and every test suite.
#   make quickstart   build the library and run the C quickstart
#   make test         run every test (Rust, C/C++ contracts, bindings)
#   make install PREFIX=/usr/local

CARGO   ?= cargo
CC      ?= cc
PREFIX  ?= /usr/local
LIBDIR  := target/debug
BUILD   := build

.PHONY: all build release quickstart example-c test test-rust lint bench install clean

all: build

build:
	$(CARGO) build

release:
	$(CARGO) build --release

$(BUILD):
	mkdir -p $(BUILD)

quickstart: build | $(BUILD)
	$(CC) -std=c11 -Wall -Wextra -Werror -Iinclude examples/c/quickstart.c -o $(BUILD)/quickstart \
	  -L$(LIBDIR) -Wl,-rpath,$(CURDIR)/$(LIBDIR) -lhermes_tools
	./$(BUILD)/quickstart

example-c: quickstart

# Binding and packaging fragments add their targets to BINDING_TESTS.
BINDING_TESTS :=
-include mk/*.mk

test: test-rust $(BINDING_TESTS)

test-rust:
	$(CARGO) build
	$(CARGO) test -- --test-threads=2

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

# Speed figures in one run, with the original Python runtime as the reference point.
bench: | $(BUILD)
	$(CARGO) bench --bench core
	@test -x $(BUILD)/href/bin/python || (python3 -m venv $(BUILD)/href && \
	  $(BUILD)/href/bin/pip install -q hermes-agent==0.19.0)
	$(BUILD)/href/bin/python benches/reference/hermes_original.py

clean:
	$(CARGO) clean
	rm -rf $(BUILD)
