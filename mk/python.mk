# Python binding (bindings/python, ctypes): tests and the agent-host example.
#   make test-python     pytest suite against target/debug/libhermes_tools.so
#   make example-python  run examples/python/agent_host.py
PYTHON ?= python3

.PHONY: test-python example-python python-deps

python-deps:
	@$(PYTHON) -c "import pytest" 2>/dev/null || $(PYTHON) -m pip install -q pytest

test-python: python-deps ht-lib
	cd bindings/python && HERMES_TOOLS_LIB=$(CURDIR)/$(LIBDIR)/libhermes_tools.so $(PYTHON) -m pytest -q

example-python: ht-lib
	HERMES_TOOLS_LIB=$(CURDIR)/$(LIBDIR)/libhermes_tools.so PYTHONPATH=$(CURDIR)/bindings/python \
	  $(PYTHON) examples/python/agent_host.py

BINDING_TESTS += test-python
