"""The original's execute_code (hermes-agent==0.19.0, local backend: its
Unix-socket RPC path) on the same work as crates/runtime/benches/code_execution.rs.

Set up once:  python3 -m venv build/href && build/href/bin/pip install hermes-agent==0.19.0
Run:          build/href/bin/python benches/reference/hermes_code.py ROOT RUNS
  ROOT: a folder with a.txt (100 lines) and f00.txt..f19.txt (the bench writes them)
Prints lines for a person and one `JSON {...}` line for the bench.
"""
import json
import logging
import os
import statistics
import sys
import time

logging.disable(logging.CRITICAL)
root, runs = sys.argv[1], int(sys.argv[2])
os.environ["TERMINAL_CWD"] = root
os.chdir(root)

import model_tools  # noqa: E402,F401  (the registry and its tools)
from tools.code_execution_tool import execute_code  # noqa: E402

TOOLS = ["read_file", "write_file", "search_files", "patch", "terminal"]


RUN = [0]


def run(code):
    # A task per run: the read guards (an unchanged re-read answers a stub)
    # count per task, in the original as in ours.
    RUN[0] += 1
    t = time.perf_counter()
    out = json.loads(execute_code(code, task_id=f"bench{RUN[0]}", enabled_tools=TOOLS))
    return time.perf_counter() - t, out


# Startup: a run that does nothing.
starts = []
for _ in range(runs):
    d, out = run("pass")
    assert out["status"] == "success", out
    starts.append(d)

# One read_file round trip from its stub, timed inside the script (its
# limit is 50 calls per run: 40 per run, another line each time).
rtt = []
for r in range(max(3, runs // 3)):
    code = f"""
import time
from hermes_tools import read_file
ts = []
for i in range(40):
    t = time.perf_counter()
    x = read_file("a.txt", offset=1 + i, limit=1)
    ts.append(time.perf_counter() - t)
    assert "content" in x, x
print(" ".join(str(t) for t in ts))
"""
    _, out = run(code)
    assert out["status"] == "success", out
    rtt += [float(x) for x in out["output"].split()]

# The script: read 20 files, grep them, patch one.
SCRIPT = """
import json
from hermes_tools import read_file, search_files, patch
lines = 0
for i in range(20):
    r = read_file(f"f{i:02d}.txt")
    lines += r["total_lines"]
hits = search_files("needle", path=".", file_glob="*.txt")
path = hits["matches"][0]["path"]
p = patch(path, "needle = 1", "needle = 2")
print(json.dumps({"lines": lines, "patched": not p.get("error")}))
"""
script = []
for _ in range(runs):
    with open(os.path.join(root, "f13.txt"), "w") as f:
        f.write("alpha\nneedle = 1\nomega\n")
    d, out = run(SCRIPT)
    assert out["status"] == "success" and '"patched": true' in out["output"], out
    script.append(d)

res = {
    "startup_ms": statistics.median(starts) * 1e3,
    "read_us": statistics.median(rtt) * 1e6,
    "script_ms": statistics.median(script) * 1e3,
}
print(f"  original execute_code: startup {res['startup_ms']:.1f} ms, read_file round trip "
      f"{res['read_us']:.1f} us, 20-file script {res['script_ms']:.1f} ms")
print("JSON " + json.dumps(res))
