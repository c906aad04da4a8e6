"""Host-defined environments (issue 33): the terminal and file tools run
through a provider the host brings (here examples/python/host_environment.py,
which starts real bash subprocesses), with approval, timeouts and
cancellation going through as for the built-in backends."""

import importlib.util
import json
import os
import time
from pathlib import Path

import pytest

import hermes_tools
from hermes_tools import HermesToolsError, Runtime
from hermes_tools import _environment

pytestmark = pytest.mark.skipif(
    not _environment.available() or "terminal" not in hermes_tools.features().get("builtin_toolsets", []),
    reason="library without host-defined environments or the built-in terminal",
)

_EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "python" / "host_environment.py"
_spec = importlib.util.spec_from_file_location("host_environment_example", _EXAMPLE)
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie the provider has not reaped yet counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.fixture
def env_rt(tmp_path):
    env = example.SubprocessEnvironment("subproc")
    cfg = {
        "builtin_toolsets": ["terminal", "file"],
        "terminal": {"backend": "subproc", "cwd": str(tmp_path), "kill_grace": 0.5},
        "approvals": {"mode": "manual", "non_interactive": "deny"},
    }
    rt = Runtime(cfg, environments=[env])
    env.close()  # the runtime holds what it needs
    yield env, rt, tmp_path
    rt.close()
    assert None in env.cleanups, "the runtime's close did not reach the provider"


def terminal(rt, command, **kw):
    args = {"command": command, **kw}
    return json.loads(rt.dispatch("terminal", args, context={"task_id": "t1"}))


def test_commands_run_through_the_provider_with_state(env_rt):
    env, rt, work = env_rt
    before = len(env.commands)
    out = terminal(rt, "echo hi; echo oops >&2; exit 3")
    assert out["exit_code"] == 3 and out["output"] == "hi\noops", out
    # the provider saw it as bash -c <script>, in the task's name
    ran = [c for c in env.commands[before:] if not c.capture]
    assert len(ran) == 1 and ran[0].argv[:2] == ["bash", "-c"] and ran[0].task == "t1"
    assert "echo hi; echo oops >&2; exit 3" in ran[0].script
    # cwd and exported variables persist between commands, on the far side
    terminal(rt, "mkdir -p sub && cd sub && export HT_PY_VAR=kept")
    out = terminal(rt, "pwd; echo $HT_PY_VAR")
    assert out["output"] == f"{work}/sub\nkept", out


def test_file_tools_use_the_providers_file_api(env_rt):
    env, rt, work = env_rt
    path = f"{work}/notes.txt"
    out = json.loads(rt.dispatch("write_file", {"path": path, "content": "one\ntwo\n"}, context={"task_id": "t1"}))
    assert out.get("bytes_written") == 8, out
    assert Path(path).read_text() == "one\ntwo\n"
    out = json.loads(rt.dispatch("read_file", {"path": path}, context={"task_id": "t1"}))
    assert "two" in out["content"], out
    assert ("write", path) in env.file_ops and ("read", path) in env.file_ops
    out = json.loads(rt.dispatch("read_file", {"path": f"{work}/missing.txt"}, context={"task_id": "t1"}))
    assert "error" in out and ("not found" in out["error"].lower() or "no such" in out["error"].lower()), out
    # what the native API does not cover (search) goes through the provider's commands
    out = json.loads(rt.dispatch("search_files", {"pattern": "two", "path": str(work)}, context={"task_id": "t1"}))
    assert "notes.txt" in json.dumps(out), out


def test_a_dangerous_command_never_reaches_the_provider(env_rt):
    env, rt, work = env_rt
    asked = []
    rt.set_approval_handler(lambda req: asked.append(req) or False)
    before = len(env.commands)
    out = terminal(rt, f"rm -rf {work}/x")
    assert out.get("status") == "blocked", out
    # the prompt says where the command would have run
    assert asked and asked[0]["runs_on"] == env.location, asked
    assert not any(f"rm -rf {work}/x" in c.script for c in env.commands[before:])


def test_a_timeout_kills_the_providers_command(env_rt):
    env, rt, work = env_rt
    t0 = time.monotonic()
    out = terminal(rt, "echo started; sleep 30; echo never", timeout=1)
    took = time.monotonic() - t0
    assert took < 8, took
    assert "started" in out["output"] and "never" not in out["output"], out
    assert any(sig == 15 for _, sig in env.kills), env.kills
    # the provider's subprocess is gone
    time.sleep(0.3)
    assert not any(alive(p.pid) for p in env.procs.values())


def test_cancellation_reaches_the_provider(env_rt):
    env, rt, work = env_rt
    fut = rt.dispatch_future("terminal", {"command": "sleep 30"}, context={"task_id": "t1"})
    deadline = time.monotonic() + 10
    while not any("sleep 30" in c.script for c in env.commands if not c.capture):
        assert time.monotonic() < deadline, "the command never reached the provider"
        time.sleep(0.05)
    started = [c for c in env.commands if "sleep 30" in c.script][0]
    proc = env.procs[started.id]
    t0 = time.monotonic()
    rt.cancel(fut.call_id)
    with pytest.raises(HermesToolsError):
        fut.result(10)
    deadline = time.monotonic() + 5
    while alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(proc.pid), "the provider's command survived the cancellation"
    assert any(i == started.id for i, _ in env.kills), env.kills
    assert time.monotonic() - t0 < 5


def test_a_provider_failure_is_reported_to_the_model(tmp_path):
    class Broken(example.SubprocessEnvironment):
        def run(self, exec):
            if not exec.capture and "vanish" in exec.script:
                raise ConnectionError("sandbox sb-42 disappeared")
            return super().run(exec)

    env = Broken("broken")
    cfg = {"builtin_toolsets": ["terminal"], "terminal": {"backend": "broken", "cwd": str(tmp_path)}}
    with Runtime(cfg, environments=[env]) as rt:
        env.close()
        out = json.loads(rt.dispatch("terminal", {"command": "echo vanish"}))
        assert out["exit_code"] != 0 and "sandbox sb-42 disappeared" in json.dumps(out), out
        out = json.loads(rt.dispatch("terminal", {"command": "echo fine"}))
        assert out["output"] == "fine", out


def test_names_and_config_are_checked(tmp_path):
    env = example.SubprocessEnvironment("docker")
    with pytest.raises(HermesToolsError) as e:
        Runtime({"terminal": {"backend": "docker"}}, environments=[env])
    assert "built-in" in str(e.value)
    env2 = example.SubprocessEnvironment("other")
    with pytest.raises(HermesToolsError) as e:
        Runtime({"builtin_toolsets": ["terminal"], "terminal": {"backend": "nosuch"}}, environments=[env2])
    assert "nosuch" in str(e.value)
    env2.close()
