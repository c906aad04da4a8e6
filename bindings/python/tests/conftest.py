import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import pytest  # noqa: E402

import hermes_tools  # noqa: E402


@pytest.fixture
def rt():
    r = hermes_tools.Runtime({"dispatch": {"timeout": 2}})
    yield r
    r.close()
    assert hermes_tools._runtime._handles.count(r) == 0, "a registration was not released"
    assert hermes_tools._runtime._handles.double_frees == 0
