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
