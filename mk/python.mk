# Python binding (bindings/python, ctypes): tests and the agent-host example.
#   make test-python     pytest suite against target/debug/libhermes_tools.so
#   make example-python  run examples/python/agent_host.py
#   make wheel           a wheel that bundles the release library (build/wheels/)
# The tests run in build/venv (made by scripts/setup.sh, with pytest): Debian's
# own python3 refuses a global `pip install` (PEP 668).
PYTHON    ?= python3
PY_VENV   := $(BUILD)/venv
PY_TEST   := $(PY_VENV)/bin/python

.PHONY: test-python example-python python-deps wheel

python-deps: setup-check

# pytest exits 5 when it collects nothing: make treats that as the failure it is.
test-python: python-deps ht-lib
	cd bindings/python && HERMES_TOOLS_LIB=$(CURDIR)/$(LIBDIR)/libhermes_tools.so $(CURDIR)/$(PY_TEST) -m pytest -q

example-python: ht-lib
	HERMES_TOOLS_LIB=$(CURDIR)/$(LIBDIR)/libhermes_tools.so PYTHONPATH=$(CURDIR)/bindings/python \
	  $(PYTHON) examples/python/agent_host.py

# bindings/python/setup.py runs `cargo build --release` and bundles
# target/release/libhermes_tools.so into the wheel.
wheel: | setup-check
	$(PY_TEST) -m pip wheel -q --no-deps -w $(BUILD)/wheels bindings/python
	@ls $(BUILD)/wheels/hermes_tools-*.whl

BINDING_TESTS += test-python
