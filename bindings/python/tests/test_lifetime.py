"""Nothing a runtime started outlives the Python host that started it.

Each case runs a host in a subprocess: it starts a runtime with the terminal
and an MCP stdio server (which starts a child of its own), runs a command whose child double-forks out of the
session with an empty environment, and then ends without closing the
runtime: SIGKILL, SIGTERM, and a plain ``os._exit``. Every process the
runtime started must be gone within a second.
"""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

HOST = textwrap.dedent(
    """
    import json, os, signal, sys, threading, time
    import hermes_tools
    tag, how, backend, work = sys.argv[1], sys.argv[2], sys.argv[5], sys.argv[6]
    cfg = {
        "builtin_toolsets": ["terminal"],
        "terminal": {"backend": backend, "cwd": work},
        "mcp_servers": {"s": {"command": sys.executable,
                              "args": [sys.argv[4], tag], "timeout": 30}},
    }
    rt = hermes_tools.Runtime(cfg)
    script = sys.argv[3]
    threading.Thread(
        target=lambda: rt.dispatch("terminal", {"command": "python3 " + script}),
        daemon=True,
    ).start()
    print("started", flush=True)
    sys.stdin.readline()
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif how == "term":
        os.kill(os.getpid(), signal.SIGTERM)
    else:
        os._exit(3)
    """
)

# An MCP stdio server (the official Python SDK) that starts a child of its own.
SERVER = textwrap.dedent(
    """
    import subprocess, sys
    from mcp.server.mcpserver import MCPServer
    subprocess.Popen(["/bin/sleep", "5" + sys.argv[1]])
    m = MCPServer("lifetime")

    @m.tool()
    def ping() -> str:
        return "pong"

    m.run()
    """
)

CHILD = textwrap.dedent(
    """
    import os, sys
    tag = sys.argv[1]
    if os.fork() == 0:
        getattr(os, "set" + "sid")()
        if os.fork() == 0:
            os.execve("/bin/sleep", ["/bin/sleep", "6" + tag], {})
        os._exit(0)
    os.execv("/bin/sleep", ["/bin/sleep", "7" + tag])
    """
)


def sleeps(arg: str) -> list:
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and argv[:2] == [b"/bin/sleep", arg.encode()]:
            out.append(int(pid))
    return out


def wait_for(pred, secs: float) -> bool:
    until = time.monotonic() + secs
    while time.monotonic() < until:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


@pytest.mark.parametrize("backend", ["local", "sandbox"])
@pytest.mark.parametrize("how", ["kill", "term", "exit"])
def test_nothing_outlives_the_host(tmp_path, how, backend):
    if backend == "sandbox" and not shutil.which("bwrap"):
        pytest.skip("bubblewrap not installed")
    n = ["kill", "term", "exit"].index(how) + (3 if backend == "sandbox" else 0)
    tag = f"{os.getpid() % 89 + 100}.{n}"
    host = tmp_path / "host.py"
    host.write_text(HOST)
    work = tmp_path / "work"
    work.mkdir()
    # the command's script lives in the workspace, which the sandbox sees
    child = work / "child.py"
    child.write_text(CHILD.replace("sys.argv[1]", repr(tag)))
    server = tmp_path / "server.py"
    server.write_text(SERVER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.Popen(
        [sys.executable, str(host), tag, how, str(child), str(server), backend, str(work)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert p.stdout.readline().strip() == "started"
    everything = ["5" + tag, "6" + tag, "7" + tag]
    assert wait_for(lambda: all(sleeps(a) for a in everything), 20), {
        a: sleeps(a) for a in everything
    }
    p.stdin.write("go\n")
    p.stdin.flush()
    p.wait(timeout=20)
    t0 = time.monotonic()
    gone = wait_for(lambda: not any(sleeps(a) for a in everything), 1.0)
    left = {a: sleeps(a) for a in everything}
    for pids in left.values():
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
    assert gone, f"{how}: still running after {time.monotonic() - t0:.2f}s: {left}"
