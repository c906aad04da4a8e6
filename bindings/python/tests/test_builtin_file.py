import json

import pytest

import hermes_tools
from hermes_tools import Runtime

pytestmark = pytest.mark.skipif(
    "file" not in hermes_tools.features().get("builtin_toolsets", []),
    reason="library without the built-in file toolset",
)


def test_file_tools_write_read_patch(tmp_path):
    cfg = {"builtin_toolsets": ["file"], "terminal": {"cwd": str(tmp_path)},
           "data_dir": str(tmp_path / "data")}
    with Runtime(cfg) as rt:
        out = json.loads(rt.dispatch("write_file", {"path": "notes.txt", "content": "one\ntwo\n"}))
        assert out["bytes_written"] == 8, out
        out = json.loads(rt.dispatch("read_file", {"path": "notes.txt"}))
        assert out["content"] == "1|one\n2|two", out
        out = json.loads(rt.dispatch("patch", {"mode": "replace", "path": "notes.txt",
                                               "old_string": "two", "new_string": "three"}))
        assert out["success"] is True, out
        assert (tmp_path / "notes.txt").read_text() == "one\nthree\n"
