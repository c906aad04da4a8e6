# The official MCP conformance suite (@modelcontextprotocol/conformance) against
# ht_runtime_serve_mcp: tests/mcp_conformance/fixture_host.py registers the
# suite's fixture tools as host tools (Python binding) and serves them over
# streamable HTTP; every server scenario runs, and any applicable one that fails
# fails the target (tests/mcp_conformance/not_applicable.yml: those that do not
# apply, and why). Node 22 and the suite come from scripts/setup.sh
# (build/tools/node22). About 5 s.
#   make test-mcp-conformance
CONFORMANCE_DIR := $(BUILD)/tools/node22/node_modules
CONFORMANCE_OUT := $(BUILD)/mcp-conformance

.PHONY: test-mcp-conformance

test-mcp-conformance: python-deps ht-lib
	rm -rf $(CONFORMANCE_OUT)
	HERMES_TOOLS_LIB=$(CURDIR)/$(LIBDIR)/libhermes_tools.so PYTHONPATH=$(CURDIR)/bindings/python \
	  $(CURDIR)/$(PY_TEST) tests/mcp_conformance/run.py $(CONFORMANCE_DIR)/.bin/node \
	  $(CONFORMANCE_DIR)/@modelcontextprotocol/conformance/dist/index.js $(CONFORMANCE_OUT)

BINDING_TESTS += test-mcp-conformance

# The suite's client scenarios against the runtime as an MCP client:
# tests/mcp_conformance/client_driver.py (Python binding) is the client the
# suite launches; tests/mcp_conformance/client_not_applicable.yml lists the
# scenarios it does not pass and why. The scenarios run in parallel (about
# 11 s). Stable suite (scripts/setup.sh's version).
#   make test-mcp-conformance-client
.PHONY: test-mcp-conformance-client

test-mcp-conformance-client: python-deps ht-lib
	HERMES_TOOLS_LIB=$(CURDIR)/$(LIBDIR)/libhermes_tools.so PYTHONPATH=$(CURDIR)/bindings/python \
	  $(CONFORMANCE_DIR)/.bin/node $(CONFORMANCE_DIR)/@modelcontextprotocol/conformance/dist/index.js \
	  client --command "$(CURDIR)/$(PY_TEST) $(CURDIR)/tests/mcp_conformance/client_driver.py" \
	  --suite all --timeout 20000 \
	  --expected-failures $(CURDIR)/tests/mcp_conformance/client_not_applicable.yml

BINDING_TESTS += test-mcp-conformance-client
