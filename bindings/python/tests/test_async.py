import asyncio
import gc
import json
import threading
import time
import weakref

import pytest

import hermes_tools
from hermes_tools import HermesToolsError, Runtime, ToolCall
from hermes_tools._runtime import _handles

from test_basics import ADD_SPEC, add_handler


def test_dispatch_async_on_loop():
    async def main():
        async with Runtime() as rt:
            rt.register_tool(ADD_SPEC, add_handler)
            main_thread = threading.get_ident()
            seen = []

            @rt.tool(toolset="aio")
            async def slow_echo(text: str) -> str:
                """Echo after a short sleep."""
                seen.append(threading.get_ident())
                await asyncio.sleep(0.01)
                return text.upper()

            futs = [rt.dispatch_async("add", {"x": i, "y": 1}) for i in range(50)]
            assert all(isinstance(f, asyncio.Future) and f.call_id > 0 for f in futs)
            results = await asyncio.gather(*futs)
            assert [json.loads(r)["sum"] for r in results] == [i + 1 for i in range(50)]
            assert await rt.dispatch_async("slow_echo", {"text": "hi"}) == "HI"
            # Coroutine handlers ran on this loop's thread.
            assert seen == [main_thread]

    asyncio.run(main())


def test_async_handler_from_sync_dispatch_uses_background_loop():
    with Runtime() as rt:

        @rt.tool(toolset="aio")
        async def double(n: int) -> int:
            """Double n."""
            await asyncio.sleep(0.001)
            return n * 2

        assert rt.dispatch("double", {"n": 21}) == "42"

        @rt.tool(toolset="aio")
        async def fail() -> str:
            """Always fails."""
            raise KeyError("nope")

        assert "nope" in json.loads(rt.dispatch("fail", {}))["error"]


def test_async_hook():
    async def main():
        async with Runtime() as rt:
            rt.register_tool(ADD_SPEC, add_handler)

            async def pre(ev):
                await asyncio.sleep(0.001)
                if ev["args"]["x"] == 666:
                    return {"action": "block", "message": "async no"}
                return {}

            rt.add_hook("pre_tool_call", pre)
            assert json.loads(await rt.dispatch_async("add", {"x": 666, "y": 0})) == {"error": "async no"}
            assert json.loads(await rt.dispatch_async("add", {"x": 1, "y": 0})) == {"sum": 1}

    asyncio.run(main())


def test_cancel_async_call():
    async def main():
        parked = []
        async with Runtime() as rt:
            rt.register_tool(
                {"name": "never", "toolset": "t", "schema": {"description": "x"}},
                lambda call: parked.append(call.defer()),
            )
            fut = rt.dispatch_async("never", {}, context={"timeout": 100})
            await asyncio.sleep(0.05)
            rt.cancel(fut.call_id)
            with pytest.raises(HermesToolsError) as ei:
                await fut
            assert ei.value.status == hermes_tools.CANCELLED
            assert "cancelled" in ei.value.result
            with pytest.raises(HermesToolsError) as ei:
                rt.cancel(fut.call_id)
            assert ei.value.status == hermes_tools.NOT_FOUND
            # Cancelling the asyncio future cancels the library call.
            fut2 = rt.dispatch_async("never", {}, context={"timeout": 100})
            await asyncio.sleep(0.05)
            fut2.cancel()
            # The library call goes once the binding has passed the cancel on.
            gone = False
            for _ in range(500):
                await asyncio.sleep(0.01)
                try:
                    rt.cancel(fut2.call_id)
                except HermesToolsError as e:
                    assert e.status == hermes_tools.NOT_FOUND
                    gone = True
                    break
            assert gone, "cancelling the future cancels the library call"
        for call in parked:
            call.respond("late")  # harmless after free

    asyncio.run(main())


def test_close_with_pending_calls_cancels_them():
    with Runtime() as rt:
        rt.register_tool(
            {"name": "never", "toolset": "t", "schema": {"description": "x"}},
            lambda call: call.defer(),
        )
        futs = [rt.dispatch_future("never", {}, context={"timeout": 100}) for _ in range(5)]
        time.sleep(0.05)
    for f in futs:
        assert f.done()
        with pytest.raises(HermesToolsError) as ei:
            f.result()
        assert ei.value.status == hermes_tools.CANCELLED
    assert _handles.count(rt) == 0


def test_dispatch_future_without_loop():
    with Runtime() as rt:
        rt.register_tool(ADD_SPEC, add_handler)
        f = rt.dispatch_future("add", {"x": 2, "y": 2})
        assert json.loads(f.result(timeout=5)) == {"sum": 4}
        assert f.call_id > 0


def test_dispatch_async_needs_loop():
    with Runtime() as rt:
        with pytest.raises(RuntimeError):
            rt.dispatch_async("add", {})


def test_dispatch_batch_async_with_coroutine_handlers():
    async def main():
        async with Runtime() as rt:

            @rt.tool(toolset="aio", parallel_safe=True)
            async def square(n: int) -> int:
                """Square n."""
                await asyncio.sleep(0.005)
                return n * n

            calls = [
                {"id": f"c{i}", "type": "function", "function": {"name": "square", "arguments": {"n": i}}}
                for i in range(5)
            ]
            out = await rt.dispatch_batch_async(calls)
            assert [r["content"] for r in out] == ["0", "1", "4", "9", "16"]

    asyncio.run(main())


def test_free_fn_runs_exactly_once_and_releases_handler():
    """Every registration's ht_free_fn runs exactly once; the handler object is released."""
    rt = Runtime()

    class Handler:
        def __call__(self, call):
            return "ok"

    h = Handler()
    ref = weakref.ref(h)
    rt.register_tool({"name": "a", "toolset": "t", "schema": {"description": "x"}}, h, check=lambda: True)
    hook = lambda ev: {}  # noqa: E731
    hook_ref = weakref.ref(hook) if False else None
    rt.add_hook("post_tool_call", hook)
    rt.set_event_handler(lambda ev: None)
    entries = [e for e in list(_handles._items.values()) if e.runtime is rt]
    assert len(entries) == 3
    del h, hook
    assert rt.dispatch("a", {}) == "ok"
    # Replacing a tool frees the old registration (on the callback thread).
    rt.register_tool({"name": "a", "toolset": "t", "schema": {"description": "x"}}, lambda c: "new")
    deadline = time.time() + 5
    while entries[0].free_count == 0 and time.time() < deadline:
        time.sleep(0.01)
    assert entries[0].free_count == 1
    gc.collect()
    assert ref() is None
    before = _handles.double_frees
    rt.close()
    assert [e.free_count for e in entries] == [1, 1, 1]
    assert _handles.count(rt) == 0
    assert _handles.double_frees == before
    del hook_ref


def test_failed_registration_never_frees_and_leaves_no_handle():
    with Runtime() as rt:
        n = len(_handles)
        with pytest.raises(HermesToolsError):
            rt.register_tool("{bad", lambda c: "x")
        with pytest.raises(HermesToolsError):
            rt.add_hook("nope", lambda e: {})
        assert len(_handles) == n


def test_deregister_releases_handler():
    with Runtime() as rt:
        rt.register_tool(ADD_SPEC, add_handler)
        entry = next(e for e in list(_handles._items.values()) if e.runtime is rt)
        rt.deregister_tool("add")
        deadline = time.time() + 5
        while entry.free_count == 0 and time.time() < deadline:
            time.sleep(0.01)
        assert entry.free_count == 1
        assert _handles.count(rt) == 0


def test_many_threads_dispatch_concurrently():
    with Runtime() as rt:
        rt.register_tool(ADD_SPEC, add_handler)
        errors = []

        def worker(k):
            try:
                for i in range(20):
                    assert json.loads(rt.dispatch("add", {"x": i, "y": k})) == {"sum": i + k}
            except BaseException as e:
                errors.append(e)

        ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors


def _overlap_probe():
    """A plain handler that waits and records how many of it ran at once."""
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def wait(call: ToolCall):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.3)
        with lock:
            state["now"] -= 1
        return "done"

    return state, wait


WAIT_SPEC = {
    "name": "wait",
    "toolset": "t",
    "schema": {"name": "wait", "description": "Wait.", "parameters": {"type": "object", "properties": {}}},
}


@pytest.mark.parametrize("concurrent", [True, False])
def test_plain_handlers_of_async_calls_overlap_unless_asked_not_to(concurrent):
    # Issue 29: eight dispatch_async calls of a 300 ms plain handler ran one
    # at a time on the library's callbacks thread (2.4 s; the batch: 0.3 s).
    state, wait = _overlap_probe()

    async def main():
        async with Runtime() as rt:
            rt.register_tool(WAIT_SPEC, wait, concurrent=concurrent)
            out = await asyncio.gather(*[rt.dispatch_async("wait", {}) for _ in range(8)])
            assert out == ["done"] * 8

    asyncio.run(main())
    if concurrent:
        assert state["max"] >= 4, state
    else:
        assert state["max"] == 1, state


def test_sync_dispatch_still_runs_the_handler_on_the_calling_thread():
    with Runtime() as rt:
        seen = []

        def where(call: ToolCall):
            seen.append(threading.get_ident())
            return "x"

        rt.register_tool(dict(WAIT_SPEC, name="where", schema=dict(WAIT_SPEC["schema"], name="where")), where)
        assert rt.dispatch("where", {}) == "x"
        assert seen == [threading.get_ident()]
