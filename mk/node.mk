# Node binding (bindings/node, koffi): tests, the agent-host example, the package.
#   make test-node     node --test against target/debug/libhermes_tools.so
#   make example-node  run examples/node/agent_host.mjs
#   make npm-pack      build/npm/hermes-tools-<version>.tgz with the release
#                      library bundled (native/libhermes_tools.so)
# The binding's npm packages (koffi, from package-lock.json) are installed by
# scripts/setup.sh (`npm ci`), which every test target runs first.
NODE ?= node
NPM  ?= npm

.PHONY: test-node example-node node-deps npm-pack

node-deps: setup-check

test-node: node-deps ht-lib
	cd bindings/node && HERMES_TOOLS_LIB=$(CURDIR)/$(LIBDIR)/libhermes_tools.so $(NODE) --test test/

example-node: node-deps ht-lib
	HERMES_TOOLS_LIB=$(CURDIR)/$(LIBDIR)/libhermes_tools.so $(NODE) examples/node/agent_host.mjs

# The package is staged in build/npm/stage so the source folder never holds a
# copy of the library that could shadow target/debug in the tests.
npm-pack: release | setup-check
	scripts/npm-pack.sh $(BUILD)/npm

BINDING_TESTS += test-node
