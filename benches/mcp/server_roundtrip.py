"""tools/call round trip through `hermes-tools mcp serve` against a minimal
server written with the Python SDK itself, both driven by the same Python
client over stdio, back to back in one run.

    build/venv/bin/python benches/mcp/server_roundtrip.py [CALLS] [HERMES_TOOLS_BINARY]

Ours calls the built-in `todo` tool with no arguments (reads the task's
list); the reference server's tool returns a fixed text. Prints the median
and p90 per call in microseconds and the ratio.
"""

import json
import os
import statistics
import sys
import tempfile
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 500
BIN = sys.argv[2] if len(sys.argv) > 2 else "target/release/hermes-tools"

REFERENCE = '''
from mcp.server.mcpserver import MCPServer
app = MCPServer("reference")

@app.tool()
def todo() -> str:
    """Return the task list."""
    return '{"todos": [], "summary": {"total": 0}}'

app.run()
'''


async def measure(params):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            for _ in range(50):
                await s.call_tool("todo", {})
            times = []
            for _ in range(CALLS):
                t = time.perf_counter()
                r = await s.call_tool("todo", {})
                times.append(time.perf_counter() - t)
                assert not r.is_error
            return times


def summary(name, times):
    times = sorted(times)
    med = statistics.median(times) * 1e6
    p90 = times[int(len(times) * 0.9)] * 1e6
    print(f"{name:<34} median {med:8.0f} us   p90 {p90:8.0f} us")
    return med


def main():
    work = tempfile.mkdtemp()
    cfg = os.path.join(work, "config.json")
    with open(cfg, "w") as f:
        json.dump({"builtin_toolsets": ["todo"]}, f)
    ref = os.path.join(work, "reference.py")
    with open(ref, "w") as f:
        f.write(REFERENCE)
    ours = anyio.run(measure, StdioServerParameters(command=BIN, args=["mcp", "serve", "--config", cfg]))
    theirs = anyio.run(measure, StdioServerParameters(command=sys.executable, args=[ref]))
    a = summary("hermes-tools mcp serve (todo)", ours)
    b = summary("Python SDK MCPServer (same tool)", theirs)
    print(f"ours / reference = {a / b:.2f}x over {CALLS} calls each")


if __name__ == "__main__":
    main()
