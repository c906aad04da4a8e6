import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import pytest  # noqa: E402

import hermes_tools  # noqa: E402


@pytest.fixture
def rt():
    # Checks run on library threads and wait for the GIL: 5 s, not the
    # default 250 ms, so a loaded machine does not hide a tool.
    r = hermes_tools.Runtime({"dispatch": {"timeout": 2}, "availability": {"check_timeout_ms": 5000}})
    yield r
    r.close()
    assert hermes_tools._runtime._handles.count(r) == 0, "a registration was not released"
    assert hermes_tools._runtime._handles.double_frees == 0
