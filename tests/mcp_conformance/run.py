"""Run the official MCP conformance suite's server scenarios against
hermes-tools served through the C ABI (fixture_host.py) and fail on any
applicable scenario that fails (`make test-mcp-conformance`).

Usage: run.py NODE CONFORMANCE_JS [OUT_DIR]
  NODE            a Node >= 22 binary (scripts/setup.sh installs one into
                  build/tools/node22)
  CONFORMANCE_JS  the suite's dist/index.js
  OUT_DIR         where the suite writes each scenario's checks.json

Every server scenario runs (`--suite all`); not_applicable.yml lists those
that do not apply and why, and the suite itself fails the run when one of
them passes or any other scenario fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    node, suite = sys.argv[1], sys.argv[2]
    out_dir = sys.argv[3] if len(sys.argv) > 3 else None
    host = subprocess.Popen(
        [sys.executable, str(HERE / "fixture_host.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = host.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            print(f"mcp conformance: the fixture host did not start (said {url!r})", file=sys.stderr)
            return 1
        cmd = [node, suite, "server", "--url", url, "--suite", "all",
               "--expected-failures", str(HERE / "not_applicable.yml")]
        if out_dir:
            cmd += ["-o", out_dir]
        started = time.monotonic()
        # A hang guard, not a timing assertion (the suite takes seconds).
        r = subprocess.run(cmd, timeout=300, env={**os.environ, "NO_COLOR": "1"},
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        not_applicable = {
            line.strip()[2:] for line in (HERE / "not_applicable.yml").read_text().splitlines()
            if line.strip().startswith("- ")
        }
        passed, failed = [], []
        for line in r.stdout.splitlines():
            # The suite's own total counts the checks of the scenarios that
            # do not apply as failures: said here as what it is.
            if line.startswith("Total: "):
                line = "Total checks, the scenarios that do not apply included: " + line[7:]
            print(line)
            mark, _, rest = line.partition(" ")
            name = rest.split(":")[0]
            if mark in ("✓", "✗") and name not in not_applicable:
                (passed if mark == "✓" else failed).append(name)
        took = time.monotonic() - started
        print(f"mcp conformance: {len(passed)} applicable scenarios passed, {len(failed)} failed"
              f" ({', '.join(failed) or 'none'}), {len(not_applicable)} do not apply; suite exit"
              f" {r.returncode} in {took:.1f} s")
        print(f"conformance: {len(passed)} passed, {len(failed)} failed")
        if r.returncode == 0 and (failed or not passed):
            return 1
        return r.returncode
    finally:
        if host.stdin:
            host.stdin.close()
        try:
            host.wait(timeout=15)
        except subprocess.TimeoutExpired:
            host.kill()
            host.wait()


if __name__ == "__main__":
    sys.exit(main())
