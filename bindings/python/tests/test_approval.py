import asyncio
import json
import time

import pytest

import hermes_tools
from hermes_tools import HermesToolsError, Runtime
from hermes_tools._runtime import _handles

pytestmark = pytest.mark.skipif(
    not hermes_tools._ffi.has("ht_runtime_set_approval_handler")
    or "terminal" not in hermes_tools.features().get("builtin_toolsets", []),
    reason="library without the approval API or the built-in terminal",
)

ASK = "rm -rf /tmp/hermes_tools_py_scratch_dir"


def terminal_rt(**approvals):
    cfg = {"builtin_toolsets": ["terminal"], "terminal": {"backend": "local"}}
    if approvals:
        cfg["approvals"] = approvals
    return Runtime(cfg)


def test_builtin_terminal_schemas_and_run():
    with terminal_rt() as rt:
        names = [d["function"]["name"] for d in rt.definitions()]
        assert "terminal" in names
        out = json.loads(rt.dispatch("terminal", {"command": "echo hello"}))
        assert out["output"].strip() == "hello" and out["exit_code"] == 0


def test_approval_handler_denies_and_sees_request():
    asked = []
    with terminal_rt() as rt:
        rt.set_approval_handler(lambda req: asked.append(req) or False)
        out = json.loads(rt.dispatch("terminal", {"command": ASK}, context={"task_id": "t1"}))
        assert out["status"] == "blocked" and "denied" in out["error"]
        assert asked and asked[0]["verdict"] == "ask"
        assert asked[0]["untrusted_command_text"] == ASK
        assert "rm-recursive" in asked[0]["rules"]


def test_approval_handler_async_and_allow_once(tmp_path):
    target = tmp_path / "scratch"
    target.mkdir()
    (target / "f").write_text("x")

    async def approve(req):
        await asyncio.sleep(0.001)
        return "once"

    with terminal_rt() as rt:
        rt.set_approval_handler(approve)
        out = json.loads(rt.dispatch("terminal", {"command": f"rm -rf {target}"}))
        assert out["exit_code"] == 0, out
        assert not target.exists()


def test_hardline_block_never_asks():
    asked = []
    with terminal_rt() as rt:
        rt.set_approval_handler(lambda req: asked.append(req) or True)
        out = json.loads(rt.dispatch("terminal", {"command": "rm -rf /"}))
        assert out["status"] == "blocked" and "hardline" in out["error"]
        assert asked == []


def test_failing_approval_handler_denies():
    def bad(req):
        raise RuntimeError("ui crashed")

    with terminal_rt() as rt:
        rt.set_approval_handler(bad)
        out = json.loads(rt.dispatch("terminal", {"command": ASK}))
        assert out["status"] == "blocked"


def test_approval_handler_released_once_and_removable():
    rt = terminal_rt()
    rt.set_approval_handler(lambda req: False)
    first = next(e for e in list(_handles._items.values()) if e.runtime is rt and e.kind == "approval")
    rt.set_approval_handler(lambda req: False)  # replaces: the first is freed
    deadline = time.time() + 5
    while first.free_count == 0 and time.time() < deadline:
        time.sleep(0.01)
    assert first.free_count == 1
    rt.set_approval_handler(None)
    rt.set_approval_reviewer(lambda req: None)
    rt.close()
    assert _handles.count(rt) == 0
    assert first.free_count == 1


def test_reviewer_smart_mode():
    reviewed, asked = [], []
    with terminal_rt(mode="smart") as rt:
        rt.set_approval_reviewer(lambda req: reviewed.append(req) or "deny")
        rt.set_approval_handler(lambda req: asked.append(req) or True)
        out = json.loads(rt.dispatch("terminal", {"command": ASK}))
        assert out["status"] == "blocked"
        assert reviewed and reviewed[0]["kind"] == "review"
        assert asked == []


def test_allowlist_and_session_approvals():
    with terminal_rt() as rt:
        assert rt.allowlist() == []
        rt.clear_session_approvals("s1")
        with pytest.raises(HermesToolsError):
            rt.set_allowlist("not json")
        rt.set_allowlist([])
        assert rt.allowlist() == []
