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
        "terminal": {"cwd": WORK},
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
