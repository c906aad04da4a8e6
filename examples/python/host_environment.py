"""A host-defined environment: the runtime's terminal and file tools run
through a provider the host brings, here one that starts each command as a
local subprocess (in a process group of its own) and answers file
operations with Python's own file API.

A cloud sandbox SDK fits the same three places: ``run`` is the SDK's
"exec with streamed output" (E2B ``sandbox.commands.run(cmd, on_stdout=...)``,
Modal ``sandbox.exec("bash", "-c", script)`` iterating ``stdout``), ``kill`` its
kill or terminate, ``read_file``/``write_file``/``list_dir`` its file API, and
``cleanup(task)`` stops the task's sandbox. Approval, timeouts, output limits
and cancellation stay the runtime's.

Run: python3 examples/python/host_environment.py
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python"))

from hermes_tools import Environment, Exec, Runtime  # noqa: E402


class SubprocessEnvironment(Environment):
    """Every command a local ``bash`` subprocess; files through ``open``."""

    def __init__(self, name: str = "subproc"):
        super().__init__(name, location=f"in a subprocess of the host (environment '{name}')")
        self.procs: dict[int, subprocess.Popen] = {}
        self.lock = threading.Lock()
        # What the provider saw, for tests and curiosity.
        self.commands: list[Exec] = []
        self.kills: list[tuple[int, int]] = []
        self.file_ops: list[tuple[str, str]] = []
        self.cleanups: list = []

    def run(self, exec: Exec) -> int:
        proc = subprocess.Popen(
            exec.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        with self.lock:
            self.procs[exec.id] = proc
            self.commands.append(exec)

        def feed():
            try:
                if exec.stdin:
                    proc.stdin.write(exec.stdin)
                proc.stdin.close()
            except OSError:
                pass

        def pump(pipe, stream):
            while True:
                chunk = os.read(pipe.fileno(), 65536)
                if not chunk:
                    return
                if not exec.output(chunk, stream):  # nobody reads: stop it
                    self.kill(exec.id, signal.SIGKILL)
                    return

        threads = [threading.Thread(target=feed), threading.Thread(target=pump, args=(proc.stderr, 2))]
        for t in threads:
            t.start()
        pump(proc.stdout, 1)
        for t in threads:
            t.join()
        code = proc.wait()
        with self.lock:
            self.procs.pop(exec.id, None)
        return code

    def kill(self, exec_id: int, sig: int) -> None:
        with self.lock:
            self.kills.append((exec_id, sig))
            proc = self.procs.get(exec_id)
        if proc is not None:
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass

    def cleanup(self, task):
        self.cleanups.append(task)

    def read_file(self, task: str, path: str) -> bytes:
        self.file_ops.append(("read", path))
        with open(path, "rb") as f:
            return f.read()

    def write_file(self, task: str, path: str, data: bytes, mode) -> None:
        self.file_ops.append(("write", path))
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)

    def list_dir(self, task: str, path: str):
        self.file_ops.append(("list", path))
        with os.scandir(path) as it:
            return [(e.name, e.is_dir()) for e in it]


def main() -> None:
    env = SubprocessEnvironment()
    work = tempfile.mkdtemp(prefix="ht-host-env-")
    cfg = {
        "builtin_toolsets": ["terminal", "file"],
        "terminal": {"backend": env.name, "cwd": work},
    }
    with Runtime(cfg, environments=[env]) as rt:
        env.close()  # the runtime keeps what it needs
        print(rt.dispatch("terminal", {"command": "echo hi from $(basename $SHELL); mkdir sub; cd sub; pwd"}))
        print(rt.dispatch("terminal", {"command": "pwd"}))
        print(rt.dispatch("write_file", {"path": f"{work}/notes.txt", "content": "hello\n"}))
        print(rt.dispatch("read_file", {"path": f"{work}/notes.txt"}))
        print(json.dumps({"commands": len(env.commands), "file_ops": env.file_ops}))


if __name__ == "__main__":
    main()
