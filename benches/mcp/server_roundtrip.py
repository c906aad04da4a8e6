"""tools/call round trip through `hermes-tools mcp serve` against a minimal
server written with the Python SDK itself, both driven by the same Python
client over stdio, back to back in one run.

    build/venv/bin/python benches/mcp/server_roundtrip.py [CALLS] [HERMES_TOOLS_BINARY]
    build/venv/bin/python benches/mcp/server_roundtrip.py --http [CALLS] [BINARY] [BASELINE_BINARY]

Ours calls the built-in `todo` tool with no arguments (reads the task's
list); the reference server's tool returns a fixed text. Prints the median
and p90 per call in microseconds and the ratio.

With --http: `mcp serve --http` with its bearer token (read from the file
named on stderr) against BASELINE_BINARY's `mcp serve --http` (a build
from before authentication, which prints no token line) and against the
reference server over streamable HTTP, same client, back to back.
"""

import json
import os
import statistics
import sys
import tempfile
import time

import subprocess

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HTTP = "--http" in sys.argv
ARGS = [a for a in sys.argv[1:] if a != "--http"]
CALLS = int(ARGS[0]) if len(ARGS) > 0 else 500
BIN = ARGS[1] if len(ARGS) > 1 else "target/release/hermes-tools"
BASELINE = ARGS[2] if len(ARGS) > 2 else None

REFERENCE = '''
from mcp.server.mcpserver import MCPServer
app = MCPServer("reference")

@app.tool()
def todo() -> str:
    """Return the task list."""
    return '{"todos": [], "summary": {"total": 0}}'

app.run()
'''


async def calls(s):
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


async def measure(params):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            return await calls(s)


async def measure_http(url, token):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    hc = create_mcp_http_client(headers=headers)
    async with hc, streamable_http_client(url, http_client=hc) as (read, write, *_):
        async with ClientSession(read, write) as s:
            return await calls(s)


def serve_http(binary, cfg, authenticated):
    """Start `mcp serve --http`: the process, its URL and its token (None
    for a build without authentication, which prints no token line)."""
    proc = subprocess.Popen([binary, "mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0"],
                            stderr=subprocess.PIPE, text=True)
    url = proc.stderr.readline().strip().split()[-1]
    token = None
    if authenticated and "bearer token in " in (line := proc.stderr.readline()):
        with open(line.split("bearer token in ", 1)[1].split(" (")[0]) as f:
            token = f.read().strip()
    return proc, url, token


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main_http(work, cfg):
    results = []
    for name, binary, authenticated in [("hermes-tools --http, bearer token", BIN, True),
                                        ("baseline --http (no authentication)", BASELINE, False)]:
        if not binary:
            continue
        proc, url, token = serve_http(binary, cfg, authenticated)
        try:
            results.append((name, anyio.run(measure_http, url, token)))
        finally:
            proc.terminate()
            proc.wait()
    port = free_port()
    ref = os.path.join(work, "reference_http.py")
    with open(ref, "w") as f:
        f.write(REFERENCE.replace("app.run()", f'app.run(transport="streamable-http", host="127.0.0.1", port={port})'))
    proc = subprocess.Popen([sys.executable, ref], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                import socket

                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.1)
        results.append(("Python SDK MCPServer --http", anyio.run(measure_http, f"http://127.0.0.1:{port}/mcp", None)))
    except Exception as e:  # the reference's HTTP settings differ between SDK versions
        print(f"reference over HTTP not measured: {e}")
    finally:
        proc.terminate()
        proc.wait()
    meds = [(n, summary(n, t)) for n, t in results]
    for n, m in meds[1:]:
        print(f"ours / {n} = {meds[0][1] / m:.2f}x over {CALLS} calls each")


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
    if HTTP:
        return main_http(work, cfg)
    ours = anyio.run(measure, StdioServerParameters(command=BIN, args=["mcp", "serve", "--config", cfg]))
    theirs = anyio.run(measure, StdioServerParameters(command=sys.executable, args=[ref]))
    a = summary("hermes-tools mcp serve (todo)", ours)
    b = summary("Python SDK MCPServer (same tool)", theirs)
    print(f"ours / reference = {a / b:.2f}x over {CALLS} calls each")


if __name__ == "__main__":
    main()
