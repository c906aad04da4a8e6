"""Issue 29: eight concurrent calls of a plain (``def``) handler that waits
300 ms, through dispatch_async, against the same eight calls in one batch
(goal: within 1.2x of the batch), and with ``concurrent=False`` (one at a
time, the old behaviour).

    HERMES_TOOLS_LIB=target/release/libhermes_tools.so build/venv/bin/python benches/python/sync_handlers.py
"""
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bindings", "python"))
from hermes_tools import Runtime  # noqa: E402

SPEC = {"name": "wait", "toolset": "t", "parallel_safe": True,
        "schema": {"name": "wait", "description": "Wait 300 ms.", "parameters": {"type": "object", "properties": {}}}}


def wait(call):
    time.sleep(0.3)
    return "done"


def main():
    async def run(concurrent):
        async with Runtime() as rt:
            rt.register_tool(SPEC, wait, concurrent=concurrent)
            t = time.perf_counter()
            await asyncio.gather(*[rt.dispatch_async("wait", {}) for _ in range(8)])
            return time.perf_counter() - t

    with Runtime() as rt:
        rt.register_tool(SPEC, wait)
        calls = [{"id": f"c{i}", "type": "function", "function": {"name": "wait", "arguments": "{}"}} for i in range(8)]
        t = time.perf_counter()
        rt.dispatch_batch(json.dumps(calls))
        batch = time.perf_counter() - t
    conc = asyncio.run(run(True))
    serial = asyncio.run(run(False))
    print(f"8 x 300 ms plain handler: batch {batch:.3f} s, dispatch_async {conc:.3f} s ({conc / batch:.2f}x the batch, goal <= 1.2x), concurrent=False {serial:.3f} s")


main()
