"""Reference point for benches/core.rs: the original Python runtime
(hermes-agent==0.19.0) doing the same work on the same machine.

Set up once:  python3 -m venv build/href && build/href/bin/pip install hermes-agent==0.19.0
Run:          build/href/bin/python benches/reference/hermes_original.py
(`make bench` does both.)
"""
import logging
import statistics
import time

logging.disable(logging.CRITICAL)

import model_tools  # noqa: E402  (imports the registry and discovers built-in tools)
from tools.registry import registry  # noqa: E402


def median_us(fn, rounds=200, per=200):
    for _ in range(per):
        fn()
    samples = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(per):
            fn()
        samples.append((time.perf_counter() - t) / per * 1e6)
    return statistics.median(samples)


SCHEMA = {
    "name": "trivial",
    "description": "Trivial tool",
    "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}},
}
registry.register("trivial", "bench", SCHEMA, lambda args, **kw: '{"ok": true}')
d = median_us(lambda: model_tools.handle_function_call("trivial", {"x": 1}))
print(f"original handle_function_call trivial tool: median {d:.1f} us/call")


def spec(i):
    return {
        "name": f"tool_{i:04d}",
        "description": f"Benchmark tool number {i}: does a small, well-described thing.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to use"},
                "limit": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
        },
    }


checks = [lambda: True for _ in range(50)]
names = set()
for i in range(1000):
    name = f"tool_{i:04d}"
    names.add(name)
    registry.register(name, f"set_{i % 20}", spec(i), lambda args, **kw: "{}",
                      check_fn=checks[i % 50] if i % 2 == 0 else None)
registry.get_definitions(names, quiet=True)
k = 0
samples = []
for _ in range(200):
    k += 1
    i = k % 1000
    registry.register(f"tool_{i:04d}", f"set_{i % 20}", spec(i), lambda args, **kw: "{}",
                      check_fn=checks[i % 50] if i % 2 == 0 else None)
    t = time.perf_counter()
    registry.get_definitions(names, quiet=True)
    samples.append((time.perf_counter() - t) * 1e6)
print(f"original registry.get_definitions 1000 tools (500 checked) after a change: median {statistics.median(samples):.1f} us")

# Scale: registering 10 000 tools one by one, and get_definitions right after
# one tool changes at 1 000 and 10 000 tools (the same shapes as benches/core.rs).
for n in (1000, 10000):
    reg = type(registry)()
    t = time.perf_counter()
    for i in range(n):
        reg.register(f"tool_{i:04d}", f"set_{i % 20}", spec(i), lambda args, **kw: "{}",
                     check_fn=checks[i % 50] if i % 2 == 0 else None)
    reg_ms = (time.perf_counter() - t) * 1e3
    all_names = {f"tool_{i:04d}" for i in range(n)}
    reg.get_definitions(all_names, quiet=True)
    samples = []
    for k in range(1, 61):
        i = k % n
        reg.register(f"tool_{i:04d}", f"set_{i % 20}", spec(i), lambda args, **kw: "{}",
                     check_fn=checks[i % 50] if i % 2 == 0 else None)
        t = time.perf_counter()
        reg.get_definitions(all_names, quiet=True)
        samples.append((time.perf_counter() - t) * 1e6)
    print(f"original register {n} tools one by one: {reg_ms:.1f} ms; "
          f"get_definitions after one change: median {statistics.median(samples):.1f} us")

# The original's command analysis over the same case file as benches/approval.rs.
import json  # noqa: E402
import os  # noqa: E402

from tools.approval import detect_dangerous_command  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
cases = os.path.join(here, "..", "..", "crates", "approval", "tests", "data", "command_cases.jsonl")
commands = [json.loads(line)["command"] for line in open(cases)]
per = []
for c in commands:
    t = time.perf_counter()
    for _ in range(5):
        detect_dangerous_command(c)
    per.append((time.perf_counter() - t) / 5 * 1e6)
print(f"original detect_dangerous_command over {len(commands)} case-file commands: median {statistics.median(per):.1f} us")

# The original's foreground terminal tool, `echo hi`, as benches/terminal.rs.
samples = []
model_tools.handle_function_call("terminal", {"command": "echo hi"}, task_id="bench")
for _ in range(30):
    t = time.perf_counter()
    model_tools.handle_function_call("terminal", {"command": "echo hi"}, task_id="bench")
    samples.append((time.perf_counter() - t) * 1e3)
print(f"original terminal echo hi via handle_function_call: median {statistics.median(samples):.2f} ms")
