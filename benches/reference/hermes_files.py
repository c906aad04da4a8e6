"""Reference point for crates/runtime/benches/files.rs: the original
(hermes-agent==0.19.0) file tool handlers on the same files.

Set up once:  python3 -m venv build/href && build/href/bin/pip install hermes-agent==0.19.0
Run (the Rust bench does it when HT_ORIGINAL_PYTHON is set):
    build/href/bin/python benches/reference/hermes_files.py ROOT N
ROOT holds big.txt (10 MB), mid.rs (1 MB) and tree/ (10 000 files), as
built by the Rust bench. Prints one line per tool and a JSON line.
"""
import json
import logging
import os
import statistics
import sys
import tempfile
import time

logging.disable(logging.CRITICAL)
root, n = sys.argv[1], int(sys.argv[2])
os.environ["TERMINAL_ENV"] = "local"
os.environ["TERMINAL_CWD"] = root
os.environ.setdefault("HERMES_HOME", tempfile.mkdtemp(prefix="href-home-"))

import model_tools  # noqa: E402,F401  (loads the registry)
from tools.registry import registry  # noqa: E402


def median_ms(fn):
    for i in range(2):
        fn(-1 - i)
    samples = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - t) * 1000)
    return statistics.median(samples)


def call(name, args, task):
    out = registry.dispatch(name, args, task_id=task)
    return json.loads(out.split("\n\n[Hint")[0]) if isinstance(out, str) else out


big = os.path.join(root, "big.txt")
mid = os.path.join(root, "mid.rs")
tree = os.path.join(root, "tree")
content = "lorem ipsum dolor sit amet\n" * 4000


def read(i):
    v = call("read_file", {"path": big, "offset": 199501, "limit": 500}, f"r{i}")
    assert "199501|" in v.get("content", ""), str(v)[:300]


def write(i):
    v = call("write_file", {"path": os.path.join(root, f"orig{i % 4}.txt"), "content": content}, "w")
    assert "bytes_written" in v, str(v)[:300]


flip = [False]


def patch(i):
    a, b = ("MARKER_B", "MARKER_A") if flip[0] else ("MARKER_A", "MARKER_B")
    flip[0] = not flip[0]
    v = call("patch", {"mode": "replace", "path": mid, "old_string": f"let marker = {a};",
                       "new_string": f"let marker = {b};"}, "p")
    assert v.get("success"), str(v)[:300]


def search(i):
    v = call("search_files", {"pattern": r"needle_call\(\d+\)", "path": tree}, f"s{i}")
    assert v.get("total_count", 0) > 0, str(v)[:300]


def rare(i):
    v = call("search_files", {"pattern": r"handler_99_90\(", "path": tree}, f"q{i}")
    assert v.get("total_count", 0) == 1, str(v)[:300]


res = {}
for name, fn in [("read_file", read), ("write_file", write), ("patch", patch), ("search_files", search),
                 ("search_files_rare", rare)]:
    res[name] = median_ms(fn)
    print(f"  original {name:14} {res[name]:9.2f} ms")
print("JSON " + json.dumps(res))
