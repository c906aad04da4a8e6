#!/usr/bin/env python3
"""The original's ssh terminal backend model (hermes-agent 0.19.0,
tools/environments/ssh.py + base.py, as described in
shared/reference/hermes-builtins.md section 6), reproduced to time it
against the same sshd as hermes-tools' ssh backend.

What it does per call, like the original:
  * spawn-per-call: `ssh <opts> host bash -c '<wrapped>'` with stdin piped,
    options ControlMaster=auto, ControlPersist=300,
    ControlPath=/tmp/hermes-ssh/<sha256(user@host:port)[:16]>.sock,
    BatchMode=yes, StrictHostKeyChecking=accept-new, ConnectTimeout=10;
  * a session snapshot made once at start by a `bash -l -c` bootstrap
    (export -p, functions, aliases, shopt/set lines) into
    /tmp/hermes-snap-<id>.sh on the remote side;
  * every command wrapped: source the snapshot, `builtin cd -- <cwd>`,
    eval the command, re-export `export -p` into the snapshot (tmp + mv),
    print the cwd between markers; the marker is parsed out of stdout to
    update cwd.

Usage: hermes_ssh.py --port P --key K --known-hosts F [--user root]
       [--host 127.0.0.1] [-n 50] [--command 'echo hi']
Prints one JSON line: {"n":..,"median_ms":..,"mean_ms":..,"ok":true}.
"""

import argparse
import hashlib
import json
import os
import shlex
import statistics
import subprocess
import time
import uuid


class SSHEnvironment:
    def __init__(self, host, user, port, key, known_hosts, cwd="~"):
        self.host, self.user, self.port, self.key = host, user, port, key
        self.known_hosts = known_hosts
        self.id = uuid.uuid4().hex[:12]
        self.cwd = cwd
        sock_dir = "/tmp/hermes-ssh"
        os.makedirs(sock_dir, mode=0o700, exist_ok=True)
        digest = hashlib.sha256(f"{user}@{host}:{port}".encode()).hexdigest()[:16]
        self.control_path = os.path.join(sock_dir, f"{digest}.sock")
        self.snap = f"/tmp/hermes-snap-{self.id}.sh"
        self.marker = f"__HERMES_CWD_{self.id}__"
        self._snapshot()

    def _ssh_cmd(self):
        cmd = [
            "ssh",
            "-o", f"ControlPath={self.control_path}",
            "-o", "ControlMaster=auto",
            "-o", "ControlPersist=300",
            "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=accept-new",
            "-o", "ConnectTimeout=10",
            "-o", f"UserKnownHostsFile={self.known_hosts}",
            "-o", "LogLevel=ERROR",
            "-p", str(self.port),
            "-i", self.key,
            f"{self.user}@{self.host}",
        ]
        return cmd

    def _run(self, script, login=False):
        cmd = self._ssh_cmd() + ["bash"] + (["-l"] if login else []) + ["-c", shlex.quote(script)]
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

    def execute(self, command, timeout=180):
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
        self._run(f"rm -f {self.snap}")
        subprocess.run(self._ssh_cmd()[:1] + ["-o", f"ControlPath={self.control_path}", "-O", "exit",
                                              f"{self.user}@{self.host}"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--user", default="root")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--known-hosts", required=True)
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--command", default="echo hi")
    a = ap.parse_args()
    env = SSHEnvironment(a.host, a.user, a.port, a.key, a.known_hosts)
    try:
        for _ in range(3):
            env.execute(a.command)
        times = []
        ok = True
        for _ in range(a.n):
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
