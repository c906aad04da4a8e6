# Node binding (bindings/node, koffi): tests and the agent-host example.
#   make test-node     node --test against target/debug/libhermes_tools.so
#   make example-node  run examples/node/agent_host.mjs
NODE ?= node
NPM  ?= npm

.PHONY: test-node example-node node-deps

bindings/node/node_modules/koffi/package.json: bindings/node/package.json bindings/node/package-lock.json
	cd bindings/node && $(NPM) ci --no-audit --no-fund
	@touch $@

node-deps: bindings/node/node_modules/koffi/package.json

test-node: node-deps ht-lib
	cd bindings/node && HERMES_TOOLS_LIB=$(CURDIR)/$(LIBDIR)/libhermes_tools.so $(NODE) --test test/

example-node: node-deps ht-lib
	HERMES_TOOLS_LIB=$(CURDIR)/$(LIBDIR)/libhermes_tools.so $(NODE) examples/node/agent_host.mjs

BINDING_TESTS += test-node
