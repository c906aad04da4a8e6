"""`hermes-tools mcp serve` driven by the official Python MCP SDK (PyPI `mcp`).

Run by crates/cli/tests/mcp_python.rs with HT_BIN (the built binary) and
HT_WORK (a scratch folder). Each test starts its own server over stdio.
"""

import os
import json
import subprocess
import time

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

BIN = os.environ["HT_BIN"]
WORK = os.environ["HT_WORK"]


def config(name, **extra):
    path = os.path.join(WORK, f"{name}.json")
    cfg = {
        "builtin_toolsets": ["terminal", "todo"],
        "terminal": {"backend": "local", "cwd": WORK},
    }
    cfg.update(extra)
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


def server(cfg):
    return StdioServerParameters(command=BIN, args=["mcp", "serve", "--config", cfg])


async def session_run(cfg, body, elicitation=None):
    async with stdio_client(server(cfg)) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicitation) as s:
            await s.initialize()
            return await body(s)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def run(coro):
    return anyio.run(coro)


def test_lists_tools_with_annotations_and_calls_builtins():
    cfg = config("basic")

    async def body(s):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert {"terminal", "process", "todo"} <= set(tools), tools.keys()
        assert tools["terminal"].annotations.destructive_hint is True
        assert tools["terminal"].input_schema["properties"]["command"]["type"] == "string"
        r = await s.call_tool("terminal", {"command": "echo hi from mcp"})
        assert not r.is_error, text_of(r)
        assert r.structured_content["output"] == "hi from mcp"
        r = await s.call_tool(
            "todo", {"todos": [{"id": "1", "content": "write tests", "status": "in_progress"}]}
        )
        assert not r.is_error, text_of(r)
        assert "write tests" in text_of(r)
        # Bad arguments come back as an error result the model can read.
        r = await s.call_tool("terminal", {"command": 5, "timeout": "soon"})
        assert r.is_error
        assert "Invalid arguments" in text_of(r)

    run(lambda: session_run(cfg, body))


def victim(name):
    path = os.path.join(WORK, name)
    os.makedirs(path, exist_ok=True)
    return path


def test_approval_through_elicitation_accept_and_decline():
    cfg = config("approve")
    asked = []

    def answer(approve):
        async def elicit(context, params):
            asked.append(params.message)
            if approve:
                return types.ElicitResult(action="accept", content={"approve": True})
            return types.ElicitResult(action="decline")

        return elicit

    yes = victim("victim-yes")

    async def run_yes(s):
        return await s.call_tool("terminal", {"command": f"rm -rf {yes}"})

    r = run(lambda: session_run(cfg, run_yes, answer(True)))
    assert not r.is_error, text_of(r)
    assert not os.path.exists(yes)
    assert asked and "rm -rf" in asked[-1]

    no = victim("victim-no")

    async def run_no(s):
        return await s.call_tool("terminal", {"command": f"rm -rf {no}"})

    r = run(lambda: session_run(cfg, run_no, answer(False)))
    assert r.is_error, text_of(r)
    assert os.path.exists(no), "ran though the client declined"


def test_elicitation_accept_with_empty_content_approves_and_approve_false_denies():
    """The form's `approve` defaults to true: accept with {} approves (a
    client showing only accept/decline), accept with approve=false denies."""
    cfg = config("approve-default")
    seen = []

    def answer(content):
        async def elicit(context, params):
            seen.append(params.requested_schema)
            return types.ElicitResult(action="accept", content=content)

        return elicit

    empty = victim("victim-empty-accept")

    async def rm_empty(s):
        return await s.call_tool("terminal", {"command": f"rm -rf {empty}"})

    r = run(lambda: session_run(cfg, rm_empty, answer({})))
    assert not r.is_error, text_of(r)
    assert not os.path.exists(empty)
    assert seen[-1]["properties"]["approve"]["default"] is True, seen[-1]

    kept = victim("victim-approve-false")

    async def rm_kept(s):
        return await s.call_tool("terminal", {"command": f"rm -rf {kept}"})

    r = run(lambda: session_run(cfg, rm_kept, answer({"approve": False})))
    assert r.is_error, text_of(r)
    assert os.path.exists(kept), "ran though approve was false"


def test_unknown_tool_is_a_json_rpc_error_and_logging_set_level_works():
    cfg = config("conformance")

    async def body(s):
        await s.set_logging_level("debug")
        try:
            await s.call_tool("no_such_tool", {})
        except Exception as e:  # MCPError
            return str(e)
        raise AssertionError("an unknown tool answered a result")

    msg = run(lambda: session_run(cfg, body))
    assert "no_such_tool" in msg, msg


def test_config_from_the_environment_and_the_equals_form():
    """What the MCP Inspector's CLI can start: `--config=FILE`, or no
    --config and HERMES_TOOLS_CONFIG naming the file."""
    cfg = config("from-env")
    for args, env in [
        (["mcp", "serve"], {"HERMES_TOOLS_CONFIG": cfg}),
        (["mcp", "serve", f"--config={cfg}"], {}),
    ]:
        params = StdioServerParameters(command=BIN, args=args, env={**os.environ, **env})

        async def body():
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    return {t.name for t in (await s.list_tools()).tools}

        names = run(body)
        assert {"terminal", "todo"} <= names, (args, names)


def test_a_client_without_elicitation_is_blocked():
    cfg = config("noelicit")
    keep = victim("victim-kept")

    async def body(s):
        return await s.call_tool("terminal", {"command": f"rm -rf {keep}"})

    r = run(lambda: session_run(cfg, body))
    assert r.is_error, text_of(r)
    assert os.path.exists(keep), "ran without approval"
    assert "approv" in text_of(r).lower() or "blocked" in text_of(r).lower()


def sleepers(marker):
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return [p for p in out.stdout.split() if p]


def test_cancellation_ends_the_command():
    cfg = config("cancel")
    marker = f"30.{os.getpid()}"

    async def body(s):
        with anyio.move_on_after(1.5):
            await s.call_tool("terminal", {"command": f"sleep {marker}"})
        # The cancelled notification reached the server: the command ends.
        for _ in range(50):
            if not sleepers(marker):
                return True
            await anyio.sleep(0.1)
        return False

    started = time.monotonic()
    assert run(lambda: session_run(cfg, body)), "sleep still running after cancel"
    assert time.monotonic() - started < 20


def test_progress_notifications_for_a_long_call():
    cfg = config("progress")

    async def body(s):
        seen = []

        async def on_progress(progress, total, message):
            seen.append((progress, message))

        r = await s.call_tool(
            "terminal", {"command": "sleep 3.5; echo finished"}, progress_callback=on_progress
        )
        assert not r.is_error, text_of(r)
        return seen

    seen = run(lambda: session_run(cfg, body))
    assert len(seen) >= 2, seen
    assert [p for p, _ in seen] == sorted(p for p, _ in seen), "progress must rise"
    assert "running for" in seen[0][1]


def test_background_process_output_is_a_resource_that_can_be_followed():
    cfg = config("follow")

    async def body(s):
        updates = []

        async def on_message(m):
            root = getattr(m, "root", m)
            if getattr(root, "method", "") == "notifications/resources/updated":
                updates.append(str(root.params.uri))

        s._message_handler = on_message
        r = await s.call_tool(
            "terminal",
            {"command": "for i in 1 2 3; do echo tick$i; sleep 0.4; done", "background": True},
        )
        assert not r.is_error, text_of(r)
        pid = r.structured_content["session_id"]
        uris = [str(x.uri) for x in (await s.list_resources()).resources]
        uri = f"process://{pid}"
        assert uri in uris, uris
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await s.subscribe_resource(uri)
        for _ in range(60):
            state = json.loads((await s.read_resource(uri)).contents[0].text)
            if state["status"] == "exited":
                break
            await anyio.sleep(0.1)
        await anyio.sleep(0.5)
        assert state["output"].split() == ["tick1", "tick2", "tick3"], state
        assert state["exit_code"] == 0
        assert uri in updates, updates
        # An unknown process is a clear error, not an empty answer.
        try:
            await s.read_resource("process://proc_nope")
        except Exception as e:  # McpError
            assert "process://" in str(e)
        else:
            raise AssertionError("reading an unknown process succeeded")

    run(lambda: session_run(cfg, body))


def start_http(*extra, cfg=None):
    """`mcp serve --http`: the process, the URL and the stderr lines after it."""
    cfg = cfg or config("http")
    proc = subprocess.Popen(
        [BIN, "mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0", *extra],
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stderr.readline()
    assert "listening on http://" in line, line
    return proc, line.strip().split()[-1], proc.stderr.readline()


def authed(token):
    from mcp.shared._httpx_utils import create_mcp_http_client

    return create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})


def token_of(line):
    """The token from the file the server named on stderr (0600)."""
    assert "bearer token in " in line, line
    path = line.split("bearer token in ", 1)[1].split(" (")[0]
    assert os.stat(path).st_mode & 0o777 == 0o600, oct(os.stat(path).st_mode)
    assert os.stat(os.path.dirname(path)).st_mode & 0o777 == 0o700
    with open(path) as f:
        return path, f.read().strip()


def test_streamable_http_refuses_clients_without_the_token():
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    proc, url, line = start_http()
    try:
        path, token = token_of(line)

        async def client(token):
            hc = authed(token)
            async with hc, streamable_http_client(url, http_client=hc) as (r, w, *_):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    return {t.name for t in (await s.list_tools()).tools}

        assert "todo" in run(lambda: client(token))
        for bad in [None, "0" * len(token)]:
            headers = {"Accept": "application/json, text/event-stream"}
            if bad:
                headers["Authorization"] = f"Bearer {bad}"
            r = httpx2.post(url, headers=headers,
                            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert r.status_code == 401, (bad, r.status_code, r.text)
            assert "resource_metadata=" in r.headers["www-authenticate"]
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    assert not os.path.exists(path), "the token file outlived the server"


def test_streamable_http_with_a_token_file_and_with_no_auth():
    from mcp.client.streamable_http import streamable_http_client

    tf = os.path.join(WORK, "host.token")
    with open(tf, "w") as f:
        f.write("host-chosen-token-0123456789\n")
    proc, url, line = start_http("--token-file", tf)
    try:
        assert "bearer token from the host" in line, line

        async def client():
            hc = authed("host-chosen-token-0123456789")
            async with hc, streamable_http_client(url, http_client=hc) as (r, w, *_):
                async with ClientSession(r, w) as s:
                    await s.initialize()

        run(client)
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    proc, url, line = start_http("--no-auth")
    try:
        assert "AUTHENTICATION IS OFF" in line, line
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_streamable_http_serves_sessions_with_their_own_task():
    from mcp.client.streamable_http import streamable_http_client

    proc, url, line = start_http()
    try:
        _, token = token_of(line)

        async def client(cd):
            hc = authed(token)
            async with hc, streamable_http_client(url, http_client=hc) as (r, w, *_):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    names = {t.name for t in (await s.list_tools()).tools}
                    assert {"terminal", "todo"} <= names, names
                    await s.call_tool("terminal", {"command": f"cd {cd}"})
                    r = await s.call_tool("terminal", {"command": "pwd"})
                    return r.structured_content["output"]

        a = victim("http-a")
        b = victim("http-b")

        async def both():
            out = {}

            async def one(d):
                out[d] = await client(d)

            async with anyio.create_task_group() as tg:
                tg.start_soon(one, a)
                tg.start_soon(one, b)
            return out

        out = run(both)
        # Each session keeps its own working directory.
        assert out == {a: a, b: b}, out
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
