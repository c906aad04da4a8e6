"""No host secret reaches a command, an MCP stdio server, a result, an event
or a log line (issue 38).

A host process is started with 20 canary secrets in its environment, under
names the old name-based scrub missed as well as the usual ones. It runs a
command that prints its environment, the environment of its parent and of
every process it can see (`ps eww`), on the local and the sandbox backends;
it starts an MCP stdio server that records its own environment; and it
passes one canary through to commands by name and has it printed, which
must come back masked in the result, the streamed events and the logs.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

CANARIES = [
    "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "PGPASSWORD", "MYSQL_PWD",
    "DB_PASS", "DATABASE_URL", "OPENAI_KEY", "SENTRY_DSN", "SLACK_WEBHOOK_URL",
    "ANTHROPIC_API_KEY", "STRIPE_SECRET", "NPM_TOKEN", "DOCKER_AUTH_CONFIG", "REDIS_URL",
    "MONGO_URI", "AZURE_CLIENT_SECRET", "MY_VENDOR_CREDENTIAL", "SESSION_COOKIE", "SMTP_PASS",
]


def value(i: int, name: str) -> str:
    v = f"canary{i:02}value{'q' * 12}"
    return f"redis://:{v}@cache:6379/0" if name.endswith(("_URL", "_URI")) else v


HOST = textwrap.dedent(
    """
    import json, sys
    import hermes_tools
    work, backend, server = sys.argv[1], sys.argv[2], sys.argv[3]
    seen = []
    hermes_tools.set_log_handler(lambda level, msg: seen.append(msg), level=5)
    cfg = {
        "builtin_toolsets": ["terminal"],
        "terminal": {"backend": backend, "cwd": work, "env_passthrough": ["SMTP_PASS"]},
        "approvals": {"mode": "off"},
        "mcp_servers": {"probe": {"command": sys.executable, "args": [server, work]}},
    }
    rt = hermes_tools.Runtime(cfg)
    rt.set_event_handler(lambda e: seen.append(json.dumps(e)))
    out = [rt.dispatch("terminal", {"command": "bash ./probe.sh"})]
    out.append(rt.dispatch("mcp__probe__ping", {}))
    rt.close()
    print(json.dumps({"results": out, "seen": seen}))
    """
)

PROBE = textwrap.dedent(
    """
    env
    echo "SMTP_PASS is $SMTP_PASS"
    tr '\\0' '\\n' < /proc/$PPID/environ
    for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null; done
    ps eww -A 2>/dev/null || true
    """
)

SERVER = textwrap.dedent(
    """
    import os, sys
    from mcp.server.mcpserver import MCPServer
    with open(os.path.join(sys.argv[1], "server-env.txt"), "w") as f:
        f.write("\\n".join(f"{k}={v}" for k, v in os.environ.items()))
    m = MCPServer("probe")

    @m.tool()
    def ping() -> str:
        return "pong"

    m.run()
    """
)


@pytest.mark.parametrize("backend", ["local", "sandbox"])
def test_no_canary_reaches_a_command_a_server_or_an_output(tmp_path, backend):
    if backend == "sandbox" and not shutil.which("bwrap"):
        pytest.skip("bubblewrap not installed")
    work = tmp_path / "work"
    work.mkdir()
    (work / "probe.sh").write_text(PROBE)
    host = tmp_path / "host.py"
    host.write_text(HOST)
    server = tmp_path / "server.py"
    server.write_text(SERVER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for i, name in enumerate(CANARIES):
        env[name] = value(i, name)
    out = subprocess.run(
        [sys.executable, str(host), str(work), backend, str(server)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    text = json.dumps(report)
    assert "PATH=" in report["results"][0], report["results"][0]
    assert "SMTP_PASS is" in report["results"][0]
    assert "pong" in report["results"][1], report["results"][1]
    server_env = (work / "server-env.txt").read_text()
    assert "PATH=" in server_env
    for i, name in enumerate(CANARIES):
        secret = f"canary{i:02}value"
        assert secret not in text, f"{name} reached a result, an event or a log line"
        assert secret not in server_env, f"{name} reached the MCP stdio server"
    assert "***" in report["results"][0]
