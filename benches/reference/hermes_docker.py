#!/usr/bin/env python3
"""The original's docker terminal backend model (hermes-agent 0.19.0,
tools/environments/docker.py + base.py, as described in
shared/reference/hermes-builtins.md section 6), reproduced to time it
against the same engine and image as hermes-tools' container backend.

What it does, like the original:
  * `docker run -d --init --name hermes-<id> --label hermes-agent=1
    --cap-drop ALL --cap-add CHOWN,DAC_OVERRIDE,FOWNER,SETGID,SETUID
    --security-opt no-new-privileges --pids-limit 256 --cpus 1
    --memory 5g --network=none <image> sleep infinity` once;
  * a session snapshot made once by a `bash -l -c` bootstrap (export -p,
    functions, aliases, shopt/set lines) into /tmp/hermes-snap-<id>.sh
    inside the container;
  * per call, spawn-per-call `docker exec -i <id> bash -c '<wrapped>'`:
    source the snapshot, `builtin cd -- <cwd>`, eval the command,
    re-export `export -p` into the snapshot (tmp + mv), print the cwd
    between markers, parsed out of stdout to update cwd.

Usage: hermes_docker.py --client PATH [--host ADDR] --image IMAGE
       [--run-arg ARG ...] [-n 50] [--command 'echo hi'] [--gap-ms 300]
Prints one JSON line: {"n":..,"median_ms":..,"mean_ms":..,"ok":true}.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import time
import uuid


class DockerEnvironment:
    def __init__(self, client, image, run_args, init=True, cwd="/root"):
        self.client = client
        self.id = uuid.uuid4().hex[:12]
        self.cwd = cwd
        self.snap = f"/tmp/hermes-snap-{self.id}.sh"
        self.marker = f"__HERMES_CWD_{self.id}__"
        run = self.client + [
            "run", "-d", *(["--init"] if init else []), "--name", f"hermes-{self.id}",
            "--label", "hermes-agent=1", "-w", cwd,
            "--cap-drop", "ALL",
            "--cap-add", "CHOWN", "--cap-add", "DAC_OVERRIDE", "--cap-add", "FOWNER",
            "--cap-add", "SETGID", "--cap-add", "SETUID",
            "--security-opt", "no-new-privileges",
            "--pids-limit", "256", "--cpus", "1", "--memory", "5g",
            "--network=none", *run_args, image, "sleep", "infinity",
        ]
        out = subprocess.run(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.decode(errors="replace"))
        self.container = out.stdout.decode().strip()
        self._snapshot()

    def _run(self, script, login=False):
        cmd = self.client + ["exec", "-i", self.container, "bash"]
        cmd += (["-l"] if login else []) + ["-c", script]
        return subprocess.run(cmd, input=b"", stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def _snapshot(self):
        tmp = f"{self.snap}.tmp.$BASHPID"
        script = (
            "umask 077; {"
            " export -p;"
            " declare -f | grep -vE '^_[^_]' ;"
            " alias -p;"
            " echo 'shopt -s expand_aliases'; echo 'set +e'; echo 'set +u';"
            f" }} > {tmp} 2>/dev/null && mv -f {tmp} {self.snap}"
        )
        r = self._run(script, login=True)
        if r.returncode != 0:
            raise RuntimeError(r.stdout.decode(errors="replace"))

    def execute(self, command):
        wrapped = (
            f"source {self.snap} >/dev/null 2>&1 || true\n"
            f"builtin cd -- {self.cwd} || exit 126\n"
            f"eval {shlex.quote(command)}\n"
            "__hermes_ec=$?\n"
            "umask 077\n"
            f"{{ export -p > {self.snap}.tmp && mv -f {self.snap}.tmp {self.snap}; }} 2>/dev/null\n"
            f"printf '\\n{self.marker}%s{self.marker}\\n' \"$(pwd -P)\"\n"
            "exit $__hermes_ec\n"
        )
        r = self._run(wrapped)
        out = r.stdout.decode(errors="replace")
        start = out.rfind(self.marker, 0, out.rfind(self.marker))
        if start != -1:
            end = out.rfind(self.marker)
            self.cwd = shlex.quote(out[start + len(self.marker):end])
            out = out[:start].rstrip("\n")
        return {"output": out, "returncode": r.returncode}

    def cleanup(self):
        subprocess.run(self.client + ["rm", "-f", self.container],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", required=True)
    ap.add_argument("--host")
    ap.add_argument("--image", required=True)
    ap.add_argument("--run-arg", action="append", default=[])
    ap.add_argument("--engine", default="docker")
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--command", default="echo hi")
    ap.add_argument("--gap-ms", type=float, default=0.0,
                    help="idle time before each timed call (a model's turn)")
    a = ap.parse_args()
    client = [a.client] + (["-H", a.host] if a.host else [])
    # podman's --init needs catatonit, a separate package.
    init = a.engine == "docker" or any(
        os.path.exists(p) for p in ("/usr/libexec/podman/catatonit", "/usr/bin/catatonit"))
    env = DockerEnvironment(client, a.image, a.run_arg, init)
    try:
        for _ in range(3):
            env.execute(a.command)
        times = []
        ok = True
        for _ in range(a.n):
            if a.gap_ms:
                time.sleep(a.gap_ms / 1000.0)
            t = time.perf_counter()
            r = env.execute(a.command)
            times.append((time.perf_counter() - t) * 1000.0)
            ok = ok and r["returncode"] == 0 and r["output"].strip().endswith("hi")
        print(json.dumps({"n": a.n, "median_ms": statistics.median(times),
                          "mean_ms": statistics.mean(times), "ok": ok}))
    finally:
        env.cleanup()


if __name__ == "__main__":
    main()
