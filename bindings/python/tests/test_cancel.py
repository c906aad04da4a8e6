"""Cancellation reaches Python handlers (issue 11): async handlers get
asyncio.CancelledError, sync ones ``call.cancel_event`` / ``call.cancelled`` /
``call.on_cancel``, when their call times out; a handler waiting on its
cancellation returns promptly."""

import asyncio
import json
import threading
import time

from hermes_tools import Runtime, ToolCall

SPEC = {
    "name": "waits",
    "toolset": "py",
    "schema": {"description": "waits for its cancellation", "parameters": {"type": "object"}},
}


def test_async_handler_is_cancelled_at_timeout():
    seen = {}
    done = threading.Event()

    async def handler(call: ToolCall):
        t0 = time.monotonic()
        try:
            await asyncio.sleep(20)
            return "slept"
        except asyncio.CancelledError:
            seen["cancelled_after"] = time.monotonic() - t0
            raise
        finally:
            done.set()

    # 0.5 s: the coroutine starts on the binding's loop thread well before
    # its timeout even on a loaded machine (one cancelled before its first
    # step never runs its body at all).
    with Runtime({"dispatch": {"timeout": 0.5}}) as rt:
        rt.register_tool(SPEC, handler)
        out = json.loads(rt.dispatch("waits", {}))
        assert out["status"] == "timeout"
        assert done.wait(10), "the async handler kept running after its timeout"
        assert seen["cancelled_after"] < 5.0


def test_sync_handler_sees_its_cancel_event():
    seen = {}
    done = threading.Event()

    def handler(call: ToolCall):
        call.defer()
        assert not call.cancelled
        fired = []
        call.on_cancel(lambda: fired.append(True))

        def work():
            t0 = time.monotonic()
            call.cancel_event.wait(20)
            seen["after"] = time.monotonic() - t0
            seen["cancelled"] = call.cancelled
            seen["fired"] = list(fired)
            seen["status"] = call.respond("too late")
            done.set()

        threading.Thread(target=work, daemon=True).start()

    with Runtime({"dispatch": {"timeout": 0.1}}) as rt:
        rt.register_tool(SPEC, handler)
        out = json.loads(rt.dispatch("waits", {}))
        assert out["status"] == "timeout"
        assert done.wait(5), "the handler's worker was not told"
        assert seen["after"] < 2.0
        assert seen["cancelled"] is True
        assert seen["fired"] == [True]
        assert seen["status"] == 8  # HT_STATUS_TIMEOUT: the late answer is dropped


def test_answered_call_is_not_cancelled():
    events = []

    def handler(call: ToolCall):
        events.append(call.cancel_event)
        return "ok"

    with Runtime() as rt:
        rt.register_tool({**SPEC, "name": "quick"}, handler)
        assert rt.dispatch("quick", {}) == "ok"
        time.sleep(0.05)
        assert not events[0].is_set()


def test_progress_reaches_the_event_handler():
    events = []
    got = threading.Event()

    def on_event(e):
        if e.get("type") == "tool.progress":
            events.append(e)
            got.set()

    def handler(call: ToolCall):
        assert call.progress(1, 4, "a quarter") == 0
        return "done"

    with Runtime() as rt:
        rt.set_event_handler(on_event)
        rt.register_tool({**SPEC, "name": "long"}, handler)
        assert rt.dispatch("long", {}, {"tool_call_id": "call_1"}) == "done"
        assert got.wait(5), "no tool.progress event"
        e = events[0]
        assert (e["tool_call_id"], e["progress"], e["total"], e["message"]) == ("call_1", 1.0, 4.0, "a quarter")
