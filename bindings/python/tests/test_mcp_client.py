"""The Python wrappers of ht_runtime_mcp_status, add/remove_mcp_server and
the OAuth handler (issue 35): a real stdio MCP server
(crates/runtime/tests/fixtures/versioned_server.py) and a full OAuth sign-in
against crates/runtime/tests/fixtures/oauth-server.cjs (skipped without its
npm packages: scripts/setup.sh, or HT_MCP_SERVERS)."""

import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

import hermes_tools
from hermes_tools import HermesToolsError, Runtime

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "../../../crates/runtime/tests/fixtures"))
MODULES = os.environ.get("HT_MCP_SERVERS") or os.path.normpath(os.path.join(HERE, "../../../build/tools/node_modules"))


def test_stdio_server_add_status_call_remove(rt):
    assert rt.mcp_status() == {}
    with pytest.raises(HermesToolsError) as e:
        rt.add_mcp_server("bad", "{not json")
    assert e.value.status == hermes_tools.INVALID_JSON
    with pytest.raises(HermesToolsError) as e:
        rt.remove_mcp_server("nobody")
    assert e.value.status == hermes_tools.NOT_FOUND
    cfg = {"command": sys.executable, "args": [os.path.join(FIXTURES, "versioned_server.py")], "connect_timeout": 20}
    rt.add_mcp_server("v", cfg)
    with pytest.raises(HermesToolsError) as e:
        rt.add_mcp_server("v", cfg)
    assert e.value.status == hermes_tools.CONFLICT
    s = rt.mcp_status()["v"]
    assert s["state"] == "ready" and s["transport"] == "stdio" and s["tools"] == ["mcp__v__offered"], s
    assert "2025-11-25" in rt.dispatch("mcp__v__offered", {})
    rt.remove_mcp_server("v")
    assert "v" not in rt.mcp_status()
    assert not any(d["function"]["name"] == "mcp__v__offered" for d in rt.definitions())
    rt.add_mcp_server("broken", {"command": "ht-no-such-command-xyz", "connect_timeout": 5})
    b = rt.mcp_status()["broken"]
    assert b["state"] == "failed" and b["last_error"], b


def test_oauth_handler_set_replace_clear(rt):
    rt.set_oauth_handler(lambda req: {"error": "no browser here"})
    rt.set_oauth_handler(lambda req: {"error": "no browser here"})
    for _ in range(200):
        if hermes_tools._runtime._handles.count(rt) == 1:
            break
        time.sleep(0.005)
    assert hermes_tools._runtime._handles.count(rt) == 1
    rt.set_oauth_handler(None)
    for _ in range(200):
        if hermes_tools._runtime._handles.count(rt) == 0:
            break
        time.sleep(0.005)
    assert hermes_tools._runtime._handles.count(rt) == 0
    with pytest.raises(TypeError):
        rt.set_oauth_handler(42)


@pytest.fixture
def oauth_server():
    if not os.path.isdir(os.path.join(MODULES, "@modelcontextprotocol", "sdk")) or not shutil.which("node"):
        pytest.skip(f"OAuth fixture needs node and {MODULES}/@modelcontextprotocol/sdk (scripts/setup.sh)")
    p = subprocess.Popen(["node", os.path.join(FIXTURES, "oauth-server.cjs")], stdout=subprocess.PIPE,
                         env={**os.environ, "NODE_PATH": MODULES}, text=True)
    try:
        line = p.stdout.readline().strip()
        assert line.startswith("READY "), line
        yield f"http://127.0.0.1:{line.split()[1]}/mcp"
    finally:
        p.kill()
        p.wait()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def browse(url):
    """The "browser": the fixture's authorization server approves at once."""
    try:
        urllib.request.build_opener(_NoRedirect).open(url)
    except urllib.error.HTTPError as e:
        assert e.code == 302, e.code
        return e.headers["Location"]
    raise AssertionError("no redirect")


def wait_ready(r):
    for _ in range(300):
        s = r.mcp_status()["secure"]
        if s["state"] == "ready" and s["tools"]:
            return
        time.sleep(0.1)
    raise AssertionError(r.mcp_status())


def test_oauth_sign_in_round_trip(oauth_server):
    cfg = {"url": oauth_server, "connect_timeout": 20, "timeout": 20, "oauth": {"token_store": "memory"}}
    with Runtime() as bare:
        bare.add_mcp_server("secure", cfg)
        s = bare.mcp_status()["secure"]
        assert s["state"] == "failed" and "no OAuth handler" in s["last_error"], s

    asked = []

    def handler(req):
        asked.append(req)
        assert req["kind"] == "oauth_authorize" and req["server"] == "secure"
        return browse(req["authorization_url"])  # a string: the redirect URL

    with Runtime() as r:
        r.set_oauth_handler(handler)
        r.add_mcp_server("secure", cfg)
        wait_ready(r)
        assert "scopes: mcp" in r.dispatch("mcp__secure__whoami", {})
        assert len(asked) == 1 and "code_challenge_method=S256" in asked[0]["authorization_url"]

    def refuse(req):
        raise RuntimeError("the browser was closed")

    with Runtime() as r:
        r.set_oauth_handler(refuse)
        r.add_mcp_server("secure", cfg)
        s = r.mcp_status()["secure"]
        assert s["state"] == "failed" and "RuntimeError" in s["last_error"], s
